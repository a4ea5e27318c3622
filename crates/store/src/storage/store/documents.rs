//! Documents: metadata (`docs`), the name index (`names`), texts (`text`) and results
//! (`results`), all keyed by sequence number.

use rocksdb::{IteratorMode, WriteBatch};
use serde::{Deserialize, Serialize};
use textorigin_core::engine::DocResult;

use crate::input::date::parse_published;

use super::cache::DocFacts;
use super::codec::{decode_with_tail, encode, seq_key};
use super::table::{Empty, Postcard, Raw, Value};
use super::{Result, Store, StoreError, CF_DOCS, CF_META, CF_NAMES, CF_RESULTS, CF_STAGE, CF_TEXT};

/// Metadata of a stored document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocMeta {
    /// Sequence number: the document's id and its place in the stream.
    pub seq: u64,
    pub name: String,
    /// File (and line) it came from.
    pub source: String,
    pub url: Option<String>,
    pub published_at: Option<String>,
    /// Bytes of stored text.
    pub text_bytes: u64,
    pub tokens: u32,
    /// xxh3-128 of the stored text, hex.
    pub content_hash: String,
    /// Wall-clock time of ingestion, ms since the Unix epoch (not part of results).
    pub ingested_at_ms: u64,
    /// The input's further fields (a JSON object's text; `input::MAX_META_BYTES` at
    /// most), None when it had none. Stored behind the other fields (see
    /// `encode_doc`), so documents of every schema read alike.
    #[serde(skip)]
    pub meta: Option<String>,
    /// The way it came in (None for documents stored before), and whether
    /// its date orders it: false when that way may not take origins over
    /// (`--take-over`), so that it stands in arrival order with its date kept. Stored
    /// behind `meta` (see `encode_doc`).
    #[serde(skip)]
    pub via: Option<Via>,
    #[serde(skip)]
    pub by_arrival: bool,
    /// Its name was a JSON number `id`. Stored behind the way in, when there
    /// is one (every document stored by a build that knows it has one); older builds
    /// read past it.
    #[serde(skip)]
    pub id_number: bool,
    /// Its date came as the JSON field `date` (behind `id_number`, when either is set).
    #[serde(skip)]
    pub date_field: bool,
}

/// The ways a document comes in; `--take-over` says which may take origins over by an
/// earlier publication date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Via {
    /// A file dropped into the daemon's spool.
    Spool,
    /// `POST /api/documents`.
    Http,
    /// `textorigin ingest`.
    Ingest,
    /// The Python package.
    Python,
    /// A sharded deployment's submission (`cluster submit`).
    Cluster,
}

impl Via {
    pub const ALL: [Via; 5] = [Via::Spool, Via::Http, Via::Ingest, Via::Python, Via::Cluster];

    pub fn name(self) -> &'static str {
        match self {
            Via::Spool => "spool",
            Via::Http => "http",
            Via::Ingest => "ingest",
            Via::Python => "python",
            Via::Cluster => "cluster",
        }
    }

    /// The way named `name` (as [`Via::name`] gives it).
    pub fn named(name: &str) -> Option<Via> {
        Via::ALL.into_iter().find(|v| v.name() == name)
    }
}

impl DocMeta {
    /// When the document was published, for ordering: its `published_at` in
    /// milliseconds since the epoch (`crate::input::date`), or, undated (or stored
    /// under `--bad-dates undated`), its arrival, `ingested_at_ms` (which ingestion
    /// keeps from going backwards, so that undated documents keep their arrival order).
    /// Ingestion computes the same for a document it is storing ([`arrival_time`]).
    /// A document whose way in may not take origins over ([`DocMeta::by_arrival`])
    /// takes its arrival too.
    pub fn time(&self) -> i64 {
        publication_time(self.published_at.as_deref().filter(|_| !self.by_arrival), self.ingested_at_ms)
    }
}

/// A place in publication order: the publication date, or, for an undated document (or
/// a date that is not one), its arrival in milliseconds ([`arrival_time`]). A sharded
/// deployment's workers order documents by it too.
pub fn publication_time(published_at: Option<&str>, arrival_ms: u64) -> i64 {
    published_at.and_then(|p| parse_published(p).ok()).unwrap_or(arrival_time(arrival_ms))
}

/// An arrival in milliseconds as a publication time.
pub fn arrival_time(arrival_ms: u64) -> i64 {
    arrival_ms.min(i64::MAX as u64) as i64
}

