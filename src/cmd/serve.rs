use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::{Context, Result};
use textorigin_server::daemon::{self, ServeOptions};
use textorigin_server::http;

use crate::args::{overrides, ConfigArgs, DataArg, LimitArgs, TakeOverArgs};

/// Run the daemon: take documents from a spool directory as they arrive (see the
/// README's spool contract), keep the table checkpointed, recover after a crash.
/// SIGTERM or SIGINT stops intake, checkpoints and exits 0 (a document still being
/// applied 2 s later is abandoned, to be applied at the next start). With --http, also serve
/// the inspector's views over HTTP (read-only).
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    data: DataArg,
    /// Spool directory (default DIR/spool): producers write into tmp/ and rename
    /// into new/.
    #[arg(long, value_name = "PATH")]
    spool: Option<PathBuf>,
    /// Move processed files to done/ instead of removing them.
    #[arg(long)]
    keep: bool,
    /// Limits of an input: a document over them fails, and its file goes to
    /// failed/ with the reason.
    #[command(flatten)]
    limits: LimitArgs,
    /// A `published_at` (or `date`) that is not a date (RFC 3339, YYYY-MM-DD, YYYY
    /// or Unix seconds): `fail` the document (the default: its file goes to failed/
    /// with the reason), or store it as `undated` (it then takes its arrival time, its
    /// date kept as text).
    #[arg(long, value_name = "POLICY", default_value = "fail", value_parser = ["fail", "undated"])]
    bad_dates: String,
    #[command(flatten)]
    take_over: TakeOverArgs,
    /// Checkpoint after this many documents [default: 1000] ...
    #[arg(long, value_name = "N")]
    checkpoint_docs: Option<u64>,
    /// ... or after this many seconds with new documents [default: 30].
    #[arg(long, value_name = "SECS")]
    checkpoint_secs: Option<u64>,
    /// Rescan the spool at least this often (seconds), whatever the watcher says
    /// [default: 5].
    #[arg(long, value_name = "SECS")]
    rescan_secs: Option<u64>,
    /// Write the log here instead of standard error; SIGHUP reopens it (rotation).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// TOML file with algorithm options for a new data directory, and in its table
    /// `[daemon]` the daemon's own settings, named as these flags with `_` for `-`
    /// (`spool`, `keep`, `log`, `http`, `http_token`, `http_open`, `http_host` (a
    /// list), `http_workers`, `http_max_query_bytes`, `checkpoint_docs`,
    /// `checkpoint_secs`, `rescan_secs`); a flag given wins over the file.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Serve the inspector over HTTP on this address (e.g. 127.0.0.1:8080): the JSON
    /// API under /api/documents (GET to read, POST to submit through the spool),
    /// POST /api/query, /metrics, and HTML pages at /, /documents/#ID (%23ID in a URL)
    /// and /report. Off by default; an address that is not loopback needs --http-token.
    #[arg(long, value_name = "ADDR")]
    http: Option<std::net::SocketAddr>,
    /// A file holding the token every HTTP request must bring (`Authorization: Bearer
    /// TOKEN`); surrounding white space is ignored.
    #[arg(long, value_name = "FILE")]
    http_token: Option<PathBuf>,
    /// Serve submissions (POST /api/documents) without a token: on a machine where
    /// every local user and every web page a browser opens is trusted. Without it,
    /// submissions need --http-token, also on loopback.
    #[arg(long, conflicts_with = "http_token")]
    http_open: bool,
    /// A further name the server answers to (the `Host` of requests, with or without
    /// a port; repeatable): requests to other names get 421 and pages of other sites
    /// 403 (DNS rebinding). The address it listens on, and localhost on loopback, are
    /// always answered to.
    #[arg(long, value_name = "NAME")]
    http_host: Vec<String>,
    /// HTTP requests handled at once (each connection is read on a thread of its own,
    /// within deadlines; at most 256 are open) [default: 4].
    #[arg(long, value_name = "N")]
    http_workers: Option<usize>,
    /// Largest body of POST /api/query, in bytes (also what a compressed one may
    /// decode to): a query is analysed in memory, one at a time, so this bounds what
    /// queries hold (a 64 MB query took the daemon to 4.2 GB) [default: 1MiB].
    #[arg(long, value_name = "SIZE")]
    http_max_query_bytes: Option<String>,
    /// Bytes of text under analysis at once, shared by the spool's documents (the
    /// reader waits) and HTTP queries (answered 503 when theirs are not free); a
    /// document larger than it is analysed alone [default: 256MiB].
    #[arg(long, value_name = "SIZE")]
    memory_budget: Option<String>,
    #[command(flatten)]
    flags: ConfigArgs,
}

