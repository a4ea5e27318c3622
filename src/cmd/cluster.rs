use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use serde::Serialize;
use textorigin_cluster as cluster;
use textorigin_cluster::log::Log;
use textorigin_cluster::{Submitted, Trimmed};

use crate::args::{overrides, ConfigArgs, DataArg, LimitArgs};
use crate::cmd::Format;

/// A sharded deployment on a NATS JetStream log (docs/SCALE-OUT.md): S shard workers
/// hold the table's bucket ranges, an aggregator stores the results in a data directory
/// the other commands read. Each piece is a process of its own, restartable at any
/// moment; `scripts/cluster.sh` runs them all on one machine.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

impl Args {
    /// A worker or a partition: a service, logging what it waits for at info.
    pub fn is_service(&self) -> bool {
        matches!(self.command, Command::Worker(_) | Command::Aggregate(_))
    }
}

#[derive(clap::Subcommand)]
enum Command {
    Init(Box<InitArgs>),
    Submit(SubmitArgs),
    Worker(WorkerArgs),
    Aggregate(AggregateArgs),
    Trim(TrimArgs),
    Status(StatusArgs),
    Union(UnionArgs),
    Credentials(CredentialsArgs),
}

/// The NATS servers, and how this process is known to them.
#[derive(clap::Args)]
struct Nats {
    /// NATS server URLs, comma-separated (a JetStream cluster: list them all).
    #[arg(long, env = "TEXTORIGIN_NATS", value_name = "URLS", default_value = "nats://127.0.0.1:4222")]
    nats: String,
    /// This process's NATS user and password: a file `cluster credentials` wrote, which
    /// only its owner may read (docs/SCALE-OUT.md, "Who may write what"). Without it
    /// the servers must take anyone.
    #[arg(long, env = "TEXTORIGIN_NATS_CREDENTIALS", value_name = "FILE")]
    nats_credentials: Option<PathBuf>,
    /// Reach the servers over TLS only, trusting the certificates this CA (a PEM file)
    /// signed.
    #[arg(long, env = "TEXTORIGIN_NATS_CA", value_name = "FILE")]
    nats_ca: Option<PathBuf>,
}

impl Nats {
    fn connect(&self, replicas: usize) -> Result<Log> {
        let credentials = self.nats_credentials.as_deref().map(cluster::auth::Credentials::read).transpose()?;
        Ok(Log::connect_as(&self.nats, replicas, &cluster::log::Access { credentials, ca: self.nats_ca.clone() })?)
    }
}

/// Write the log's users, one for each process of a deployment of S shards and P
/// partitions, each allowed to publish only what its process writes: a credentials
/// file for each (`init`, `submit`, `w<s>`, `agg` or `agg<p>`, `trim`; readable by its
/// owner only; give it with --nats-credentials) and `nats-auth.conf`, the servers'
/// authorization block (include it from each server's configuration). New passwords
/// each time: run it again, restart the servers and give the processes their new files
/// to change them.
#[derive(clap::Args)]
struct CredentialsArgs {
    /// The folder to write them into (made if need be).
    #[arg(long, value_name = "DIR")]
    dir: PathBuf,
    /// Shards of the deployment (as `cluster init --shards`).
    #[arg(long, value_name = "S")]
    shards: u32,
    /// Partitions of the deployment (as `cluster init --partitions`).
    #[arg(long, default_value_t = 1, value_name = "P")]
    partitions: u32,
    #[command(flatten)]
    format: Format,
}

/// Describe a deployment in the log (shards and configuration), make its streams, and
/// create the aggregator's data directory with the same configuration. Running it again
/// with the same description changes nothing; a different one is an error.
#[derive(clap::Args)]
struct InitArgs {
    #[command(flatten)]
    nats: Nats,
    /// The aggregator's data directory (created).
    #[command(flatten)]
    data: DataArg,
    /// Shards of the table (each a worker process).
    #[arg(long, value_name = "S")]
    shards: u32,
    /// Copies of every stream (3 on a 3-server cluster).
    #[arg(long, default_value_t = 1, value_name = "R")]
    replicas: usize,
    /// TOML file with algorithm options (as for `ingest`); flags override it.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Prepare each document once, at submission, and send each worker only its
    /// shard's selected shingles (index, fingerprint, neighbour bytes) instead of the
    /// document (docs/SCALE-OUT.md, "Preparing in the workers or at submission").
    #[arg(long)]
    prepared: bool,
    /// Partitions of the documents: P processes share the work after the
    /// table, partition p storing the documents n with (n − 1) mod P = p in DATA/p<p>;
    /// the reading commands read DATA as one data directory. One: the aggregator
    /// stores every document in DATA.
    #[arg(long, default_value_t = 1, value_name = "P")]
    partitions: u32,
    #[command(flatten)]
    flags: ConfigArgs,
}

