//! A shard worker (`docs/SCALE-OUT.md`, "Per document"): consumes the documents in
//! order, prepares each itself (tokens, fingerprints, selection: context-free and
//! cheap) — or, in a deployment whose documents are prepared at submission, consumes
//! its shard's selected shingles instead — probes the selected shingles whose buckets
//! are its own, appends its answer to its stream, and applies the estimate's feedback
//! from the aggregator (phase 3: propagation, Lucky scores) before any later document
//! that touches the same buckets: up to [`AHEAD`] documents are probed ahead of their
//! feedback ([`Ahead`]). Its table is the single-node table's bucket range, byte for
//! byte.
//!
//! Density: with the adaptive density the threshold in force may rise at a document's
//! end by the asks of every shard, which the feedback sums: a document is probed only
//! while nothing that feedback still to come can say would raise its threshold
//! ([`Table::density_fixed_for`]), its shingles are selected at the threshold in force,
//! and its answer carries that threshold and the asks its probe made.
//!
//! Dates: every document's place in publication order ([`Doc::time`]) is
//! kept (and checkpointed), so a document published before an entry's origin takes it
//! over here, where the entry lives, as on one node, and the answer names the origins
//! taken. The revisions that causes are decided at the aggregator; the feedback lists
//! the revised documents' shingles, which the worker looks up in the table as it was
//! right after the cause's phase 3 (the buckets later documents touched since are kept
//! as they were: [`Ahead::score_and_look_up`]) and answers in its lookups stream.
//!
//! Derived indexes: the worker holds its part of the signature and
//! near-duplicate sections ([`HeldPart`]); its answer carries what the part answers to
//! the document's searches as of the document before, and the part then adds the
//! document's keys (from its text, or prepared at submission). Where site templates
//! are labelled, a document's work leaves its own template lines out, as its owner's
//! analysis does: the worker counts every site's lines itself ([`SiteLines`]), as the
//! partitions do in their stores (`docs/SCALE-OUT.md`, "The single node's defaults:
//! site templates").
//!
//! Restart: the table is held in memory, restored from the newest checkpoint slot
//! (the daemon's A/B slots, `textorigin_store::storage::checkpoint`, holding the range,
//! its counters, the index part, the sites' line counts and the document it reflects)
//! and brought up to date by replaying the
//! log from the next document: its answers are already in its stream (each is
//! compared with the one recomputed: a difference is a determinism bug, or another
//! worker on the same shard) and the feedback in the feedback stream, so a replay
//! changes nothing and needs nobody else.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use textorigin_core::config::Config;
use textorigin_core::engine::template::{self, SiteLines};
use textorigin_core::engine::{Engine, Feedback, ShardItem};
use textorigin_core::index::{IndexAnswers, IndexWork};

use textorigin_core::select::kept;
use textorigin_core::shard::{part_at_density, Ahead, Shard};
use textorigin_core::table::{PendingRaise, Table, TableStats};
use textorigin_store::storage::checkpoint;
use textorigin_store::storage::datadir::site_of;
use textorigin_store::storage::store::Via;
use xxhash_rust::xxh3::xxh3_64;

use crate::log::{Appends, Interleaved, Log, Reader};
use crate::searched::{HeldPart, Searched};
use crate::wire::{
    decode, encode, feedback_stream, hits_stream, items_stream, lookups_stream, process_name, subject, Answer, Doc,
    Items, Lookups, DOCS,
};
use crate::{read_meta, ClusterError, Result};

/// What a worker did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WorkerSummary {
    /// The checkpoint it started from (0: none, the first document).
    pub restored: u64,
    /// Documents applied (replayed ones included).
    pub documents: u64,
    /// Of them, replayed from the log (their answers were already in it).
    pub replayed: u64,
    /// Bytes of the messages it read (documents, or its shingles when documents are
    /// prepared at submission; the feedback not included), and of the answers it
    /// appended.
    pub read_bytes: u64,
    pub answer_bytes: u64,
    /// Checkpoints written.
    pub checkpoints: u64,
    /// Documents probed while an earlier one's feedback was still to come.
    pub ahead: u64,
    /// Selected shingles of the documents (all shards'), and of them this shard's.
    pub selected: u64,
    pub probed: u64,
    /// Seconds preparing documents (tokens, fingerprints, selection, and what they ask
    /// of and add to the derived indexes), in the table (phases 1 and 3), in the index
    /// part (answering and adding), and waiting for or writing the log.
    pub prepare_secs: f64,
    pub table_secs: f64,
    pub index_secs: f64,
    pub log_secs: f64,
}

