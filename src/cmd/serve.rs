use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::{Context, Result};
use textorigin_server::daemon::{self, ServeOptions};
use textorigin_server::http;

use crate::args::{overrides, ConfigArgs, DataArg, LimitArgs, TakeOverArgs};

/// Run the daemon: take documents from a spool directory as they arrive (see the
/// README's spool contract), keep the table checkpointed, recover after a crash.
/// SIGTERM or SIGINT stops intake, checkpoints and exits 0. With --http, also serve
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
    /// Checkpoint after this many documents ...
    #[arg(long, default_value_t = 1000)]
    checkpoint_docs: u64,
    /// ... or after this many seconds with new documents.
    #[arg(long, default_value_t = 30)]
    checkpoint_secs: u64,
    /// Rescan the spool at least this often (seconds), whatever the watcher says.
    #[arg(long, default_value_t = 5)]
    rescan_secs: u64,
    /// Write the log here instead of standard error; SIGHUP reopens it (rotation).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// TOML file with algorithm options for a new data directory.
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
    #[arg(long, value_name = "FILE", requires = "http")]
    http_token: Option<PathBuf>,
    /// Serve submissions (POST /api/documents) without a token: on a machine where
    /// every local user and every web page a browser opens is trusted. Without it,
    /// submissions need --http-token, also on loopback.
    #[arg(long, requires = "http", conflicts_with = "http_token")]
    http_open: bool,
    /// A further name the server answers to (the `Host` of requests, with or without
    /// a port; repeatable): requests to other names get 421 and pages of other sites
    /// 403 (DNS rebinding). The address it listens on, and localhost on loopback, are
    /// always answered to.
    #[arg(long, value_name = "NAME", requires = "http")]
    http_host: Vec<String>,
    /// HTTP requests handled at once (each connection is read on a thread of its own,
    /// within deadlines; at most 256 are open).
    #[arg(long, default_value_t = 4, value_name = "N", requires = "http")]
    http_workers: usize,
    #[command(flatten)]
    flags: ConfigArgs,
}

pub fn run(a: Args) -> Result<()> {
    let overrides = overrides(a.config.as_deref(), &a.flags)?;
    let opt = ServeOptions {
        spool: a.spool.unwrap_or_else(|| a.data.dir.join("spool")),
        keep: a.keep,
        limits: a.limits.limits()?,
        undated_bad_dates: a.bad_dates == "undated",
        take_over: a.take_over.ways(),
        revision_budget: a.take_over.budget()?,
        checkpoint_docs: a.checkpoint_docs,
        checkpoint_secs: a.checkpoint_secs,
        rescan_secs: a.rescan_secs,
        batch: 64,
        share: a.http.map(|_| daemon::StoreShare::default()),
    };
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(sig, Arc::clone(&stop)).context("cannot install signal handlers")?;
    }
    let hup = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGHUP, Arc::clone(&hup))
        .context("cannot install signal handlers")?;
    let reopen = || {
        if crate::log::reopen() {
            tracing::info!("log file reopened");
        }
    };
    let server = match a.http {
        Some(addr) => {
            let token = match &a.http_token {
                Some(path) => {
                    let t = std::fs::read_to_string(path)
                        .with_context(|| format!("--http-token {}", path.display()))?
                        .trim()
                        .to_string();
                    anyhow::ensure!(!t.is_empty(), "--http-token {}: the file holds no token", path.display());
                    Some(t)
                }
                None => None,
            };
            for sub in ["tmp", "new"] {
                let d = opt.spool.join(sub);
                std::fs::create_dir_all(&d).with_context(|| format!("cannot create {}", d.display()))?;
            }
            let share = opt.share.clone().expect("made with --http");
            let opts = http::HttpOptions {
                addr,
                token,
                workers: a.http_workers,
                spool: opt.spool.clone(),
                limits: opt.limits,
                share,
                hosts: a.http_host.clone(),
                open: a.http_open,
                undated_bad_dates: opt.undated_bad_dates,
            };
            let server = http::start(&a.data.dir, &opts, Arc::clone(&stop))?;
            eprintln!("http inspector on http://{}/", server.addr());
            Some(server)
        }
        None => None,
    };
    let served = daemon::serve(&a.data.dir, &overrides, &opt, Arc::clone(&stop), hup, &reopen);
    // The HTTP server stops with the daemon, whatever ended it, and lets go of the store.
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    if let Some(s) = server {
        s.join();
    }
    if let Some(share) = &opt.share {
        share.clear();
    }
    served?;
    Ok(())
}