/// A document's metadata value: the fields before `meta` as every schema wrote them,
/// then, when the document has metadata or a way in, its metadata as a postcard string
/// (empty for none), then, when it has a way in, a postcard `(Via, bool)`: the way and
/// [`DocMeta::by_arrival`]. Earlier builds read such a value and ignore the tail
/// (postcard reads what it needs), and a value without a tail reads as no metadata and
/// no way: no schema step rewrites the documents.
fn encode_doc(meta: &DocMeta) -> Vec<u8> {
    let mut v = encode(meta);
    if meta.meta.is_some() || meta.via.is_some() {
        let text = meta.meta.as_deref().unwrap_or("");
        v.extend(postcard::to_allocvec(text).expect("postcard encoding of a string cannot fail"));
    }
    if let Some(via) = meta.via {
        v.extend(postcard::to_allocvec(&(via, meta.by_arrival)).expect("postcard encoding of a pair cannot fail"));
        if meta.id_number || meta.date_field {
            v.extend(postcard::to_allocvec(&meta.id_number).expect("postcard encoding of a bool cannot fail"));
        }
        if meta.date_field {
            v.extend(postcard::to_allocvec(&true).expect("postcard encoding of a bool cannot fail"));
        }
    }
    v
}

/// The values of `docs` ([`encode_doc`]).
pub(super) struct DocValue;

impl Value for DocValue {
    type In = DocMeta;
    type Out = DocMeta;
    fn encode(meta: &DocMeta) -> Vec<u8> {
        encode_doc(meta)
    }
    fn decode(bytes: &[u8]) -> std::result::Result<DocMeta, String> {
        decode_doc(bytes)
    }
}

fn decode_doc(bytes: &[u8]) -> std::result::Result<DocMeta, String> {
    let (mut meta, tail) = decode_with_tail::<DocMeta>(bytes)?;
    if !tail.is_empty() {
        let (text, rest) = postcard::take_from_bytes::<String>(tail).map_err(|e| format!("metadata: {e}"))?;
        meta.meta = (!text.is_empty()).then_some(text);
        if !rest.is_empty() {
            let ((via, by_arrival), rest) =
                postcard::take_from_bytes::<(Via, bool)>(rest).map_err(|e| format!("way in: {e}"))?;
            (meta.via, meta.by_arrival) = (Some(via), by_arrival);
            if !rest.is_empty() {
                let (id_number, rest) = postcard::take_from_bytes::<bool>(rest).map_err(|e| format!("id kind: {e}"))?;
                meta.id_number = id_number;
                if !rest.is_empty() {
                    meta.date_field = postcard::from_bytes::<bool>(rest).map_err(|e| format!("date field: {e}"))?;
                }
            }
        }
    }
    Ok(meta)
}

/// `names` key: the name, 0x00, the sequence number.
fn name_key(name: &str, seq: u64) -> Vec<u8> {
    let mut k = name.as_bytes().to_vec();
    k.push(0);
    k.extend_from_slice(&seq_key(seq));
    k
}

impl Store {
    /// Adds a document's metadata, name, text and result to a batch.
    pub(super) fn add_document(&self, b: &mut WriteBatch, meta: &DocMeta, text: &str, result: &DocResult) {
        self.put(b, CF_DOCS, &meta.seq, meta);
        self.put(b, CF_NAMES, &name_key(&meta.name, meta.seq), &());
        self.put(b, CF_TEXT, &meta.seq, text);
        self.put(b, CF_RESULTS, &meta.seq, result);
    }

    /// Adds what the data directory's stage keeps with document `seq` to a batch
    /// ([`DocumentWrite::stage`](super::DocumentWrite::stage)).
    pub(super) fn add_stage_record(&self, b: &mut WriteBatch, seq: u64, record: &[u8]) {
        self.put(b, CF_STAGE, &seq, record);
    }

    /// What the stage kept with document `seq` (a deployment's partition: its feedback).
    pub fn stage_record(&self, seq: u64) -> Result<Option<Vec<u8>>> {
        self.read(CF_STAGE, &seq)
    }

    /// Metadata of document `seq`.
    pub fn doc(&self, seq: u64) -> Result<Option<DocMeta>> {
        self.read(CF_DOCS, &seq)
    }

    /// Document `seq`'s publication time ([`DocMeta::time`]; read through a cache:
    /// near-duplicate and quotation search ask it of every pair they find).
    pub fn published_time(&self, seq: u64) -> Result<Option<i64>> {
        Ok(self.facts(seq)?.map(|f| f.time))
    }

    /// The xxh3-128 of document `seq`'s stored text, from its metadata (read through
    /// the same cache as [`Store::published_time`]); None for a document held elsewhere.
    pub(crate) fn text_hash(&self, seq: u64) -> Result<Option<u128>> {
        Ok(self.facts(seq)?.and_then(|f| f.text_hash))
    }