/// The `[daemon]` table of a `--config` file: the flags of the same names.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DaemonFile {
    spool: Option<PathBuf>,
    keep: Option<bool>,
    log: Option<PathBuf>,
    http: Option<std::net::SocketAddr>,
    http_token: Option<PathBuf>,
    http_open: Option<bool>,
    http_host: Option<Vec<String>>,
    http_workers: Option<usize>,
    http_max_query_bytes: Option<String>,
    memory_budget: Option<String>,
    checkpoint_docs: Option<u64>,
    checkpoint_secs: Option<u64>,
    rescan_secs: Option<u64>,
}

/// The daemon's settings: each flag given, else the `[daemon]` table's value, else
/// the default (a service's settings could not be kept in its TOML file).
#[derive(Debug, Clone)]
struct Settled {
    spool: PathBuf,
    log: Option<PathBuf>,
    keep: bool,
    http: Option<std::net::SocketAddr>,
    http_token: Option<PathBuf>,
    http_open: bool,
    http_host: Vec<String>,
    http_workers: usize,
    http_max_query_bytes: u64,
    memory_budget: u64,
    checkpoint_docs: u64,
    checkpoint_secs: u64,
    rescan_secs: u64,
}

/// The `[daemon]` table of `--config` (an empty one without a file or a table).
fn daemon_file(a: &Args) -> Result<DaemonFile> {
    let Some(path) = &a.config else { return Ok(DaemonFile::default()) };
    let table = crate::args::config_daemon_table(path)?;
    table.map_or(Ok(DaemonFile::default()), |t| {
        t.try_into().with_context(|| format!("config file {}: table [daemon]", path.display()))
    })
}

/// Where the daemon writes its log: `--log`, else the `[daemon]` table's `log`.
pub fn log_file(a: &Args) -> Result<Option<PathBuf>> {
    Ok(a.log.clone().or(daemon_file(a)?.log))
}

fn settle(a: &Args) -> Result<Settled> {
    let f = daemon_file(a)?;
    let s = Settled {
        spool: a.spool.clone().or(f.spool).unwrap_or_else(|| a.data.dir.join("spool")),
        log: a.log.clone().or(f.log),
        keep: a.keep || f.keep.unwrap_or(false),
        http: a.http.or(f.http),
        http_token: a.http_token.clone().or(f.http_token),
        http_open: a.http_open || (a.http_token.is_none() && f.http_open.unwrap_or(false)),
        http_host: if a.http_host.is_empty() { f.http_host.unwrap_or_default() } else { a.http_host.clone() },
        http_workers: a.http_workers.or(f.http_workers).unwrap_or(4),
        http_max_query_bytes: crate::args::size(
            a.http_max_query_bytes.as_deref().or(f.http_max_query_bytes.as_deref()).unwrap_or("1MiB"),
        )
        .context("--http-max-query-bytes")?,
        memory_budget: crate::args::size(a.memory_budget.as_deref().or(f.memory_budget.as_deref()).unwrap_or("256MiB"))
            .context("--memory-budget")?,
        checkpoint_docs: a.checkpoint_docs.or(f.checkpoint_docs).unwrap_or(1000),
        checkpoint_secs: a.checkpoint_secs.or(f.checkpoint_secs).unwrap_or(30),
        rescan_secs: a.rescan_secs.or(f.rescan_secs).unwrap_or(5),
    };
    let http_given = s.http_token.is_some()
        || s.http_open
        || !s.http_host.is_empty()
        || a.http_workers.is_some()
        || a.http_max_query_bytes.is_some();
    anyhow::ensure!(s.http.is_some() || !http_given, "the --http-* settings need --http ADDR (or `http` in [daemon])");
    anyhow::ensure!(!(s.http_open && s.http_token.is_some()), "--http-open and --http-token exclude each other");
    Ok(s)
}

