//! textorigin's sharded deployment (`docs/SCALE-OUT.md`): S shard workers hold the
//! table's bucket ranges ([`textorigin_core::shard`]), an aggregator runs estimation and
//! everything after it into the result store the inspector reads, and an existing log,
//! NATS JetStream, orders and keeps everything they exchange. Every process is a client
//! of the log and can be killed at any moment: it restarts from the log.
//!
//! - [`log`]: the log, a blocking facade over `async-nats` with exactly-once appends.
//! - [`wire`]: the streams and their messages.
//! - [`init`] and [`submit`]: a deployment's description, and admitting documents.
//! - [`worker`]: a shard worker, [`aggregate`]: the aggregator.

pub mod aggregate;
pub mod book;
pub mod log;
pub mod searched;
pub mod wire;
pub mod worker;

use std::path::PathBuf;

use textorigin_core::engine::Engine;
use textorigin_core::index::{IndexShape, IndexWork};
use textorigin_core::shard::split;
use textorigin_store::ingest::{inputs, Input};

use crate::log::{Log, LogError};
use crate::searched::Searched;
use crate::wire::{
    decode, encode, feedback_stream, hits_stream, hits_subjects, items_stream, lookups_stream, partition_name,
    position_subject, process_name, results_stream, subject, Doc, Items, Lookups, Meta, Position, WireError, DOCS,
    META, POSITIONS,
};

