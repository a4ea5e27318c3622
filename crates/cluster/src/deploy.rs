//! A deployment as a whole: the settings a deployment fixes ([`settle`]), creating
//! it (its partitions' data directories and its streams: [`create`], [`init`]), its
//! description ([`read_meta`]), where each process can restart from
//! ([`publish_position`]), what the log may drop ([`trim`]) and where every process is
//! ([`status`]).

use std::path::{Path, PathBuf};

use textorigin_core::config::{Density, Overrides, Templates};
use textorigin_store::intake::Policy;
use textorigin_store::storage::datadir::DataDir;

use crate::log::{Log, LogError};
use crate::wire::{
    decode, encode, feedback_stream, hits_stream, items_stream, lookups_stream, partition_name, position_subject,
    process_name, results_stream, subject, Lookups, Meta, Position, DOCS, KEYS, META, POSITIONS,
};
use crate::{ClusterError, Result};

/// The settings a deployment fixes, filled into `ov`; a setting given otherwise is
/// refused. The adaptive density (one node's default) is the workers' to raise at
/// document ends, which needs a lag of at least 1 (`docs/SCALE-OUT.md`, "The single
/// node's defaults"). Site templates are labelled as on one node, every partition and
/// worker counting every document's lines, except where documents are `prepared` at
/// submission: submission, which would make their index work without their template
/// lines, keeps no state across runs, so such a deployment labels none. The
/// attribution is the data directory's (the passage by default, as on one node: the
/// partitions exchange their results whole). Origins are on: the shards are the table's.
/// Exact copies are analysed in full: the first holder of a text may be another
/// partition's, and its shards and index sections are the searches'.
pub fn settle(mut ov: Overrides, prepared: bool) -> Result<Overrides> {
    let refused = |setting, does, value| ClusterError::Unsupported { setting, does, value };
    if ov.density_lag == Some(0) && ov.density != Some(Density::Paper) {
        return Err(ClusterError::LagZero);
    }
    if ov.origins == Some(false) {
        return Err(refused("origins", "finds origins: its shards hold the table", "on"));
    }
    if ov.exact_copies == Some(true) {
        return Err(refused("exact copies", "analyses exact copies in full, as any document", "off"));
    }
    ov.exact_copies = Some(false);
    if prepared {
        if !matches!(ov.templates, None | Some(Templates::Off)) {
            return Err(refused(
                "templates",
                "labels no site templates where documents are prepared at submission",
                "off",
            ));
        }
        ov.templates = Some(Templates::Off);
    }
    Ok(ov)
}

/// Creates a deployment of `shards` shard workers and `partitions` partitions on
/// `log`, with its results in `dir` (partition `p` of several in
/// [`Meta::partition_dir`]): each partition's data directory made or opened with `ov`
/// (after [`settle`]), the streams made and the description written ([`init`]), then
/// every data directory marked as the deployment's. Running it again with the same
/// arguments changes nothing; with others it is refused.
pub fn create(log: &Log, dir: &Path, shards: u32, partitions: u32, prepared: bool, ov: Overrides) -> Result<Meta> {
    let ov = settle(ov, prepared)?;
    let mut meta = Meta { shards, config: Default::default(), prepared, partitions };
    let dirs: Vec<PathBuf> = (0..partitions).map(|p| meta.partition_dir(dir, p)).collect();
    for d in &dirs {
        let dd = DataDir::open_write_aggregator(d, &ov, Policy::default())?;
        meta.config = dd.config().clone();
        dd.close()?;
        // A data directory made before the lag (schema 23) raises at once.
        if meta.config.density == Density::Adaptive && meta.config.density_lag == 0 {
            return Err(ClusterError::LagZero);
        }
    }
    init(log, &meta)?;
    for d in dirs.iter().map(PathBuf::as_path).chain([dir]) {
        DataDir::mark_aggregator(d, &meta.describe())?;
    }
    Ok(meta)
}

/// Makes the deployment's streams (the description, the documents and their admission
/// keys, one answer stream and one lookups stream per shard, one feedback stream per
/// partition, and one stream of selected shingles per shard when documents are prepared
/// at submission) and writes
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
    let others = [KEYS.to_string()]
        .into_iter()
        .chain((0..meta.shards).map(lookups_stream))
        .chain((0..meta.partitions).map(feedback_stream))
        .chain((0..results).map(results_stream))
        .map(with_subject);
    for (s, subjects) in document_streams(meta).into_iter().chain(others) {
        log.create_stream(&s, &subjects)?;
    }
    log.create_latest_stream(POSITIONS, &subject(POSITIONS))?;
    Ok(())
}

/// The streams whose record `n` is about document `n`, with the subject each holds:
/// the documents, the shards' answers and (prepared at submission) their shingles.
fn document_streams(meta: &Meta) -> Vec<(String, String)> {
    let items = if meta.prepared { meta.shards } else { 0 };
    [with_subject(DOCS.to_string())]
        .into_iter()
        .chain((0..meta.shards).map(hits_stream).map(with_subject))
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
    /// The streams hold no batch that ends before `from` any more (`dropped` records
    /// went now; a batch holding `from` stays whole).
    Below { from: u64, dropped: u64 },
    /// Nothing: this process has said no position yet (it has no checkpoint, so it
    /// would replay from the first document).
    Waiting(String),
    /// Nothing: this partition cannot read every other partition's store, so it reads
    /// their older texts from the documents stream.
    WholeLog(String),
    /// Nothing: this process's position says it checkpointed document `position`, but it
    /// has done only up to `done` (a worker's last answer, a partition's last
    /// feedback): a position it did not write.
    Ahead { process: String, position: u64, done: u64 },
    /// Nothing: this worker's position is of another deployment's checkpoints.
    Foreign(String),
}