pub fn run(a: Args) -> Result<()> {
    // A repair that lost documents' texts or results leaves its list: no daemon serves
    // such a store without a word.
    let losses = a.data.dir.join(textorigin_store::storage::datadir::REPAIR_LOSSES);
    if losses.exists() {
        anyhow::bail!(
            "{}'s store lost data in a repair ({} names what): restore a backup (`textorigin restore`), or remove that file to serve what is left",
            a.data.dir.display(),
            losses.display()
        );
    }
    let overrides = overrides(a.config.as_deref(), &a.flags)?;
    let s = settle(&a)?;
    let opt = ServeOptions {
        spool: s.spool.clone(),
        live: s.live(),
        limits: a.limits.limits()?,
        policy: a.take_over.policy(&a.bad_dates)?,
        batch: 64,
        share: s.http.map(|_| textorigin_server::share::StoreShare::default()),
        applying: Arc::default(),
        budget: textorigin_server::budget::MemoryBudget::new(s.memory_budget),
    };
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(sig, Arc::clone(&stop)).context("cannot install signal handlers")?;
    }
    daemon::stop_within(Arc::clone(&stop), Arc::clone(&opt.applying));
    let hup = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGHUP, Arc::clone(&hup))
        .context("cannot install signal handlers")?;
    let server = match s.http {
        Some(addr) => {
            let token = s.http_token.as_deref().map(read_token).transpose()?;
            textorigin_server::layout::create(&opt.spool)?;
            let share = opt.share.clone().expect("made with --http");
            let opts = http::HttpOptions {
                addr,
                token,
                workers: s.http_workers,
                max_query_bytes: s.http_max_query_bytes,
                budget: Arc::clone(&opt.budget),
                spool: opt.spool.clone(),
                limits: opt.limits,
                share,
                hosts: s.http_host.clone(),
                open: s.http_open,
                undated_bad_dates: opt.policy.undated_bad_dates,
            };
            let server = http::start(&a.data.dir, &opts, Arc::clone(&stop))?;
            eprintln!("http inspector on http://{}/", server.addr());
            Some(server)
        }
        None => None,
    };
    let mut reload = Reload { args: &a, settled: s, server: server.as_ref() };
    let served = daemon::serve(&a.data.dir, &overrides, &opt, Arc::clone(&stop), hup, &mut |live| reload.run(live));
    // The HTTP server stops with the daemon, whatever ended it, and lets go of the store.
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    if let Some(s) = server {
        s.join();
    }
    if let Some(share) = &opt.share {
        share.clear();
    }
    if let Err(e) = &served {
        // Also in the log file (the daemon exited on a full disk with
        // nothing logged; the message went to standard error only).
        tracing::error!(error = %textorigin_store::error::chain(e), "the daemon stops on an error");
    }
    served?;
    Ok(())
}

impl Settled {
    /// The settings the daemon's loop follows as they change.
    fn live(&self) -> daemon::Live {
        daemon::Live {
            keep: self.keep,
            checkpoint_docs: self.checkpoint_docs,
            checkpoint_secs: self.checkpoint_secs,
            rescan_secs: self.rescan_secs,
        }
    }