/// Errors of the deployment's processes.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error(transparent)]
    Log(#[from] LogError),
    #[error(transparent)]
    Wire(#[from] WireError),
    #[error(transparent)]
    Shard(#[from] textorigin_core::shard::ShardError),
    #[error(transparent)]
    DataDir(#[from] textorigin_store::storage::datadir::DataDirError),
    #[error(transparent)]
    Params(#[from] textorigin_core::table::ParamsError),
    #[error(transparent)]
    Checkpoint(#[from] textorigin_store::storage::checkpoint::CheckpointError),
    #[error(transparent)]
    Index(#[from] textorigin_core::index::IndexTooSmall),
    #[error("the log has no deployment yet: run `textorigin cluster init` first")]
    NoMeta,
    #[error("the log's deployment differs from the one asked for.\n  in the log: {stored}\n  asked for:  {requested}")]
    MetaDiffers { stored: String, requested: String },
    #[error("{what} is out of step: expected document #{want}, got #{got}")]
    OutOfStep { what: &'static str, want: u64, got: u64 },
    #[error("shard {shard}: {source}")]
    File { shard: u32, source: std::io::Error },
    #[error("shard image {path}: {source}")]
    Image { path: PathBuf, source: std::io::Error },
    #[error("{what}: {source}")]
    Io { what: &'static str, source: std::io::Error },
    #[error("partition {partition}: the deployment has {partitions} partition(s)")]
    NoPartition { partition: u32, partitions: u32 },
    #[error(
        "document #{seq}'s outcome revises results, read on demand while document #{analysing} was analysed: \
         only a document published before an earlier arrival revises, and those are applied before"
    )]
    RevisedOnDemand { seq: u64, analysing: u64 },
    #[error(
        "document #{seq}: its text was trimmed from the documents stream and is not in partition {partition}'s store at {}: \
         `cluster trim` drops texts only when every partition can read the others' stores",
        path.display()
    )]
    TextGone { seq: u64, partition: u32, path: PathBuf },
}

type Result<T> = std::result::Result<T, ClusterError>;

/// Makes the deployment's streams (the description, the documents, one answer stream
/// and one lookups stream per shard, one feedback stream per partition, and one stream
/// of selected shingles per shard when documents are prepared at submission) and writes
/// its description, or checks that the log holds the same one.
pub fn init(log: &Log, meta: &Meta) -> Result<()> {
    log.create_stream(META, &subject(META))?;
    match log.get(META, 1)? {
        Some(bytes) => {
            let stored: Meta = decode(&bytes, "deployment description")?;
            if stored != *meta {
                return Err(ClusterError::MetaDiffers { stored: stored.describe(), requested: meta.describe() });
            }
        }
        None => log.append(META, &subject(META), 1, &encode(meta))?,
    }
    let results = if meta.partitions > 1 { meta.partitions } else { 0 };
    let others = (0..meta.shards)
        .map(lookups_stream)
        .chain((0..meta.partitions).map(feedback_stream))
        .chain((0..results).map(results_stream))
        .map(with_subject);
    for (s, subjects) in document_streams(meta).into_iter().chain(others) {
        log.create_stream(&s, &subjects)?;
    }
    log.create_latest_stream(POSITIONS, &subject(POSITIONS))?;
    Ok(())
}

/// The streams whose message `n` is about document `n`, with the subjects each holds:
/// the documents, the shards' answers (a subject per partition, `wire::hits_subjects`)
/// and (prepared at submission) their shingles.
fn document_streams(meta: &Meta) -> Vec<(String, String)> {
    let items = if meta.prepared { meta.shards } else { 0 };
    [with_subject(DOCS.to_string())]
        .into_iter()
        .chain((0..meta.shards).map(|s| (hits_stream(s), hits_subjects(s))))
        .chain((0..items).map(items_stream).map(with_subject))
        .collect()
}

/// A stream that holds its own subject only, with it.
fn with_subject(stream: String) -> (String, String) {
    let subjects = subject(&stream);
    (stream, subjects)
}

/// Says where the process named `process` (a worker, the aggregator or a partition:
/// `process_name`, `partition_name`) can restart from, after it wrote a checkpoint slot
/// in `dir`: the oldest of its valid slots for `identity` (the deployment's, or the
/// aggregator's or partition's store's; `checkpoint::oldest_valid_seq`), or `bound`
/// when that is earlier (a partition's book, written with the slot, reads places and
/// outcomes from after it: `Book::bound`); `whole_log` when it reads older texts from
/// the documents stream (a partition that cannot read every other partition's store).
pub fn publish_position(
    log: &Log,
    process: &str,
    dir: &std::path::Path,
    identity: u64,
    bound: u64,
    whole_log: bool,
) -> Result<()> {
    match textorigin_store::storage::checkpoint::oldest_valid_seq(dir, identity) {
        Some(seq) => {
            let position = Position { seq: seq.min(bound), whole_log, identity };
            Ok(log.put_latest(&position_subject(process), &encode(&position))?)
        }
        None => Ok(()),
    }
}

/// What [`trim`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trimmed {
    /// The streams hold no message before `from` any more (`dropped` went now).
    Below { from: u64, dropped: u64 },
    /// Nothing: this process has said no position yet (it has no checkpoint, so it
    /// would replay from the first document).
    Waiting(String),
    /// Nothing: this partition cannot read every other partition's store, so it reads
    /// their older texts from the documents stream.
    WholeLog(String),
}

/// Drops from the log what no process can need again: the messages before the oldest
/// position any process has said (where the oldest of its checkpoint slots is, or a
/// partition's book if that is earlier), in every stream but the description. Needs a
/// position from every worker and partition (the aggregator), and, with several
/// partitions, every partition able to read the others' stores (it reads the older
/// texts of their documents there); a process that lost its checkpoints cannot rejoin
/// after a trim.
pub fn trim(log: &Log) -> Result<Trimmed> {
    let meta = read_meta(log)?;
    log.create_latest_stream(POSITIONS, &subject(POSITIONS))?;
    let mut from = u64::MAX;
    let names =
        (0..meta.shards).map(|s| process_name(Some(s))).chain((0..meta.partitions).map(|p| partition_name(&meta, p)));
    for name in names {
        match checkpoint_position(log, &name)? {
            Some(Position { whole_log: true, .. }) => return Ok(Trimmed::WholeLog(name)),
            Some(Position { seq, .. }) => from = from.min(seq),
            None => return Ok(Trimmed::Waiting(name)),
        }
    }
    let mut dropped = 0;
    for (s, _) in document_streams(&meta) {
        dropped += log.purge_before(&s, from + 1)?;
    }
    for p in 0..meta.partitions {
        dropped += log.purge_before(&feedback_stream(p), meta.first_owned_from(p, from + 1))?;
        if meta.partitions > 1 {
            // The partitions' books have applied the outcomes before (their positions
            // are no later than that).
            dropped += log.purge_before(&results_stream(p), meta.first_owned_from(p, from + 1))?;
        }
    }
    // The lookups of the revisions caused before: every shard wrote them (its
    // checkpoint is past them), and no restart reads them again.
    let k = lookups_position(log, from + 1)?;
    for s in 0..meta.shards {
        dropped += log.purge_before(&lookups_stream(s), k)?;
    }
    Ok(Trimmed::Below { from: from + 1, dropped })
}

/// The message of the lookups streams that answers the revisions caused by document
/// `cause`: the first whose cause is not before it (the streams' causes ascend; every
/// shard's stream has the same messages), or the next one to come.
pub(crate) fn lookups_position(log: &Log, cause: u64) -> Result<u64> {
    let stream = lookups_stream(0);
    let (mut lo, mut hi) = (log.first_seq(&stream)?.max(1), log.last_seq(&stream)? + 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let bytes =
            log.get(&stream, mid)?.ok_or(ClusterError::OutOfStep { what: "a lookups stream", want: mid, got: 0 })?;
        if decode::<Lookups>(&bytes, "shard lookups")?.cause < cause {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// Where one process of the deployment is (issue 37's `cluster status`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ProcessAt {
    /// `w<s>` for shard worker s, `agg` for the aggregator (`agg<p>` for partition `p`
    /// of several).
    pub process: String,
    /// The last document it is done with: a worker's last answer, the aggregator's
    /// last feedback (the document's estimation, published after its table phases).
    pub done: u64,
    /// The documents in the log it has still to do (a partition's: those it owns).
    pub lag: u64,
    /// The document its oldest checkpoint slot holds (where it would restart); none
    /// before its first checkpoint.
    pub checkpoint: Option<u64>,
    /// Whether it said it needs the whole documents stream whatever its slots hold: a
    /// partition of several that cannot read every other partition's store (it reads
    /// their older texts there), for which `cluster trim` keeps the whole log.
    pub whole_log: bool,
}

/// Where every process of the deployment is, and the last document in the log.
pub fn status(log: &Log) -> Result<(u64, Vec<ProcessAt>)> {
    let meta = read_meta(log)?;
    log.create_latest_stream(POSITIONS, &subject(POSITIONS))?;
    let docs = log.last_seq(DOCS)?;
    let mut out = Vec::new();
    for s in 0..meta.shards {
        let done = log.last_seq(&hits_stream(s))?;
        let checkpoint = checkpoint_position(log, &process_name(Some(s)))?.map(|p| p.seq);
        let lag = docs.saturating_sub(done);
        out.push(ProcessAt { process: process_name(Some(s)), done, lag, checkpoint, whole_log: false });
    }
    for p in 0..meta.partitions {
        let k = log.last_seq(&feedback_stream(p))?;
        let lag = (meta.first_owned_from(p, docs + 1) - 1).saturating_sub(k);
        let position = checkpoint_position(log, &partition_name(&meta, p))?;
        let (checkpoint, whole_log) = (position.map(|p| p.seq), position.is_some_and(|p| p.whole_log));
        out.push(ProcessAt { process: partition_name(&meta, p), done: meta.owned(p, k), lag, checkpoint, whole_log });
    }
    Ok((docs, out))
}

/// Where the process named `process` can restart from, as it said in `TXO_POSITIONS`
/// ([`publish_position`]; the caller has made the stream); none before its first
/// checkpoint.
pub(crate) fn checkpoint_position(log: &Log, process: &str) -> Result<Option<Position>> {
    Ok(log.latest(POSITIONS, &position_subject(process))?.map(|b| decode(&b, "position")).transpose()?)
}

/// The deployment's description.
pub fn read_meta(log: &Log) -> Result<Meta> {
    log.create_stream(META, &subject(META))?;
    let bytes = log.get(META, 1)?.ok_or(ClusterError::NoMeta)?;
    Ok(decode(&bytes, "deployment description")?)
}

/// What happened to an input of [`submit`], in input order.
#[derive(Debug)]
pub enum Submitted {
    /// A file was read (or could not be).
    File,
    /// Document `id` was admitted.
    Doc(u64),
    /// A document's warning (e.g. invalid UTF-8 replaced).
    Warning(String),
    /// A file or document was not admitted, and why.
    Failed(String),
}

/// Admits the documents of `paths` into the log after those already there, in order,
/// as `ingest` reads them; the ones `ingest` would refuse (no words, a publication date
/// that is not one) are reported and
/// left out, so that document ids are the ones `ingest` gives. Where documents are
/// prepared at submission ([`Meta::prepared`]) each document's selected shingles go to
/// their shards' streams after it, and a submission that was cut off between the two
/// is completed first (every append is exactly once).
pub fn submit(
    log: &Log,
    meta: &Meta,
    paths: &[PathBuf],
    max_doc_bytes: u64,
    mut event: impl FnMut(Submitted),
) -> Result<u64> {
    let mut engine = Engine::new(meta.config.clone());
    let mut last = log.last_seq(DOCS)?;
    // Arrival times never go back, across submissions too.
    let mut arrived_ms = match last {
        0 => 0,
        _ => Doc::decode(&log.get(DOCS, last)?.ok_or(ClusterError::NoMeta)?)?.arrived_ms,
    };
    let docs_subject = subject(DOCS);
    let shards = meta.prepared.then(|| Splitter::new(meta)).transpose()?;
    if let Some(s) = &shards {
        s.catch_up(log, &mut engine, last)?;
    }
    for input in inputs(paths, max_doc_bytes) {
        let doc = match input {
            Input::File(f) => {
                event(Submitted::File);
                if let Err(e) = f {
                    event(Submitted::Failed(e.to_string()));
                }
                continue;
            }
            Input::Doc(Err(e)) => {
                event(Submitted::Failed(e.to_string()));
                continue;
            }
            Input::Doc(Ok(doc)) => doc,
        };
        for w in &doc.warnings {
            event(Submitted::Warning(w.clone()));
        }
        let (tokens, _) = engine.prepare(&doc.text);
        // A deployment stores no bad date undated.
        if let Err(e) = textorigin_store::intake::admissible(&doc, !tokens.is_empty(), false) {
            event(Submitted::Failed(e.to_string()));
            continue;
        }
        let work = shards.as_ref().map(|s| s.searched.work(&doc.text, tokens)).unwrap_or_default();
        arrived_ms = arrived_ms.max(textorigin_store::clock::now_ms());
        let msg = Doc {
            name: doc.name,
            source: doc.source,
            url: doc.url,
            published_at: doc.published_at,
            arrived_ms,
            text: doc.text,
            meta: doc.meta,
        };
        log.append(DOCS, &docs_subject, last + 1, &msg.encode())?;
        last += 1;
        textorigin_store::failpoint::hit("submit.after-doc")
            .map_err(|source| ClusterError::Io { what: "submission", source })?;
        if let Some(s) = &shards {
            s.append(log, &engine, last, msg.time(), work)?;
        }
        event(Submitted::Doc(last));
    }
    Ok(last)
}

/// Submission's side of a deployment whose documents it prepares: each document's
/// selected shingles, split among the shards.
struct Splitter {
    shards: u32,
    buckets: u64,
    searched: Searched,
    /// The deployment's index region, which the shards' parts of the index work split.
    shape: IndexShape,
}

impl Splitter {
    fn new(meta: &Meta) -> Result<Splitter> {
        let params = meta.config.table_params();
        params.check()?;
        let searched = Searched::new(&meta.config);
        let shape = searched.shape()?;
        Ok(Splitter { shards: meta.shards, buckets: params.buckets(), searched, shape })
    }

    /// Appends message `seq` of every shard's stream: the selected shingles of the
    /// document `engine` prepared last, at `time` in publication order, and the shard's
    /// part of its index work.
    fn append(&self, log: &Log, engine: &Engine, seq: u64, time: i64, index: IndexWork) -> Result<()> {
        let selected = engine.selected() as u32;
        for (s, items) in split(engine.items(), self.buckets, self.shards).into_iter().enumerate() {
            let stream = items_stream(s as u32);
            let index = self.searched.part_of(&index, &self.shape, s as u32, self.shards);
            let message = encode(&Items { time, selected, items, index });
            log.append(&stream, &subject(&stream), seq, &message)?;
        }
        Ok(())
    }

    /// Completes the shards' streams up to document `last` (a submission cut off after
    /// a document and before its shingles), preparing those documents again.
    fn catch_up(&self, log: &Log, engine: &mut Engine, last: u64) -> Result<()> {
        let mut behind = last;
        for s in 0..self.shards {
            behind = behind.min(log.last_seq(&items_stream(s))?);
        }
        if behind == last {
            return Ok(());
        }
        let mut docs = log.reader(DOCS, behind + 1)?;
        for _ in behind..last {
            let (seq, bytes) = docs.read()?;
            let doc = Doc::decode(&bytes)?;
            let work = self.searched.work(&doc.text, engine.prepare(&doc.text).0);
            self.append(log, engine, seq, doc.time(), work)?;
        }
        Ok(())
    }
}
