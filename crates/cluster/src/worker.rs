//! A shard worker (`docs/SCALE-OUT.md`, "Per document"): consumes the documents in
//! order, prepares each itself (tokens, fingerprints, selection: context-free and
//! cheap), probes the selected shingles whose buckets are its own, appends its answer
//! to its stream, and applies the estimate's feedback from the aggregator before the
//! next document (phase 3: propagation, Lucky scores). Its table is the single-node
//! table's bucket range, byte for byte.
//!
//! Restart: the table is held in memory and rebuilt by replaying the log from the first
//! document: its answers are already in its stream (each is compared with the one
//! recomputed: a difference is a determinism bug, or another worker on the same shard)
//! and the feedback in the feedback stream, so a replay changes nothing and needs
//! nobody else.

use std::io::{Read, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};
use textorigin_core::config::Config;
use textorigin_core::engine::{Engine, Feedback};
use textorigin_core::shard::Shard;
use textorigin_core::table::{Table, TableStats};

use crate::log::Log;
use crate::wire::{decode, encode, hits_stream, subject, Answer, Doc, DOCS, FEEDBACK};
use crate::{read_meta, ClusterError, Result};

/// What a worker did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkerSummary {
    /// Documents applied (replayed ones included).
    pub documents: u64,
    /// Of them, replayed from the log (their answers were already in it).
    pub replayed: u64,
}

/// Runs shard `index` of the deployment in the log until it has applied document
/// `until` (forever without one); writes its bucket range and counters to `out` then.
pub fn run(log: &Log, index: u32, until: Option<u64>, out: Option<&Path>, mut progress: impl FnMut(u64)) -> Result<WorkerSummary> {
    let meta = read_meta(log)?;
    let shard = Shard::new(index, meta.shards)?;
    let mut table = Table::in_memory(&meta.config.table_params())?;
    let buckets = table.buckets();
    let mut engine = Engine::new(meta.config.clone());
    let (answers, answers_subject) = (hits_stream(index), subject(&hits_stream(index)));
    let answered = log.last_seq(&answers)?;
    // The answers this shard gave before it restarted, to compare with the replay's.
    let mut given = if answered > 0 { Some(log.reader(&answers, 1)?) } else { None };
    let mut docs = log.reader(DOCS, 1)?;
    let mut feedback = log.reader(FEEDBACK, 1)?;
    let mut summary = WorkerSummary::default();
    while until.is_none_or(|u| summary.documents < u) {
        let (seq, bytes) = docs.read()?;
        let doc: Doc = decode(&bytes, "document")?;
        engine.prepare(&doc.text);
        let probe = engine.probe_where(&mut table, seq, |b| shard.owns(b, buckets));
        let answer = encode(&Answer { items: probe.items.clone(), hits: probe.hits.clone() });
        match given.as_mut().filter(|_| seq <= answered) {
            Some(given) => {
                if given.read()?.1 != answer {
                    return Err(crate::log::LogError::Conflict { stream: answers, seq }.into());
                }
            }
            None => log.append(&answers, &answers_subject, seq, &answer)?,
        }
        let (f, bytes) = feedback.read()?;
        let fb: Feedback = decode(&bytes, "feedback")?;
        if f != seq || fb.seq != seq {
            return Err(ClusterError::OutOfStep { what: "the feedback stream", want: seq, got: fb.seq });
        }
        engine.score(&mut table, &probe, &fb);
        summary.documents += 1;
        summary.replayed += u64::from(seq <= answered);
        progress(seq);
    }
    if let Some(out) = out {
        write_image(out, shard, &meta.config, &table).map_err(|source| ClusterError::File { shard: index, source })?;
    }
    Ok(summary)
}

/// What a shard image file holds before its buckets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageHeader {
    pub index: u32,
    pub count: u32,
    pub config: Config,
    pub stats: TableStats,
}

/// A shard's bucket range and counters: a header ([`ImageHeader`] as a message, behind
/// its length as u32 little-endian), then the range's bytes.
fn write_image(path: &Path, shard: Shard, config: &Config, table: &Table<Vec<u8>>) -> std::io::Result<()> {
    let header = encode(&ImageHeader { index: shard.index(), count: shard.count(), config: config.clone(), stats: table.stats() });
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    f.write_all(&(header.len() as u32).to_le_bytes())?;
    f.write_all(&header)?;
    f.write_all(table.range_bytes(shard.buckets(table.buckets())))?;
    f.into_inner().map_err(|e| e.into_error())?.sync_all()
}

/// Reads a shard image written at a worker's end.
pub fn read_image(path: &Path) -> Result<(ImageHeader, Vec<u8>)> {
    let io = |source| ClusterError::File { shard: u32::MAX, source };
    let mut f = std::io::BufReader::new(std::fs::File::open(path).map_err(io)?);
    let mut len = [0u8; 4];
    f.read_exact(&mut len).map_err(io)?;
    let mut header = vec![0u8; u32::from_le_bytes(len) as usize];
    f.read_exact(&mut header).map_err(io)?;
    let header: ImageHeader = decode(&header, "shard image")?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).map_err(io)?;
    Ok((header, bytes))
}

/// The union of shard images (all S of one deployment): the single-node table.
pub fn union(paths: &[&Path]) -> Result<Table<Vec<u8>>> {
    let mut images = paths.iter().map(|p| read_image(p)).collect::<Result<Vec<_>>>()?;
    images.sort_by_key(|(h, _)| h.index);
    let first = images.first().ok_or(textorigin_core::shard::ShardError::Set { count: 0 })?.0.clone();
    let mut shards = Vec::new();
    for (h, bytes) in &images {
        if h.config != first.config {
            return Err(ClusterError::MetaDiffers { stored: first.config.canonical(), requested: h.config.canonical() });
        }
        let shard = Shard::new(h.index, h.count)?;
        let mut t = Table::in_memory(&h.config.table_params())?;
        let range = shard.buckets(t.buckets());
        let dst = t.range_bytes_mut(range);
        if dst.len() != bytes.len() {
            return Err(ClusterError::File { shard: h.index, source: std::io::Error::other("the image's size does not fit its shard") });
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