    /// Each setting that differs in `new`: its name, old and new values (as written in
    /// the log), and whether it can change while the daemon runs.
    fn changes(&self, new: &Settled) -> Vec<(&'static str, String, String, bool)> {
        let mut out = Vec::new();
        let mut differ = |name, old: String, new: String, live| {
            if old != new {
                out.push((name, old, new, live));
            }
        };
        let path = |p: &Option<PathBuf>| p.as_ref().map_or("(none)".to_string(), |p| p.display().to_string());
        differ("keep", self.keep.to_string(), new.keep.to_string(), true);
        differ("checkpoint_docs", self.checkpoint_docs.to_string(), new.checkpoint_docs.to_string(), true);
        differ("checkpoint_secs", self.checkpoint_secs.to_string(), new.checkpoint_secs.to_string(), true);
        differ("rescan_secs", self.rescan_secs.to_string(), new.rescan_secs.to_string(), true);
        // Another token file is read at once; adding or removing one changes who may
        // submit, and waits for a restart.
        let token_live = self.http_token.is_some() && new.http_token.is_some();
        differ("http_token", path(&self.http_token), path(&new.http_token), token_live);
        differ("spool", self.spool.display().to_string(), new.spool.display().to_string(), false);
        differ("log", path(&self.log), path(&new.log), false);
        differ("http", format!("{:?}", self.http), format!("{:?}", new.http), false);
        differ("http_open", self.http_open.to_string(), new.http_open.to_string(), false);
        differ("http_host", self.http_host.join(","), new.http_host.join(","), false);
        differ("http_workers", self.http_workers.to_string(), new.http_workers.to_string(), false);
        differ(
            "http_max_query_bytes",
            self.http_max_query_bytes.to_string(),
            new.http_max_query_bytes.to_string(),
            false,
        );
        differ("memory_budget", self.memory_budget.to_string(), new.memory_budget.to_string(), false);
        out
    }

    /// Takes `new`'s value of each setting that can change while the daemon runs.
    fn follow(&mut self, new: &Settled) {
        self.keep = new.keep;
        self.checkpoint_docs = new.checkpoint_docs;
        self.checkpoint_secs = new.checkpoint_secs;
        self.rescan_secs = new.rescan_secs;
        if self.http_token.is_some() && new.http_token.is_some() {
            self.http_token.clone_from(&new.http_token);
        }
    }
}

/// SIGHUP: the log file reopened, the settings read again from the command line and
/// the `[daemon]` table (those that can change live are followed at once, the others
/// logged as waiting for a restart), and the token file read again (a changed token
/// signs out the browsers of the old one; an unreadable file keeps the old token).
struct Reload<'a> {
    args: &'a Args,
    /// The settings in force.
    settled: Settled,
    server: Option<&'a http::HttpServer>,
}

impl Reload<'_> {
    fn run(&mut self, live: &mut daemon::Live) {
        if crate::log::reopen() {
            tracing::info!("log file reopened");
        }
        match settle(self.args) {
            Err(e) => {
                tracing::warn!(error = %format!("{e:#}"), "settings not read again; those in force stay")
            }
            Ok(new) => {
                let changes = self.settled.changes(&new);
                for (setting, from, to, now) in &changes {
                    if *now {
                        tracing::info!(setting, from, to, "setting changed");
                    } else {
                        tracing::warn!(
                            setting,
                            from,
                            to,
                            "setting changed in the config file: it takes effect at the next start"
                        );
                    }
                }
                if changes.is_empty() {
                    tracing::info!("settings read again: unchanged");
                }
                self.settled.follow(&new);
                *live = self.settled.live();
            }
        }
        if let (Some(server), Some(path)) = (self.server, &self.settled.http_token) {
            match read_token(path).map(|t| server.set_token(t)) {
                Ok(true) => {
                    tracing::info!(file = %path.display(), "http token changed: the old token's sessions are ended")
                }
                Ok(false) => tracing::info!(file = %path.display(), "http token read again: unchanged"),
                Err(e) => tracing::warn!(error = %format!("{e:#}"), "http token not reloaded; the old one stays"),
            }
        }
    }
}

/// The token in `path` (`--http-token`), trimmed; an empty file is an error.
fn read_token(path: &std::path::Path) -> Result<String> {
    let t =
        std::fs::read_to_string(path).with_context(|| format!("--http-token {}", path.display()))?.trim().to_string();
    anyhow::ensure!(!t.is_empty(), "--http-token {}: the file holds no token", path.display());
    Ok(t)
}