/// Where and how often a worker checkpoints its range.
#[derive(Debug, Clone)]
pub struct Checkpoints {
    /// The directory of its two slots.
    pub dir: PathBuf,
    /// At the first document boundary this long after the last checkpoint.
    pub every: Duration,
}

/// Runs shard `index` of the deployment in the log until it has applied document
/// `until` (forever without one); writes its bucket range and counters to `out` then.
/// With `checkpoints`, it starts from its newest valid slot of this deployment and
/// writes one now and then (`docs/SCALE-OUT.md`, "Checkpoints").
pub fn run(
    log: &Log,
    index: u32,
    until: Option<u64>,
    out: Option<&Path>,
    checkpoints: Option<&Checkpoints>,
    mut progress: impl FnMut(u64),
) -> Result<WorkerSummary> {
    let mut w = Worker::start(log, index, until, checkpoints)?;
    loop {
        match w.next_step() {
            Step::Checkpoint(c) => w.checkpoint(log, c)?,
            Step::Done => break,
            Step::Feedback => w.apply_feedback(&mut progress)?,
            Step::Probe => match w.next_document()? {
                Some((seq, bytes)) => {
                    let items = w.items_of(seq, &bytes)?;
                    w.probe(seq, items, &mut progress)?;
                    w.take_arrived_feedback(&mut progress)?;
                }
                None => w.apply_feedback(&mut progress)?,
            },
        }
    }
    w.finish(out)
}

/// What a worker does next.
enum Step<'c> {
    /// Write a checkpoint slot (nothing is pending).
    Checkpoint(&'c Checkpoints),
    /// Every document up to `until` is applied.
    Done,
    /// Wait for the oldest pending document's feedback and apply it.
    Feedback,
    /// Probe the next document, if it is there (else [`Step::Feedback`]).
    Probe,
}

/// A shard worker between two steps: its table, where it is in each stream, and what
/// it measured.
struct Worker<'c> {
    shard: Shard,
    config: Config,
    prepared: bool,
    deployment: u64,
    table: Table<Vec<u8>>,
    engine: Engine,
    /// Its part of the signature and near-duplicate sections, and what a document asks
    /// of them and adds.
    held: HeldPart,
    searched: Searched,
    until: Option<u64>,
    checkpoints: Option<&'c Checkpoints>,
    /// The documents (or, prepared at submission, this shard's shingles), the feedback,
    /// and this shard's answers: those up to `answered` given before a restart (the
    /// replay's compared with them by `appends`), and appended.
    docs: Reader,
    feedback: Interleaved,
    answered: u64,
    appends: Appends,
    /// Documents probed and not yet scored.
    ahead: Ahead,
    /// Every document's place in publication order (document `n` at `n − 1`) and the
    /// latest of them.
    times: Vec<i64>,
    latest: i64,
    /// Where site templates are labelled, every site's line counts, for each
    /// document's own template lines (its index work leaves them out, as its owner's
    /// analysis does).
    sites: SiteLines,
    /// The lookups stream (records made again after a restart are compared with the
    /// ones given before by `lookups`) and its next record.
    lookups: Appends,
    lookups_next: u64,
    /// The last document scored (applied whole), the last probed, the last in a slot.
    last: u64,
    probed: u64,
    checkpointed_at: u64,
    checkpointed: Instant,
    clock: Instant,
    summary: WorkerSummary,
}