/// Admit documents into the deployment's log, in the order given, after those already
/// there. Reads every format `ingest` reads, with `ingest`'s limits; documents `ingest`
/// would refuse (no words, over the size cap, past a compressed file's limits) are
/// reported and left out, so the ids are `ingest`'s. The size cap is at most what the
/// log's servers take in a message (their max_payload, less 64 KiB): without
/// --max-doc-bytes it is lowered to that, said on standard error; a larger one given is
/// refused before anything is submitted. A document admitted before (the same file name
/// and content, as `ingest` keys them) is left out unless --force, so submitting a file
/// twice admits its documents once.
#[derive(clap::Args)]
struct SubmitArgs {
    #[command(flatten)]
    nats: Nats,
    #[command(flatten)]
    limits: LimitArgs,
    /// Admit documents again that were admitted before (by file name and content), as
    /// `ingest --force` stores them again.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    format: Format,
    /// Files and directories, in order.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
}

/// Run one shard worker: its bucket range of the table, fed by the log. Restarted, it
/// replays the log into its table and goes on.
#[derive(clap::Args)]
struct WorkerArgs {
    #[command(flatten)]
    nats: Nats,
    /// Which shard (0 to S-1).
    #[arg(long, value_name = "I")]
    shard: u32,
    /// Stop after applying this document (default: run until killed).
    #[arg(long, value_name = "ID")]
    until: Option<u64>,
    /// At the stop, write the shard's buckets and counters here (for `cluster union`).
    #[arg(long, value_name = "FILE", requires = "until")]
    image: Option<PathBuf>,
    /// Directory of the shard's two checkpoint slots: a restart starts from the newest
    /// and replays only the log after it (without one, from the first document).
    #[arg(long, value_name = "DIR")]
    state: Option<PathBuf>,
    /// Seconds between checkpoints (at the first document boundary after them).
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
    checkpoint_secs: f64,
}

/// Run the aggregator: estimation, near-duplicates, quotations and the store, in a data
/// directory made by `cluster init`. Restarted, it recovers from the log.
#[derive(clap::Args)]
struct AggregateArgs {
    #[command(flatten)]
    nats: Nats,
    #[command(flatten)]
    data: DataArg,
    /// Stop after storing this document (default: run until killed).
    #[arg(long, value_name = "ID")]
    until: Option<u64>,
    /// The partition this process is (of `cluster init --partitions`).
    #[arg(long, default_value_t = 0, value_name = "P")]
    partition: u32,
    /// Seconds between checkpoints of the data directory (a restart replays only the
    /// documents stored after the newest).
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
    checkpoint_secs: f64,
}

/// Where each process of the deployment is: the last document it is done with (a
/// worker's last answer, the aggregator's last published estimation), how far behind
/// the log's last document that is, its rate over `--interval` seconds, and where its
/// oldest checkpoint would restart it.
#[derive(clap::Args)]
struct StatusArgs {
    #[command(flatten)]
    nats: Nats,
    /// Seconds between the two readings the rates come from.
    #[arg(long, default_value_t = 1.0, value_name = "SECS")]
    interval: f64,
    #[command(flatten)]
    format: Format,
}

/// Drop from the log what no process can need again: the messages before the oldest
/// checkpoint any worker or the aggregator (each partition) holds (each says where its
/// oldest valid checkpoint slot is after writing one). Does nothing until every process
/// has said it, nor while a partition of several cannot read the others' stores (their
/// data directories side by side in one directory, as `cluster aggregate --data` makes
/// them, or on a shared file system): it reads their older texts from the documents
/// stream. A process that lost its checkpoint directory cannot rejoin after a trim.
/// Safe to run at any time, e.g. from a timer.
#[derive(clap::Args)]
struct TrimArgs {
    #[command(flatten)]
    nats: Nats,
    #[command(flatten)]
    format: Format,
}

