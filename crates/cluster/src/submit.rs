//! Admitting documents into a deployment's log ([`submit`]), in order, as `ingest`
//! reads them, with their selected shingles split among the shards where documents are
//! prepared at submission. Documents go to the log in batches ([`crate::batch`]); a
//! document's shingles are sent only once the document is in the log, so that a
//! submission cut off anywhere leaves the shards' streams behind the documents', never
//! ahead, and the next one completes them. Each document's admission key follows it
//! into [`KEYS`] the same way; a document whose key is there was admitted before and is
//! left out, as `ingest` leaves out one stored before.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Instant;

use textorigin_core::config::Density;
use textorigin_core::engine::{Engine, Prepared};
use textorigin_core::index::{IndexShape, IndexWork};
use textorigin_core::select::START;
use textorigin_core::shard::{marks, split};
use textorigin_store::ingest::{inputs, Input};
use textorigin_store::input::Limits;
use textorigin_store::storage::store::{key_name, DocumentKeys};

use crate::batch::{AGE, RECORDS};
use crate::log::{Appends, Log, LogError};
use crate::searched::Searched;
use crate::wire::{decode, encode, items_stream, subject, Doc, Items, Key, Meta, DOCS, KEYS};
use crate::{ClusterError, Result};

/// What happened to an input of [`submit`], in input order.
#[derive(Debug)]
pub enum Submitted {
    /// A file was read (or could not be).
    File,
    /// Document `id` was admitted.
    Doc(u64),
    /// A document admitted before (the same admission key as `ingest`'s: its file's
    /// name, its content and its occurrence in the file) was left out.
    Before,
    /// A document's warning (e.g. invalid UTF-8 replaced).
    Warning(String),
    /// A file or document was not admitted, and why.
    Failed(String),
}

/// What a document's record holds besides the bytes `--max-doc-bytes` counts, at most
/// as submission reserves it: its name, source, URL and fields, encoded. A record larger
/// all the same is left out with the way on ([`LogError::TooLarge`]).
pub const DOC_RESERVE: usize = 64 << 10;

/// The largest document the log takes (`--max-doc-bytes` at most): what its servers take
/// in a record less [`DOC_RESERVE`]; None before the client has heard from a server.
pub fn largest_document(log: &Log) -> Option<u64> {
    log.largest_record().map(|l| l.saturating_sub(DOC_RESERVE) as u64)
}