impl<'c> Worker<'c> {
    /// Reads the deployment, restores the newest checkpoint slot and opens the streams
    /// after the document it holds.
    fn start(log: &Log, index: u32, until: Option<u64>, checkpoints: Option<&'c Checkpoints>) -> Result<Worker<'c>> {
        let meta = read_meta(log)?;
        let deployment = xxh3_64(&encode(&meta));
        let shard = Shard::new(index, meta.shards)?;
        // A shard's bucket range is checkpointed and copied as it is: its table spans
        // its memory from the start (untouched pages cost nothing).
        let mut table = Table::in_memory(&meta.config.table_params())?;
        table.span();
        let searched = Searched::new(&meta.config);
        let mut held = HeldPart::new(&searched, index, meta.shards)
            .map_err(|e| ClusterError::File { shard: index, source: std::io::Error::other(e) })?;
        let mut summary = WorkerSummary::default();
        let mut restored = Restored::default();
        if let Some(c) = checkpoints {
            std::fs::create_dir_all(&c.dir).map_err(|source| ClusterError::File { shard: index, source })?;
            restored = restore(&c.dir, deployment, shard, &meta.config, (&mut table, &mut held))?;
            summary.restored = restored.seq;
        }
        let last = summary.restored;
        let answers = hits_stream(index);
        let answered = log.last_seq(&answers)?;
        let input = if meta.prepared { items_stream(index) } else { DOCS.to_string() };
        let lookups = lookups_stream(index);
        let feedback = Interleaved::new(log, &meta, feedback_stream, last + 1)?;
        let appends = log.appends(&answers, &subject(&answers));
        Ok(Worker {
            shard,
            engine: Engine::new(meta.config.clone()),
            held,
            searched,
            config: meta.config,
            prepared: meta.prepared,
            deployment,
            table,
            until,
            checkpoints,
            docs: log.reader(&input, last + 1)?,
            feedback,
            answered,
            appends,
            ahead: Ahead::default(),
            latest: restored.times.iter().copied().max().unwrap_or(i64::MIN),
            times: restored.times,
            sites: restored.sites,
            lookups: log.appends(&lookups, &subject(&lookups)),
            lookups_next: restored.lookups + 1,
            last,
            probed: last,
            checkpointed_at: last,
            checkpointed: Instant::now(),
            clock: Instant::now(),
            summary,
        })
    }

    /// A checkpoint is due when its time has come and a document was applied since; it
    /// is written with nothing pending (the pending documents are scored first), and a
    /// document is probed only while none is due.
    fn next_step(&self) -> Step<'c> {
        let due = self.checkpoints.filter(|c| {
            self.checkpointed.elapsed() >= c.every && (self.last > self.checkpointed_at || !self.ahead.is_empty())
        });
        match due {
            Some(c) if self.ahead.is_empty() => Step::Checkpoint(c),
            _ if self.until.is_some_and(|u| self.last >= u) => Step::Done,
            Some(_) => Step::Feedback,
            None if self.until.is_some_and(|u| self.probed >= u)
                || self.ahead.len() >= AHEAD
                || self.ahead.len() as u64 >= self.table.density_fixed_for() =>
            {
                Step::Feedback
            }
            None => Step::Probe,
        }
    }

    /// Writes a checkpoint slot of the range at the last document and publishes it.
    fn checkpoint(&mut self, log: &Log, c: &Checkpoints) -> Result<()> {
        // A slot puts its documents beyond a replay: their answers and lookups must be
        // in the log.
        self.appends.flush()?;
        self.lookups.flush()?;
        let (head, range) = self.image();
        let [counters, signatures, keys] = self.held.image();
        checkpoint::write_parts(&c.dir, &[&head, range, counters, signatures, keys], self.last, self.deployment)?;
        crate::deploy::publish_position(
            log,
            &process_name(Some(self.shard.index())),
            &c.dir,
            self.deployment,
            u64::MAX,
            false,
        )?;
        self.summary.checkpoints += 1;
        (self.checkpointed, self.checkpointed_at) = (Instant::now(), self.last);
        Ok(())
    }

    /// The next document: waited for when nothing is pending, else taken only when it
    /// is there (None: the oldest pending feedback is to be waited for instead).
    fn next_document(&mut self) -> Result<Option<(u64, Vec<u8>)>> {
        if self.ahead.is_empty() {
            Ok(Some(self.docs.read()?))
        } else {
            Ok(self.docs.try_read()?)
        }
    }

