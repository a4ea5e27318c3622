//! Admitting documents into a deployment's log ([`submit`]), in order, as `ingest`
//! reads them, with their selected shingles split among the shards where documents are
//! prepared at submission.

use std::path::PathBuf;

use textorigin_core::engine::{Engine, Prepared};
use textorigin_core::index::{IndexShape, IndexWork};
use textorigin_core::shard::split;
use textorigin_store::ingest::{inputs, Input};
use textorigin_store::input::Limits;

use crate::log::Log;
use crate::searched::Searched;
use crate::wire::{encode, items_stream, subject, Doc, Items, Meta, DOCS};
use crate::{ClusterError, Result};

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
    // HTML read as the deployment's configuration says, as `ingest` reads it.
    let limits = Limits { html: meta.config.html, ..Limits::from(max_doc_bytes) };
    for input in inputs(paths, limits) {
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
        let prepared = engine.prepare(&doc.text);
        // A deployment stores no bad date undated.
        if let Err(e) = textorigin_store::intake::admissible(&doc, !prepared.tokens().is_empty(), false) {
            event(Submitted::Failed(e.to_string()));
            continue;
        }
        let work = shards.as_ref().map(|s| s.searched.work(&doc.text, prepared.tokens())).unwrap_or_default();
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
        };
        log.append(DOCS, &docs_subject, last + 1, &msg.encode())?;
        last += 1;
        textorigin_store::failpoint::hit("submit.after-doc")
            .map_err(|source| ClusterError::Io { what: "submission", source })?;
        if let Some(s) = &shards {
            s.append(log, &prepared, last, msg.time(), work)?;
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

    /// Appends message `seq` of every shard's stream: the selected shingles of `doc`,
    /// at `time` in publication order, and the shard's part of its index work.
    fn append(&self, log: &Log, doc: &Prepared, seq: u64, time: i64, index: IndexWork) -> Result<()> {
        let selected = doc.selected() as u32;
        for (s, items) in split(doc.items(), self.buckets, self.shards).into_iter().enumerate() {
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
            let prepared = engine.prepare(&doc.text);
            let work = self.searched.work(&doc.text, prepared.tokens());
            self.append(log, &prepared, seq, doc.time(), work)?;
        }
        Ok(())
    }
}