/// Admits the documents of `paths` into the log after those already there, in order,
/// as `ingest` reads them; the ones `ingest` would refuse (no words, a publication date
/// that is not one) are reported and left out, and so are those admitted before unless
/// `force` (`ingest --force`), so that document ids are the ones `ingest` gives. Where documents are
/// prepared at submission ([`Meta::prepared`]) each document's selected shingles go to
/// their shards' streams after it, and a submission that was cut off between the two
/// is completed first (every append is exactly once). `limits` are `ingest`'s (the
/// deployment's configuration says how HTML is read).
pub fn submit(
    log: &Log,
    meta: &Meta,
    paths: &[PathBuf],
    limits: Limits,
    force: bool,
    mut event: impl FnMut(Submitted),
) -> Result<u64> {
    let mut engine = Engine::new(meta.config.clone());
    let mut last = log.last_seq(DOCS)?;
    // Arrival times never go back, across submissions too.
    let mut arrived_ms = match last {
        0 => 0,
        _ => Doc::decode(&log.get(DOCS, last)?.ok_or(ClusterError::NoMeta)?)?.arrived_ms,
    };
    let mut docs = log.appends(DOCS, &subject(DOCS));
    let mut keys = Keys::read(log, last)?;
    let mut shards = meta.prepared.then(|| Splitter::new(log, meta)).transpose()?;
    if let Some(s) = &mut shards {
        s.catch_up(log, &mut engine, last)?;
    }
    // What follows the documents not yet known to be in the log.
    let mut held: Vec<Held> = Vec::new();
    // The keys of the documents of the file being read.
    let mut file: Option<DocumentKeys> = None;
    let mut oldest = Instant::now();
    // HTML read as the deployment's configuration says, as `ingest` reads it.
    let limits = Limits { html: meta.config.html, ..limits };
    for input in inputs(paths, limits) {
        let doc = match input {
            Input::File(f) => {
                event(Submitted::File);
                file = f
                    .map_err(|e| event(Submitted::Failed(e.to_string())))
                    .ok()
                    .map(|p| DocumentKeys::new(key_name(&p)));
                continue;
            }
            Input::Doc(Err(e)) => {
                event(Submitted::Failed(e.to_string()));
                continue;
            }
            Input::Doc(Ok(doc)) => doc,
        };
        // Counted for every document, as `ingest` counts them: a repeated document
        // gets the same occurrence number every time.
        let key = file.as_mut().map(|k| k.next(&doc));
        if !force && key.is_some_and(|k| keys.admitted.contains(&k)) {
            event(Submitted::Before);
            continue;
        }
        for w in &doc.warnings {
            event(Submitted::Warning(w.clone()));
        }
        let prepared = engine.prepare(&doc.text);
        // A deployment stores no bad date undated.
        if let Err(e) = textorigin_store::intake::admissible(&doc, !prepared.tokens().is_empty(), false) {
            event(Submitted::Failed(e.to_string()));
            continue;
        }
        // Prepared at submission, a deployment labels no site templates (`deploy::settle`).
        let work = shards.as_ref().map(|s| s.searched.work((&doc.text, prepared.tokens()), &[])).unwrap_or_default();
        arrived_ms = arrived_ms.max(textorigin_store::clock::now_ms());
        let msg = Doc {
            name: doc.name,
            source: doc.source,
            url: doc.url,
            published_at: doc.published_at,
            arrived_ms,
            text: doc.text,
            meta: doc.meta,
            id_number: doc.id_number,
            date_field: doc.date_field,
            key,
        };
        match docs.push(last + 1, msg.encode()) {
            // A document the log server would refuse (refused before anything is sent)
            // is left out, as `ingest` leaves out one over `--max-doc-bytes`, with the way on.
            Err(LogError::TooLarge { bytes, largest, .. }) => {
                event(Submitted::Failed(format!(
                    "{}: {bytes} bytes as a message of the log, more than its server takes ({largest}): not \
                     admitted; raise max_payload in nats-server's configuration (64MB at most) to admit it",
                    msg.name
                )));
                continue;
            }
            pushed => pushed?,
        }
        last += 1;
        keys.admitted.extend(key);
        if held.is_empty() {
            oldest = Instant::now();
        }
        let messages = shards.as_ref().map(|s| s.messages(prepared, msg.time(), work));
        held.push(Held { seq: last, key, messages });
        if held.len() >= RECORDS || oldest.elapsed() >= AGE {
            release(&mut docs, &mut keys, shards.as_mut(), &mut held)?;
        }
        event(Submitted::Doc(last));
    }
    release(&mut docs, &mut keys, shards.as_mut(), &mut held)?;
    keys.appends.flush()?;
    if let Some(s) = &mut shards {
        s.appends.iter_mut().try_for_each(Appends::flush)?;
    }
    Ok(last)
}

/// What follows document `seq` once it is in the log: its admission key, and the shards'
/// messages about it where documents are prepared at submission.
struct Held {
    seq: u64,
    key: Option<u128>,
    messages: Option<Vec<Vec<u8>>>,
}

/// Makes sure the documents pushed are in the log, then sends what follows those held
/// back.
fn release(docs: &mut Appends, keys: &mut Keys, mut shards: Option<&mut Splitter>, held: &mut Vec<Held>) -> Result<()> {
    docs.flush()?;
    textorigin_store::failpoint::hit("submit.after-doc")
        .map_err(|source| ClusterError::Io { what: "submission", source })?;
    for Held { seq, key, messages } in held.drain(..) {
        keys.appends.push(seq, encode(&Key(key)))?;
        if let (Some(s), Some(messages)) = (shards.as_deref_mut(), messages) {
            s.push(seq, messages)?;
        }
    }
    Ok(())
}

/// The admission keys of the documents in the log, and their stream's writer.
struct Keys {
    admitted: HashSet<u128>,
    appends: Appends,
}