    /// Document `seq`'s selected shingles whose buckets are this shard's and its index
    /// work: prepared here (its lines counted in its site's first, where templates are
    /// labelled), or read as they were prepared at submission; and its place in
    /// publication order.
    fn items_of(&mut self, seq: u64, bytes: &[u8]) -> Result<Prepared> {
        self.summary.read_bytes += bytes.len() as u64;
        if self.prepared {
            let items: Items = decode(bytes, "selected shingles")?;
            self.summary.log_secs += lap(&mut self.clock);
            if items.ranks.is_empty() {
                self.summary.selected += u64::from(items.selected);
                return Ok((items.items, items.time, items.index));
            }
            // Prepared at the starting threshold: those the one in force selects.
            let t = self.table.density();
            self.summary.selected += items.ranks.iter().filter(|&&r| kept(r, t)).count() as u64;
            let part = part_at_density(&items.items, (&items.ranks, &items.tops), t);
            self.summary.prepare_secs += lap(&mut self.clock);
            return Ok((part, items.time, items.index));
        }
        let doc = Doc::decode(bytes)?;
        self.summary.log_secs += lap(&mut self.clock);
        let mut prepared = self.engine.prepare(&doc.text);
        // The threshold in force, which no feedback still to come can move
        // (`next_step`).
        prepared.at_density(self.table.density());
        self.summary.selected += prepared.selected() as u64;
        let runs = match site_of(&self.config, doc.url.as_deref(), doc.meta.as_deref(), &doc.source, Some(Via::Cluster))
        {
            Some(site) => {
                let (text, tokens) = (doc.text.as_str(), prepared.tokens());
                let lines = template::lines(text, tokens);
                let rules = (self.config.template_pages, self.config.html);
                self.sites.page((site, seq), (&lines, tokens, text.len() as u32), rules)
            }
            None => Vec::new(),
        };
        let work = self.searched.work((&doc.text, prepared.tokens()), &runs);
        self.summary.prepare_secs += lap(&mut self.clock);
        let (shard, buckets) = (self.shard, self.table.buckets());
        let time = doc.time();
        Ok((prepared.items_where(buckets, |b| shard.owns(b, buckets)), time, work))
    }

    /// Phase 1 for document `seq`, at `time` in publication order, once no pending
    /// document touches its buckets; its answer appended, or compared with the one
    /// given before a restart.
    fn probe(&mut self, seq: u64, (items, time, work): Prepared, progress: &mut impl FnMut(u64)) -> Result<()> {
        while self.ahead.conflicts(&self.table, &items) {
            let message = self.feedback.read()?;
            self.summary.log_secs += lap(&mut self.clock);
            self.score(message, progress)?;
        }
        if self.times.len() as u64 != seq - 1 {
            return Err(ClusterError::OutOfStep {
                what: "the worker's dates",
                want: self.times.len() as u64 + 1,
                got: seq,
            });
        }
        self.times.push(time);
        // Published before a document already seen: it may take entries over.
        let may_take_over = time < self.latest;
        self.latest = self.latest.max(time);
        self.summary.ahead += u64::from(!self.ahead.is_empty());
        let times = &self.times;
        let when = |o: u64| (times[o as usize - 1], o);
        let later = |o| when(o) > (time, seq);
        let (density, asked) = (self.table.density(), self.table.asks_of_document());
        let probe = self.ahead.probe_dated(&mut self.table, (seq, may_take_over), &items, later);
        self.summary.probed += probe.items.len() as u64;
        self.summary.table_secs += lap(&mut self.clock);
        let index = self.held.answer_and_add(seq, &work);
        self.summary.index_secs += lap(&mut self.clock);
        let asks = self.table.asks_of_document() - asked;
        let answer = encode(&Answer {
            items: probe.items.clone(),
            hits: probe.hits.clone(),
            taken: probe.taken.clone(),
            index,
            density,
            asks,
        });
        // An answer given before a restart is compared with the stored one.
        if seq <= self.answered {
            self.summary.replayed += 1;
        } else {
            self.summary.answer_bytes += answer.len() as u64;
        }
        self.appends.push(seq, answer)?;
        self.summary.documents += 1;
        self.probed = seq;
        Ok(())
    }

    /// Waits for the oldest pending document's feedback and applies it (phase 3).
    fn apply_feedback(&mut self, progress: &mut impl FnMut(u64)) -> Result<()> {
        let message = self.feedback.read()?;
        self.summary.log_secs += lap(&mut self.clock);
        self.score(message, progress)?;
        self.summary.table_secs += lap(&mut self.clock);
        Ok(())
    }

    /// Feedback already there is applied now: fewer pending, fewer waits later.
    fn take_arrived_feedback(&mut self, progress: &mut impl FnMut(u64)) -> Result<()> {
        while !self.ahead.is_empty() {
            let Some(message) = self.feedback.try_read()? else { break };
            self.score(message, progress)?;
        }
        self.summary.log_secs += lap(&mut self.clock);
        Ok(())
    }