    fn facts(&self, seq: u64) -> Result<Option<DocFacts>> {
        if let Some(f) = self.caches.facts.get(&seq) {
            return Ok(Some(f));
        }
        let facts = match self.elsewhere_of(seq) {
            Some(e) => match e.time(seq).map_err(|source| StoreError::Elsewhere { seq, source })? {
                Some(t) => Some(t),
                None => self.book_time(seq)?,
            }
            .map(|time| DocFacts { time, text_hash: None }),
            None => self.doc(seq)?.map(|meta| DocFacts {
                time: meta.time(),
                text_hash: u128::from_str_radix(&meta.content_hash, 16).ok(),
            }),
        };
        let Some(facts) = facts else { return Ok(None) };
        self.caches.facts.put(seq, facts, super::cache::FACTS_ENTRY);
        Ok(Some(facts))
    }

    /// Document `seq`'s place in publication order: (time, sequence number), equal
    /// times by arrival; a document not stored last.
    pub(super) fn publication_key(&self, seq: u64) -> Result<(i64, u64)> {
        Ok((self.published_time(seq)?.unwrap_or(i64::MAX), seq))
    }

    /// Text of document `seq`.
    pub fn text(&self, seq: u64) -> Result<Option<String>> {
        if let Some(e) = self.elsewhere_of(seq) {
            return e.text(seq).map_err(|source| StoreError::Elsewhere { seq, source });
        }
        self.read(CF_TEXT, &seq)
    }