impl Keys {
    /// The keys of documents 1 to `last`: [`KEYS`] read whole, and completed first from
    /// the documents themselves where a submission was cut off between a document and
    /// its key. A document trimmed before its key was kept (a log written by a build
    /// before [`KEYS`]) has none.
    fn read(log: &Log, last: u64) -> Result<Keys> {
        let kept = crate::deploy::keys_kept(log)?;
        let mut admitted = HashSet::new();
        if kept > 0 {
            let mut reader = log.reader(KEYS, 1)?;
            for _ in 0..kept {
                let Key(key) = decode(&reader.read()?.1, "admission key")?;
                admitted.extend(key);
            }
        }
        let mut appends = log.appends(KEYS, &subject(KEYS));
        let mut next = kept + 1;
        if next <= last {
            let mut docs = match log.reader(DOCS, next) {
                Err(LogError::Trimmed { first, .. }) => {
                    for seq in next..first.min(last + 1) {
                        appends.push(seq, encode(&Key(None)))?;
                    }
                    next = first;
                    log.reader(DOCS, first)?
                }
                docs => docs?,
            };
            for _ in next..=last {
                let (seq, bytes) = docs.read()?;
                let Doc { key, .. } = Doc::decode(&bytes)?;
                appends.push(seq, encode(&Key(key)))?;
                admitted.extend(key);
            }
        }
        appends.flush()?;
        Ok(Keys { admitted, appends })
    }
}

/// Submission's side of a deployment whose documents it prepares: each document's
/// selected shingles, split among the shards.
struct Splitter {
    shards: u32,
    /// Each shard's stream of them.
    appends: Vec<Appends>,
    buckets: u64,
    searched: Searched,
    /// The deployment's index region, which the shards' parts of the index work split.
    shape: IndexShape,
    /// Whether the density is adaptive (each shard then gets every shingle's marks).
    adaptive: bool,
}

impl Splitter {
    fn new(log: &Log, meta: &Meta) -> Result<Splitter> {
        let params = meta.config.table_params();
        params.check()?;
        let searched = Searched::new(&meta.config);
        let shape = searched.shape()?;
        let appends = (0..meta.shards).map(|s| log.appends(&items_stream(s), &subject(&items_stream(s)))).collect();
        let adaptive = meta.config.density == Density::Adaptive;
        Ok(Splitter { shards: meta.shards, appends, buckets: params.buckets(), searched, shape, adaptive })
    }

    /// Every shard's message about `doc`: its selected shingles in the shard's range,
    /// at `time` in publication order, and the shard's part of its index work. With the
    /// adaptive density the shingles are those a table's starting threshold selects,
    /// with every one's rank and top byte, for each worker to keep those the threshold
    /// in force selects ([`textorigin_core::shard::part_at_density`]).
    fn messages(&self, mut doc: Prepared, time: i64, index: IndexWork) -> Vec<Vec<u8>> {
        doc.at_density(START);
        let selected = doc.selected() as u32;
        let (ranks, tops) = if self.adaptive { marks(doc.items()) } else { Default::default() };
        let parts = split(doc.items(), self.buckets, self.shards).into_iter().enumerate();
        parts
            .map(|(s, items)| {
                let index = self.searched.part_of(&index, &self.shape, s as u32, self.shards);
                encode(&Items { time, selected, items, index, ranks: ranks.clone(), tops: tops.clone() })
            })
            .collect()
    }

    /// Appends record `seq` of every shard's stream (the shards' `messages`).
    fn push(&mut self, seq: u64, messages: Vec<Vec<u8>>) -> Result<()> {
        for (appends, message) in self.appends.iter_mut().zip(messages) {
            appends.push(seq, message)?;
        }
        Ok(())
    }

    /// Completes the shards' streams up to document `last` (a submission cut off after
    /// a document and before its shingles), preparing those documents again.
    fn catch_up(&mut self, log: &Log, engine: &mut Engine, last: u64) -> Result<()> {
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
            let prepared = engine.prepare(&doc.text);
            let work = self.searched.work((&doc.text, prepared.tokens()), &[]);
            let messages = self.messages(prepared, doc.time(), work);
            self.push(seq, messages)?;
        }
        Ok(self.appends.iter_mut().try_for_each(Appends::flush)?)
    }
}