    /// Phase 3 for the oldest pending document from `message`, the feedback stream's
    /// next; then the lookups of the revisions it lists.
    fn score(&mut self, (f, bytes): (u64, Vec<u8>), progress: &mut impl FnMut(u64)) -> Result<()> {
        let fb: Feedback = decode(&bytes, "feedback")?;
        if f != fb.seq {
            return Err(ClusterError::OutOfStep { what: "the feedback stream", want: f, got: fb.seq });
        }
        let (shard, buckets) = (self.shard, self.table.buckets());
        let (last, found) =
            self.ahead.score_and_look_up(&self.engine, &mut self.table, &fb, |b| shard.owns(b, buckets))?;
        self.last = last;
        if !fb.revise.is_empty() {
            let found = found.into_iter().map(|p| Answer {
                items: p.items,
                hits: p.hits,
                taken: Vec::new(),
                index: IndexAnswers::default(),
                density: 0,
                asks: 0,
            });
            self.answer_lookups(Lookups { cause: fb.seq, found: found.collect() })?;
        }
        progress(self.last);
        Ok(())
    }

    /// Appends what the shingles in this shard's buckets of the documents a feedback
    /// revises found as the lookups stream's next record (one given before a restart is
    /// compared with it).
    fn answer_lookups(&mut self, lookups: Lookups) -> Result<()> {
        self.lookups.push(self.lookups_next, encode(&lookups))?;
        self.lookups_next += 1;
        self.summary.table_secs += lap(&mut self.clock);
        Ok(())
    }

    /// Its bucket range and counters as one image in two parts: a header
    /// ([`ImageHeader`] as a message, behind its length as u32 little-endian), then the
    /// range's bytes. The file of `--image` and a checkpoint slot hold it.
    fn image(&self) -> (Vec<u8>, &[u8]) {
        let header = encode(&ImageHeader {
            index: self.shard.index(),
            count: self.shard.count(),
            config: self.config.clone(),
            stats: self.table.stats(),
            times: self.times.clone(),
            lookups: self.lookups_next - 1,
            pending: self.table.pending_raise(),
            sites: self.sites.entries(),
        });
        let mut head = (header.len() as u32).to_le_bytes().to_vec();
        head.extend(header);
        (head, self.table.range_bytes(self.shard.buckets(self.table.buckets())))
    }

    /// The answers flushed, the range written to `out`: what the worker did.
    fn finish(mut self, out: Option<&Path>) -> Result<WorkerSummary> {
        self.appends.flush()?;
        self.lookups.flush()?;
        if let Some(out) = out {
            write_image(out, self.image())
                .map_err(|source| ClusterError::File { shard: self.shard.index(), source })?;
        }
        Ok(self.summary)
    }
}

/// Seconds since `clock`, restarting it.
fn lap(clock: &mut Instant) -> f64 {
    let now = Instant::now();
    (now - std::mem::replace(clock, now)).as_secs_f64()
}

/// How many documents a worker probes ahead of their feedback, at most.
pub const AHEAD: usize = 32;

/// A document as a worker probes it: its selected shingles in this shard's buckets,
/// its place in publication order, its index work.
type Prepared = (Vec<ShardItem>, i64, IndexWork);

/// What a checkpoint slot gives back: the document it reflects, every document's place
/// in publication order up to it, and the lookups messages written by then.
#[derive(Debug, Default)]
struct Restored {
    seq: u64,
    times: Vec<i64>,
    lookups: u64,
    sites: SiteLines,
}