/// Lay shard images side by side: the table a single node would have, with its digest
/// and counters (compare with `textorigin stats --json`).
#[derive(clap::Args)]
struct UnionArgs {
    #[command(flatten)]
    format: Format,
    /// The images of all S shards.
    #[arg(required = true, value_name = "FILE")]
    images: Vec<PathBuf>,
}

pub fn run(a: Args) -> Result<ExitCode> {
    match a.command {
        Command::Init(a) => init(*a),
        Command::Submit(a) => submit(a),
        Command::Worker(a) => worker(a),
        Command::Aggregate(a) => aggregate(a),
        Command::Trim(a) => trim(a),
        Command::Status(a) => status(a),
        Command::Union(a) => union(a),
        Command::Credentials(a) => credentials(a),
    }
}

/// `cluster init`: creates the deployment, or checks that the log holds the same one.
fn init(a: InitArgs) -> Result<ExitCode> {
    anyhow::ensure!(a.shards >= 1, "--shards must be at least 1");
    // Refused settings are said before the log is reached.
    let ov = cluster::settle(overrides(a.config.as_deref(), &a.flags)?, a.prepared)?;
    anyhow::ensure!(a.partitions >= 1, "--partitions must be at least 1");
    let log = a.nats.connect(a.replicas)?;
    let meta = cluster::create(&log, &a.data.dir, a.shards, a.partitions, a.prepared, ov)?;
    eprintln!("deployment: {}", meta.describe());
    Ok(ExitCode::SUCCESS)
}