    /// The sequence numbers of the stored texts, ascending.
    pub(crate) fn text_seqs(&self) -> impl Iterator<Item = Result<u64>> + '_ {
        self.scan(CF_TEXT.records::<Empty>(), IteratorMode::Start).map(|item| Ok(super::codec::be_u64(&item?.0, 0)))
    }

    /// Result of document `seq`.
    pub fn result(&self, seq: u64) -> Result<Option<DocResult>> {
        if let Some(e) = self.elsewhere_of(seq) {
            return match e.result(seq).map_err(|source| StoreError::Elsewhere { seq, source })? {
                Some(r) => Ok(Some(r)),
                None => self.book_result(seq),
            };
        }
        self.read(CF_RESULTS, &seq)
    }

    /// xxh3-64 of document `seq`'s stored result (its encoded bytes): two results are
    /// equal when their digests are (`rebuild --reanalyse` counts what it changed).
    pub fn result_digest(&self, seq: u64) -> Result<Option<u64>> {
        Ok(self.read(CF_RESULTS.records::<Raw>(), &seq)?.map(|v| xxhash_rust::xxh3::xxh3_64(&v)))
    }

    /// Sequence numbers of the documents named `name`, oldest first.
    pub fn seqs_named(&self, name: &str) -> Result<Vec<u64>> {
        let mut prefix = name.as_bytes().to_vec();
        prefix.push(0);
        let mut out = Vec::new();
        for item in self.scan(CF_NAMES, IteratorMode::From(&prefix, rocksdb::Direction::Forward)) {
            let (k, ()) = item?;
            if !k.starts_with(&prefix) {
                break;
            }
            if let Ok(seq) = <[u8; 8]>::try_from(&k[prefix.len()..]) {
                out.push(u64::from_be_bytes(seq));
            }
        }
        for s in self.siblings() {
            out.extend(s.seqs_named(name)?);
        }
        out.sort_unstable();
        Ok(out)
    }

    /// In a partition of a deployment, records that another partition's document
    /// `seq`, of file `file`, is stored under `name` (`meta`, `nm/` + name + 0 + seq):
    /// what naming this partition's pages reads beside its own documents' names.
    pub fn put_name_of_theirs(&self, name: &str, seq: u64, file: &str) -> Result<()> {
        let mut b = WriteBatch::default();
        self.put(&mut b, CF_META.records::<Postcard<String>>(), &theirs_name_key(name, seq), &file.to_string());
        self.write(b, false)
    }

    /// The files of the other partitions' documents stored under `name`.
    pub fn files_of_theirs_named(&self, name: &str) -> Result<Vec<String>> {
        if !self.partitioned() {
            return Ok(Vec::new());
        }
        let prefix = theirs_name_key(name, 0);
        let prefix = &prefix[..prefix.len() - 8];
        let mut out = Vec::new();
        // Raw: the keys after the prefix are other records of `meta`.
        for item in self.scan(CF_META.records::<Raw>(), IteratorMode::From(prefix, rocksdb::Direction::Forward)) {
            let (k, bytes) = item?;
            if !k.starts_with(prefix) {
                break;
            }
            out.push(self.decode_value::<Postcard<String>>(CF_META.name, &k, &bytes)?);
        }
        Ok(out)
    }

    /// Resolves `#N` (always the id N), or a name (the latest document of that name) or
    /// a bare id: one that is both the name of one document and the id of another is
    /// [`StoreError::Ambiguous`], never silently one of them.
    pub fn resolve(&self, name_or_id: &str) -> Result<u64> {
        let not_found = || StoreError::NotFound(name_or_id.to_string());
        let exists = |seq: u64| -> Result<Option<u64>> { Ok(self.doc(seq)?.map(|_| seq)) };
        if let Some(id) = name_or_id.strip_prefix('#') {
            return id.parse::<u64>().ok().map_or(Ok(None), exists)?.ok_or_else(not_found);
        }
        let named = self.seqs_named(name_or_id)?.last().copied();
        let id = name_or_id.parse::<u64>().ok().map_or(Ok(None), exists)?;
        match (named, id) {
            (Some(named), Some(id)) if named != id => {
                Err(StoreError::Ambiguous { given: name_or_id.to_string(), named, id })
            }
            (Some(seq), _) | (None, Some(seq)) => Ok(seq),
            (None, None) => Err(not_found()),
        }
    }

    /// Every document's metadata in sequence order.
    pub fn docs(&self) -> impl Iterator<Item = Result<DocMeta>> + '_ {
        self.docs_in(IteratorMode::Start)
    }

    /// The metadata of the documents from sequence number `first` on, in order.
    pub fn docs_from(&self, first: u64) -> impl Iterator<Item = Result<DocMeta>> + '_ {
        self.docs_in(IteratorMode::From(&seq_key(first), rocksdb::Direction::Forward))
    }

    /// Every document's metadata, newest first.
    pub fn docs_newest_first(&self) -> impl Iterator<Item = Result<DocMeta>> + '_ {
        self.docs_in(IteratorMode::End)
    }

    /// The metadata of the documents up to sequence number `last`, newest first.
    pub fn docs_down_from(&self, last: u64) -> impl Iterator<Item = Result<DocMeta>> + '_ {
        self.docs_in(IteratorMode::From(&seq_key(last), rocksdb::Direction::Reverse))
    }

    /// In a read of partitions, every partition's, merged.
    fn docs_in(&self, mode: IteratorMode<'_>) -> impl Iterator<Item = Result<DocMeta>> + '_ {
        let down = matches!(mode, IteratorMode::End | IteratorMode::From(_, rocksdb::Direction::Reverse));
        self.docs_merged(Box::new(self.docs_here(mode)), |s| Box::new(s.docs_here(mode)), down)
    }

    fn docs_here(&self, mode: IteratorMode<'_>) -> impl Iterator<Item = Result<DocMeta>> + '_ {
        self.scan(CF_DOCS, mode).map(|item| item.map(|(_, meta)| meta))
    }

    /// The name of document `seq` (`#seq` for a document the store does not have);
    /// errors of the store are errors.
    pub fn name_of(&self, seq: u64) -> Result<String> {
        Ok(self.doc(seq)?.map_or_else(|| format!("#{seq}"), |d| d.name))
    }
}

/// The key of [`Store::put_name_of_theirs`].
fn theirs_name_key(name: &str, seq: u64) -> Vec<u8> {
    [&b"nm/"[..], name.as_bytes(), &[0], &seq.to_be_bytes()].concat()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::store::codec::decode;

    #[test]
    fn metadata_rides_behind_the_fields_every_build_reads() {
        let mut m = DocMeta {
            seq: 3,
            name: "n".into(),
            source: "s".into(),
            url: Some("u".into()),
            published_at: None,
            text_bytes: 5,
            tokens: 1,
            content_hash: "h".into(),
            ingested_at_ms: 9,
            meta: Some(r#"{"title":"A title"}"#.into()),
            via: None,
            by_arrival: false,
            id_number: false,
            date_field: false,
        };
        assert_eq!(decode_doc(&encode_doc(&m)).unwrap(), m);
        // A way in rides behind the metadata, with or without metadata.
        for (meta, by_arrival) in [(m.meta.clone(), true), (None, false)] {
            let w = DocMeta { meta, via: Some(Via::Http), by_arrival, ..m.clone() };
            assert_eq!(decode_doc(&encode_doc(&w)).unwrap(), w);
            for (id_number, date_field) in [(true, false), (false, true), (true, true)] {
                let shaped = DocMeta { id_number, date_field, ..w.clone() };
                assert_eq!(decode_doc(&encode_doc(&shaped)).unwrap(), shaped);
            }
            assert_eq!(
                decode::<DocMeta>(&encode_doc(&w)).unwrap(),
                DocMeta { meta: None, via: None, by_arrival: false, ..m.clone() }
            );
        }
        // What a build before metadata reads of it: every other field.
        assert_eq!(decode::<DocMeta>(&encode_doc(&m)).unwrap(), DocMeta { meta: None, ..m.clone() });
        // What such a build wrote reads as no metadata.
        m.meta = None;
        assert_eq!(decode_doc(&encode(&m)).unwrap(), m);
        assert!(decode_doc(&[&encode(&m)[..], &[0xff]].concat()).unwrap_err().starts_with("metadata"));
    }
}