/// Restores the newest valid checkpoint slot of this deployment and shard into `table`
/// and `held` (nothing without one).
fn restore(
    dir: &Path,
    deployment: u64,
    shard: Shard,
    config: &Config,
    (table, held): (&mut Table<Vec<u8>>, &mut HeldPart),
) -> Result<Restored> {
    // Any document of the log may be the slot's: the log keeps them all.
    let Some((slot, m)) = checkpoint::newest_usable(dir, u64::MAX, deployment) else {
        return Ok(Restored::default());
    };
    let path = checkpoint::slot_paths(dir, slot).0;
    let bytes = std::fs::read(&path).map_err(|source| ClusterError::Image { path: path.clone(), source })?;
    let (header, rest) = parse_image(&bytes, &path)?;
    let dst = table.range_bytes_mut(shard.buckets(table.buckets()));
    let (range, index) = rest.split_at(dst.len().min(rest.len()));
    if header.index != shard.index()
        || header.count != shard.count()
        || header.config != *config
        || dst.len() != range.len()
        || !held.restore(index)
        || header.stats.last_seq != m.seq
        || header.times.len() as u64 != m.seq
    {
        return Err(ClusterError::File {
            shard: shard.index(),
            source: std::io::Error::other(format!(
                "checkpoint slot {} in {} is not this shard's",
                checkpoint::slot_name(slot),
                dir.display()
            )),
        });
    }
    dst.copy_from_slice(range);
    *table.stats_mut() = header.stats;
    table.set_pending_raise(header.pending);
    let sites = SiteLines::from_entries(&header.sites);
    Ok(Restored { seq: m.seq, times: header.times, lookups: header.lookups, sites })
}

/// What a shard image file holds before its buckets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageHeader {
    pub index: u32,
    pub count: u32,
    pub config: Config,
    pub stats: TableStats,
    /// Every document's place in publication order up to the image's ([`Doc::time`]).
    pub times: Vec<i64>,
    /// Messages of the shard's lookups stream written by then.
    pub lookups: u64,
    /// The raise of the density threshold pending then ([`Table::pending_raise`]).
    pub pending: PendingRaise,
    /// Every site's line counts then ([`SiteLines::entries`]; none where templates are
    /// not labelled).
    pub sites: Vec<(u64, u64, u32)>,
}

/// Writes an image's parts ([`Worker::image`]) to `path`.
fn write_image(path: &Path, (head, range): (Vec<u8>, &[u8])) -> std::io::Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    f.write_all(&head)?;
    f.write_all(range)?;
    f.into_inner().map_err(|e| e.into_error())?.sync_all()
}

/// The header and the range of an image (read from `path`).
fn parse_image<'b>(bytes: &'b [u8], path: &Path) -> Result<(ImageHeader, &'b [u8])> {
    let bad = || ClusterError::Image { path: path.to_path_buf(), source: std::io::Error::other("truncated") };
    let len = u32::from_le_bytes(bytes.get(..4).ok_or_else(bad)?.try_into().expect("4 bytes")) as usize;
    let header = bytes.get(4..4 + len).ok_or_else(bad)?;
    Ok((decode(header, "shard image")?, &bytes[4 + len..]))
}

/// Reads a shard image written at a worker's end.
pub fn read_image(path: &Path) -> Result<(ImageHeader, Vec<u8>)> {
    let bytes = std::fs::read(path).map_err(|source| ClusterError::Image { path: path.to_path_buf(), source })?;
    let (header, range) = parse_image(&bytes, path)?;
    Ok((header, range.to_vec()))
}

/// The union of shard images (all S of one deployment): the single-node table.
pub fn union(paths: &[&Path]) -> Result<Table<Vec<u8>>> {
    let mut images = paths.iter().map(|p| read_image(p)).collect::<Result<Vec<_>>>()?;
    images.sort_by_key(|(h, _)| h.index);
    let first = images.first().ok_or(textorigin_core::shard::ShardError::Set { count: 0 })?.0.clone();
    let mut shards = Vec::new();
    for (h, bytes) in &images {
        if h.config != first.config {
            return Err(ClusterError::MetaDiffers {
                stored: first.config.canonical(),
                requested: h.config.canonical(),
            });
        }
        let shard = Shard::new(h.index, h.count)?;
        let mut t = Table::in_memory(&h.config.table_params())?;
        t.span();
        let range = shard.buckets(t.buckets());
        let dst = t.range_bytes_mut(range);
        if dst.len() != bytes.len() {
            return Err(ClusterError::File {
                shard: h.index,
                source: std::io::Error::other("the image's size does not fit its shard"),
            });
        }
        dst.copy_from_slice(bytes);
        *t.stats_mut() = h.stats;
        shards.push((shard, t));
    }
    let mut all = Table::in_memory(&first.config.table_params())?;
    let parts: Vec<(Shard, &Table<Vec<u8>>)> = shards.iter().map(|(s, t)| (*s, t)).collect();
    textorigin_core::shard::union(&parts, &mut all)?;
    Ok(all)
}