/// `cluster submit`: admits files' documents into the log, as `ingest` reads them.
fn submit(a: SubmitArgs) -> Result<ExitCode> {
    let log = a.nats.connect(1)?;
    let meta = cluster::read_meta(&log)?;
    // A document the log cannot carry would be admitted by `ingest` and not here, and
    // every id after it would differ from one node's: the limit is what the log takes.
    let mut limits = a.limits.limits()?;
    if let Some(fits) = cluster::submit::largest_document(&log).filter(|&fits| limits.doc_bytes > fits) {
        anyhow::ensure!(
            !a.limits.max_doc_bytes_given(),
            "--max-doc-bytes {} is more than the log takes in a document ({fits} bytes: the servers' max_payload \
             less {} for a record's name, fields and framing): raise max_payload in the log servers' \
             configuration (64MB at most), or give --max-doc-bytes {fits} or less (and `ingest` the same, to \
             compare with one node); nothing was submitted",
            limits.doc_bytes,
            cluster::submit::DOC_RESERVE
        );
        eprintln!(
            "note: documents of up to {fits} bytes are admitted, what the log's servers take (their max_payload); \
             `ingest --max-doc-bytes {fits}` admits the same documents"
        );
        limits.doc_bytes = fits;
    }
    let (mut admitted, mut failed, mut before) = (0u64, 0u64, 0u64);
    let last = cluster::submit(&log, &meta, &a.paths, limits, a.force, |e| match e {
        Submitted::Doc(_) => admitted += 1,
        Submitted::Before => before += 1,
        Submitted::Failed(e) => {
            failed += 1;
            eprintln!("error: {e}");
        }
        Submitted::Warning(w) => eprintln!("warning: {w}"),
        Submitted::File => {}
    })?;
    #[derive(Serialize)]
    struct Out {
        admitted: u64,
        failed: u64,
        before: u64,
        last: u64,
    }
    a.format.print(&Out { admitted, failed, before, last }, |o| {
        let before = match o.before {
            0 => String::new(),
            n => format!(", {n} admitted before (left out; --force admits them again)"),
        };
        format!("admitted {} document(s), {} failed{before}; last id {}\n", o.admitted, o.failed, o.last)
    })?;
    if admitted == 0 && failed > 0 {
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// `cluster worker`: one shard worker until stopped (or `--until`).
fn worker(a: WorkerArgs) -> Result<ExitCode> {
    let log = a.nats.connect(1)?;
    let every = seconds(a.checkpoint_secs)?;
    let checkpoints = a.state.map(|dir| cluster::worker::Checkpoints { dir, every });
    let s = cluster::worker::run(&log, a.shard, a.until, a.image.as_deref(), checkpoints.as_ref(), |seq| {
        tracing::debug!(seq, "applied")
    })?;
    eprintln!(
        "shard {}: from checkpoint #{}, applied {} document(s), {} of them replayed, {} probed ahead of an earlier one's feedback; {} bytes read, \
         {} answer bytes appended; {} checkpoint(s); {} of {} selected shingles; seconds: preparing {:.2}, table {:.2}, index {:.2}, log {:.2}; {}",
        a.shard, s.restored, s.documents, s.replayed, s.ahead, s.read_bytes, s.answer_bytes, s.checkpoints, s.probed, s.selected, s.prepare_secs, s.table_secs, s.index_secs, s.log_secs, cpu()
    );
    Ok(ExitCode::SUCCESS)
}

/// `cluster aggregate`: the aggregator, or one partition of several.
fn aggregate(a: AggregateArgs) -> Result<ExitCode> {
    let log = a.nats.connect(1)?;
    let s = cluster::aggregate::run(&log, &a.data.dir, a.partition, a.until, seconds(a.checkpoint_secs)?, |seq| {
        tracing::debug!(seq, "stored")
    })?;
    let stages: Vec<String> =
        s.times.named().iter().filter(|x| x.0 != "table").map(|(name, secs)| format!("{name} {secs:.2}")).collect();
    // A partition's: how many of its documents waited for every outcome before
    // them, and how many outcomes were read when an analysis asked for them.
    let book = s.book.map_or(String::new(), |b| {
        format!(
            "; outcomes: every one before {} document(s), {} read on demand; places read from #{}; \
             {} text(s) read from the other partitions' stores",
            b.in_full, b.on_demand, b.places_from, b.texts_from_stores
        )
    });
    eprintln!(
        "aggregator: documents stored up to #{}; seconds: reading documents {:.2}, waiting for answers {:.2}, appending feedback {:.2}, {}{book}; {}",
        s.last,
        s.docs_secs,
        s.answers_secs,
        s.feedback_secs,
        stages.join(", "),
        cpu()
    );
    Ok(ExitCode::SUCCESS)
}

/// `cluster trim`: drops from the log what no process can need again.
fn trim(a: TrimArgs) -> Result<ExitCode> {
    let log = a.nats.connect(1)?;
    #[derive(Serialize)]
    struct Out {
        /// The first document the streams still hold (0: nothing trimmed).
        kept_from: u64,
        dropped: u64,
        /// The process that has said no position yet.
        waiting_for: Option<String>,
        /// The partition that cannot read the other partitions' stores (it
        /// reads their older texts from the documents stream).
        whole_log_for: Option<String>,
        /// A position refused: its process has not done the document it names, or
        /// (a worker's) it is of another deployment.
        refused: Option<String>,
    }
    let nothing = Out { kept_from: 0, dropped: 0, waiting_for: None, whole_log_for: None, refused: None };
    let out = match cluster::trim(&log)? {
        Trimmed::Below { from, dropped } => Out { kept_from: from, dropped, ..nothing },
        Trimmed::Waiting(who) => Out { waiting_for: Some(who), ..nothing },
        Trimmed::WholeLog(who) => Out { whole_log_for: Some(who), ..nothing },
        Trimmed::Ahead { process, position, done } => Out {
            refused: Some(format!(
                "{process}'s position says it checkpointed document #{position}, but it has done only up to #{done}: \
                 a position it did not write"
            )),
            ..nothing
        },
        Trimmed::Foreign(process) => {
            Out { refused: Some(format!("{process}'s position is of another deployment's checkpoints")), ..nothing }
        }
    };
    a.format.print(&out, |o| match (&o.waiting_for, &o.whole_log_for, &o.refused) {
        (Some(who), _, _) => format!("nothing trimmed: {who} has not checkpointed yet\n"),
        (_, Some(who), _) => format!(
            "nothing trimmed: {who} cannot read the other partitions' stores (their data directories are not \
             beside its own), so it reads their older texts from the documents stream\n"
        ),
        (_, _, Some(why)) => format!("nothing trimmed: {why}\n"),
        _ => {
            format!("the log keeps documents from #{} on; {} record(s) dropped now\n", o.kept_from, o.dropped)
        }
    })?;
    if out.refused.is_some() {
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// `cluster status`: where every process is, and how fast it goes.
fn status(a: StatusArgs) -> Result<ExitCode> {
    anyhow::ensure!(a.interval > 0.0 && a.interval.is_finite(), "--interval must be a positive number of seconds");
    let log = a.nats.connect(1)?;
    let (_, before) = cluster::status(&log)?;
    std::thread::sleep(std::time::Duration::from_secs_f64(a.interval));
    let (documents, now) = cluster::status(&log)?;
    #[derive(Serialize)]
    struct Row {
        process: String,
        done: u64,
        lag: u64,
        /// Documents a second over the interval.
        rate: f64,
        checkpoint: Option<u64>,
        /// It reads the other partitions' older texts from the documents stream
        /// (a partition that cannot read their stores): `cluster trim` keeps the
        /// whole log.
        whole_log: bool,
    }
    #[derive(Serialize)]
    struct Out {
        documents: u64,
        processes: Vec<Row>,
    }
    let processes = now
        .into_iter()
        .zip(before)
        .map(|(p, b)| Row {
            lag: p.lag,
            rate: p.done.saturating_sub(b.done) as f64 / a.interval,
            process: p.process,
            done: p.done,
            checkpoint: p.checkpoint,
            whole_log: p.whole_log,
        })
        .collect();
    a.format.print(&Out { documents, processes }, |o| {
        let mut s =
            format!("documents in the log: {}\nprocess        done       lag    docs/s  checkpoint\n", o.documents);
        for r in &o.processes {
            let mut cp = r.checkpoint.map_or("none yet".to_string(), |c| format!("#{c}"));
            if r.whole_log {
                cp += " (needs the whole log)";
            }
            s += &format!("{:<8} {:>10} {:>9} {:>9.1}  {cp}\n", r.process, r.done, r.lag, r.rate);
        }
        s
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `cluster credentials`: the log's users and their credentials files.
fn credentials(a: CredentialsArgs) -> Result<ExitCode> {
    anyhow::ensure!(a.shards >= 1 && a.partitions >= 1, "--shards and --partitions must be at least 1");
    let files = cluster::auth::write(&a.dir, a.shards, a.partitions)?;
    #[derive(Serialize)]
    struct Out {
        files: Vec<PathBuf>,
    }
    a.format.print(&Out { files }, |o| {
        let mut s = String::new();
        for f in &o.files {
            s += &format!("wrote {}\n", f.display());
        }
        s + &format!(
            "include {} from each log server's configuration; give each process its credentials file \
             (--nats-credentials)\n",
            cluster::auth::SERVER_FILE
        )
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `cluster union`: the shards' table images side by side, as one table.
fn union(a: UnionArgs) -> Result<ExitCode> {
    let paths: Vec<&std::path::Path> = a.images.iter().map(PathBuf::as_path).collect();
    let table = cluster::worker::union(&paths).context("cannot lay the shard images side by side")?;
    #[derive(Serialize)]
    struct Out {
        table_digest: String,
        #[serde(flatten)]
        stats: textorigin_core::table::TableStats,
    }
    let out = Out { table_digest: format!("{:016x}", table.digest()), stats: table.stats() };
    a.format.print(&out, |o| format!("table digest {} over {} document(s)\n", o.table_digest, o.stats.documents))?;
    Ok(ExitCode::SUCCESS)
}

/// `--checkpoint-secs` as a duration.
fn seconds(s: f64) -> Result<std::time::Duration> {
    anyhow::ensure!(s.is_finite() && s >= 0.0, "--checkpoint-secs must be a number of seconds, not {s}");
    Ok(std::time::Duration::from_secs_f64(s))
}

/// The process's CPU seconds since it started (`cpu N.NN s`, what `scripts/cluster-cpu.sh`
/// reads), or that the system does not say.
fn cpu() -> String {
    textorigin_store::sys::cpu_seconds().map_or_else(|| "cpu unknown".to_string(), |c| format!("cpu {c:.2} s"))
}