/// Drops from the log what no process can need again: the records before the oldest
/// position any process has said (where the oldest of its checkpoint slots is, or a
/// partition's book if that is earlier), in every stream but the description. Needs a
/// position from every worker and partition (the aggregator), and, with several
/// partitions, every partition able to read the others' stores (it reads the older
/// texts of their documents there); a process that lost its checkpoints cannot rejoin
/// after a trim. A position is believed only as far as its process has gone: no later
/// than its last answer (a worker's, whose position must also be of this deployment)
/// or its last feedback (a partition's).
pub fn trim(log: &Log) -> Result<Trimmed> {
    let meta = read_meta(log)?;
    log.create_latest_stream(POSITIONS, &subject(POSITIONS))?;
    let deployment = xxhash_rust::xxh3::xxh3_64(&encode(&meta));
    let mut from = u64::MAX;
    let workers = (0..meta.shards).map(|s| (process_name(Some(s)), hits_stream(s), None));
    let partitions = (0..meta.partitions).map(|p| (partition_name(&meta, p), feedback_stream(p), Some(p)));
    for (name, stream, partition) in workers.chain(partitions) {
        let position = match checkpoint_position(log, &name)? {
            Some(Position { whole_log: true, .. }) => return Ok(Trimmed::WholeLog(name)),
            Some(position) => position,
            None => return Ok(Trimmed::Waiting(name)),
        };
        if partition.is_none() && position.identity != deployment {
            return Ok(Trimmed::Foreign(name));
        }
        let last = log.last_seq(&stream)?;
        let done = partition.map_or(last, |p| meta.owned(p, last));
        if position.seq > done {
            return Ok(Trimmed::Ahead { process: name, position: position.seq, done });
        }
        from = from.min(position.seq);
    }
    // The documents whose keys a submission cut off before them has still to copy
    // (the next `cluster submit` copies them from the documents) stay.
    from = from.min(keys_kept(log)?);
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

/// The number of the last record of [`KEYS`], the documents' admission keys; an error
/// that says what to do for a log made before the stream was.
pub(crate) fn keys_kept(log: &Log) -> Result<u64> {
    log.last_seq(KEYS).map_err(|e| match e {
        LogError::NoStream { .. } => ClusterError::NoKeys,
        e => e.into(),
    })
}

/// The message of the lookups streams that answers the revisions caused by document
/// `cause`: the first whose cause is not before it (the streams' causes ascend; every
/// shard's stream has the same messages), or the next one to come.
pub(crate) fn lookups_position(log: &Log, cause: u64) -> Result<u64> {
    let stream = lookups_stream(0);
    let (mut lo, mut hi) = (log.first_seq(&stream)?.max(1), log.last_seq(&stream)? + 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        // A record gone since `first_seq` was read was trimmed (`cluster trim` drops
        // the oldest records only, none a partition still needs): it comes before.
        let Some(bytes) = log.get(&stream, mid)? else {
            lo = mid + 1;
            continue;
        };
        if decode::<Lookups>(&bytes, "shard lookups")?.cause < cause {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// Where one process of the deployment is (`cluster status`).
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
    if !log.has_stream(META)? {
        return Err(ClusterError::NoMeta);
    }
    let bytes = log.get(META, 1)?.ok_or(ClusterError::NoMeta)?;
    Ok(decode(&bytes, "deployment description")?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use textorigin_core::config::Attribution;

    #[test]
    fn a_deployment_fixes_its_settings_and_refuses_others() {
        // One node's density and templates, whichever they are.
        let ov = settle(Overrides::default(), false).unwrap();
        assert_eq!((ov.density, ov.attribution, ov.templates), (None, None, None));
        let site = Overrides { templates: Some(Templates::Site), ..Overrides::default() };
        assert_eq!(settle(site.clone(), false).unwrap().templates, Some(Templates::Site));
        // Prepared at submission: none.
        assert_eq!(settle(Overrides::default(), true).unwrap().templates, Some(Templates::Off));
        let off = Overrides { origins: Some(false), ..Overrides::default() };
        assert!(matches!(settle(off, false), Err(ClusterError::Unsupported { setting: "origins", .. })));
        let copies = Overrides { exact_copies: Some(true), ..Overrides::default() };
        assert!(matches!(settle(copies, false), Err(ClusterError::Unsupported { setting: "exact copies", .. })));
        assert_eq!(settle(Overrides::default(), false).unwrap().exact_copies, Some(false));
        let paper =
            Overrides { density: Some(Density::Paper), templates: Some(Templates::Off), ..Overrides::default() };
        assert_eq!(settle(paper, true).unwrap().density, Some(Density::Paper));
        let adaptive = |lag| Overrides { density: Some(Density::Adaptive), density_lag: lag, ..Overrides::default() };
        assert_eq!(settle(adaptive(Some(1)), false).unwrap().density_lag, Some(1));
        // Either attribution, as on one node.
        for a in [Attribution::Passage, Attribution::Earliest] {
            assert_eq!(
                settle(Overrides { attribution: Some(a), ..Overrides::default() }, false).unwrap().attribution,
                Some(a)
            );
        }
        let refused = |ov: Overrides, prepared| settle(ov, prepared).unwrap_err().to_string();
        assert!(refused(adaptive(Some(0)), false).contains("a density lag of 0 raises it within a document"));
        assert!(refused(Overrides { density_lag: Some(0), ..Overrides::default() }, true).contains("lag of 0"));
        assert!(refused(site, true).contains(
            "labels no site templates where documents are prepared at submission: omit `templates` or give \
             `--templates off`"
        ));
    }
}
