//! The messages of the log, each a version byte and a `postcard` body
//! (`docs/SCALE-OUT.md`, "Streams and messages").

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use textorigin_core::config::Config;
use textorigin_core::engine::{DocResult, ShardItem};
use textorigin_core::index::{IndexAnswers, IndexWork};
use textorigin_core::table::Hit;
use textorigin_store::storage::store::documents::publication_time;
use textorigin_store::storage::store::partitions::partition_of;
use textorigin_store::storage::store::Revised;

/// The message format version this build writes and reads (2: documents carry their
/// arrival, answers the origins taken over, feedback the revisions' shingles; 3: the
/// deployment's partitions, each with its feedback stream; 4: a partition's outcome
/// carries the document's index keys; 5: the shards hold the signature and
/// near-duplicate sections of the derived indexes: answers carry their part's answers
/// to the document's searches, outcomes the document's words only, and shingles
/// prepared at submission the document's index work; 6: outcomes carry no words, each
/// partition counts every document's from its text; 7: a position says whether its
/// process needs the whole documents stream; 8: an outcome's results carry their
/// density threshold and passages; 9: the configuration in the deployment's description
/// and the shard images carries the adaptive density's lag, schema 23; 10: answers carry
/// the threshold their shard probed at and the asks for a raise its probe made, and
/// shard images the pending raise; a prepared document's shingles are those of a
/// table's starting threshold, with every shingle's rank and top byte; 11: shard
/// images carry every site's line counts).
pub const VERSION: u8 = 11;

/// The format of the documents before [`DOC_VERSION`], still read.
const DOC_BEFORE: u8 = 7;

/// The deployment's description: message 1 of [`META`].
pub const META: &str = "TXO_META";
/// The documents, in admission order: message `n` is document `n`.
pub const DOCS: &str = "TXO_DOCS";
/// The documents' admission keys ([`Key`]), record `n` document `n`'s: what `cluster
/// submit` reads to leave out the documents admitted before. Never trimmed.
pub const KEYS: &str = "TXO_KEYS";

/// Who appends to `stream`, and what its record `n` is, for a process that waits for
/// one (`TXO_HITS_2` → "shard worker 2 (`cluster worker --shard 2`), its answer for
/// document #n").
pub fn writer_of(stream: &str, n: u64) -> String {
    let (kind, number) = stream.rsplit_once('_').filter(|(_, k)| k.parse::<u32>().is_ok()).unwrap_or((stream, ""));
    match kind {
        DOCS => format!("the submitter (`cluster submit`), document #{n}"),
        KEYS => format!("the submitter (`cluster submit`), the admission key of document #{n}"),
        "TXO_HITS" => {
            format!("shard worker {number} (`cluster worker --shard {number}`), its answer for document #{n}")
        }
        "TXO_LOOKUPS" => format!("shard worker {number} (`cluster worker --shard {number}`), its lookups #{n}"),
        "TXO_ITEMS" => format!("the submitter (`cluster submit`), shard {number}'s shingles of document #{n}"),
        "TXO_FEEDBACK" => format!("partition {number} (`cluster aggregate`), its feedback #{n}"),
        "TXO_RESULTS" => format!("partition {number} (`cluster aggregate`), its outcome #{n}"),
        _ => format!("record #{n}"),
    }
}

/// The subject of a stream (`TXO_HITS_2` → `txo.hits.2`).
pub fn subject(stream: &str) -> String {
    stream.to_ascii_lowercase().replace('_', ".")
}

/// Where each process can restart from (the oldest of its valid checkpoint slots): the
/// latest message of subject [`position_subject`] per process, a [`Position`].
pub const POSITIONS: &str = "TXO_POSITIONS";

/// A process's message in [`POSITIONS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    /// A restart reads the log only after this document.
    pub seq: u64,
    /// A partition of several that cannot read every other partition's store: it reads
    /// their older texts from the documents stream, which `cluster trim` then keeps whole.
    pub whole_log: bool,
    /// The identity of the store its checkpoints are of (the deployment's for a
    /// worker): a partition reads another's store beside its own only if it is this one.
    pub identity: u64,
}

/// A process of the deployment by name: worker `Some(s)` is `w<s>`, the aggregator
/// `agg`.
pub fn process_name(worker: Option<u32>) -> String {
    worker.map_or_else(|| "agg".to_string(), |s| format!("w{s}"))
}

/// The subject of the position of the process named `process` ([`process_name`],
/// [`partition_name`]: `txo.positions.w0`, `txo.positions.agg`, `txo.positions.agg1`).
pub fn position_subject(process: &str) -> String {
    format!("{}.{}", subject(POSITIONS), process)
}

/// Partition `p`'s feedback of its documents' estimates to the shards: message `k` is
/// the feedback of the `k`-th document it owns ([`Meta::owner`]).
pub fn feedback_stream(p: u32) -> String {
    format!("TXO_FEEDBACK_{p}")
}

/// Partition `p`'s outcomes of its documents (a deployment of several partitions):
/// message `k` is the [`Outcome`] of the `k`-th document it owns.
pub fn results_stream(p: u32) -> String {
    format!("TXO_RESULTS_{p}")
}

/// The name of partition `p`'s process: `agg` when it is the only one, else `agg<p>`.
pub fn partition_name(meta: &Meta, p: u32) -> String {
    partition_name_of(meta.partitions, p)
}

/// [`partition_name`] in a deployment of `partitions` partitions.
pub fn partition_name_of(partitions: u32, p: u32) -> String {
    if partitions == 1 {
        "agg".to_string()
    } else {
        format!("agg{p}")
    }
}

/// Shard `s`'s answers: record `n` is its answer for document `n`; a partition reads
/// its own documents' and skips the others' ([`crate::log::Log::sparse_reader`]).
pub fn hits_stream(s: u32) -> String {
    format!("TXO_HITS_{s}")
}

/// Shard `s`'s lookups for the revisions of take-overs: message `k` answers
/// the `k`-th feedback that lists revised documents ([`Lookups`]).
pub fn lookups_stream(s: u32) -> String {
    format!("TXO_LOOKUPS_{s}")
}

/// Shard `s`'s selected shingles of the documents (a deployment whose documents are
/// prepared at submission, [`Meta::prepared`]): message `n` is document `n`'s.
pub fn items_stream(s: u32) -> String {
    format!("TXO_ITEMS_{s}")
}

/// Errors of decoding a message.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("{what}: an empty message")]
    Empty { what: &'static str },
    #[error("{what}: message format {found}, this build reads {reads}: {}", if found < reads {
        "a deployment of an earlier build; finish it with that build (`cluster aggregate --until ID` on each \
         partition), `export` its results, and `cluster init` a new deployment for this one"
    } else {
        "a later build's; run the same textorigin version everywhere"
    })]
    Version { what: &'static str, found: u8, reads: u8 },
    #[error("{what}: not a batch of records (cut, or not written by textorigin)")]
    Batch { what: &'static str },
    #[error("{what}: undecodable message: {source}")]
    Decode { what: &'static str, source: postcard::Error },
}

/// A message body behind the version byte.
pub fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    let mut out = vec![VERSION];
    out.extend(postcard::to_allocvec(value).expect("postcard writes every value of ours"));
    out
}

/// Decodes a message written by [`encode`].
pub fn decode<T: DeserializeOwned>(bytes: &[u8], what: &'static str) -> Result<T, WireError> {
    match bytes.split_first() {
        None => Err(WireError::Empty { what }),
        Some((&VERSION, body)) => postcard::from_bytes(body).map_err(|source| WireError::Decode { what, source }),
        Some((&found, _)) => Err(WireError::Version { what, found, reads: VERSION }),
    }
}

/// What every process of a deployment must agree on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    /// Shards of the table.
    pub shards: u32,
    /// The engine's configuration (the aggregator's data directory has the same).
    pub config: Config,
    /// Documents are prepared once, by `cluster submit`, and each worker reads only its
    /// shard's selected shingles ([`items_stream`]), not the documents.
    pub prepared: bool,
    /// Partitions of the documents: partition `p` owns documents `n` with
    /// `(n − 1) mod partitions = p` and writes their feedback ([`feedback_stream`]).
    pub partitions: u32,
}

impl Meta {
    /// Partition `partition`'s data directory in the deployment's `dir`: `dir` itself
    /// when it is the only one, else the store's `p<partition>` there.
    pub fn partition_dir(&self, dir: &std::path::Path, partition: u32) -> std::path::PathBuf {
        if self.partitions == 1 {
            dir.to_path_buf()
        } else {
            textorigin_store::storage::datadir::partition_path(dir, partition)
        }
    }

    /// One line: the shard count, where documents are prepared and the canonical
    /// configuration.
    pub fn describe(&self) -> String {
        let at = if self.prepared { "submission" } else { "workers" };
        format!("shards={} partitions={} prepared-by={at} {}", self.shards, self.partitions, self.config.canonical())
    }

    /// The partition that owns document `n` (from 1), and its message in that
    /// partition's streams (from 1).
    pub fn owner(&self, n: u64) -> (u32, u64) {
        (partition_of(n, self.partitions), (n - 1) / u64::from(self.partitions) + 1)
    }

    /// The document of message `k` of partition `p`'s streams (0 for none, `k` = 0).
    pub fn owned(&self, p: u32, k: u64) -> u64 {
        match k {
            0 => 0,
            k => (k - 1) * u64::from(self.partitions) + u64::from(p) + 1,
        }
    }

    /// The first message of partition `p`'s streams about a document from `n` on.
    pub fn first_owned_from(&self, p: u32, n: u64) -> u64 {
        let (q, k) = self.owner(n);
        if p >= q {
            k
        } else {
            k + 1
        }
    }
}

/// The format of a document message ([`Doc::encode`]): its own number since documents
/// carry their input's id kind and date field (8), and their admission key (9); a
/// message of format 7 or 8 (a log written by a build before) is still read, without
/// them.
pub const DOC_VERSION: u8 = 9;

/// The format before [`DOC_VERSION`] whose body is the same but for the last field.
const DOC_UNKEYED: u8 = 8;

/// A document as admitted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Doc {
    pub name: String,
    pub source: String,
    pub url: Option<String>,
    pub published_at: Option<String>,
    /// When `cluster submit` admitted it (milliseconds since the epoch, never less than
    /// the document before): an undated document's place in publication order, the
    /// same for every process ([`Doc::time`]).
    pub arrived_ms: u64,
    pub text: String,
    /// The input's further fields as JSON text ([`textorigin_store::input::InputDoc::meta`]).
    pub meta: Option<String>,
    /// Its name was a JSON number `id` ([`textorigin_store::input::InputDoc::id_number`]).
    pub id_number: bool,
    /// Its date was the JSON field `date` ([`textorigin_store::input::InputDoc::date_field`]).
    pub date_field: bool,
    /// Its admission key, as `ingest` computes it (the file's name, the document's
    /// content and its occurrence: [`textorigin_store::storage::store::DocumentKeys`]);
    /// none for a document that came without a file.
    pub key: Option<u128>,
}

/// Record `n` of [`KEYS`]: document `n`'s [`Doc::key`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Key(pub Option<u128>);

/// A document message of format 7: these fields, then `meta` (a postcard
/// string) when there was one.
#[derive(Deserialize)]
struct DocBefore {
    name: String,
    source: String,
    url: Option<String>,
    published_at: Option<String>,
    arrived_ms: u64,
    text: String,
}

impl Doc {
    /// Its place in publication order as every process of the deployment sees it (the
    /// aggregator's data directory stores the arrival, `Admit::arrival_ms`, so its own
    /// order is the same: [`publication_time`]).
    pub fn time(&self) -> i64 {
        publication_time(self.published_at.as_deref(), self.arrived_ms)
    }

    /// The message: [`DOC_VERSION`], then the document.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![DOC_VERSION];
        out.extend(postcard::to_allocvec(self).expect("postcard writes every value of ours"));
        out
    }

    /// Decodes a message written by [`Doc::encode`], or by a build before it.
    pub fn decode(bytes: &[u8]) -> Result<Doc, WireError> {
        const WHAT: &str = "document";
        let decoded = match bytes.split_first() {
            None => return Err(WireError::Empty { what: WHAT }),
            Some((&DOC_VERSION, body)) => postcard::from_bytes(body),
            // Postcard writes fields in order, and a missing key as the byte 0.
            Some((&DOC_UNKEYED, body)) => postcard::from_bytes(&[body, &[0]].concat()),
            Some((&DOC_BEFORE, body)) => postcard::take_from_bytes::<DocBefore>(body).and_then(|(d, tail)| {
                let meta = (!tail.is_empty()).then(|| postcard::from_bytes(tail)).transpose()?;
                let DocBefore { name, source, url, published_at, arrived_ms, text } = d;
                let (id_number, date_field, key) = (false, false, None);
                Ok(Doc { name, source, url, published_at, arrived_ms, text, meta, id_number, date_field, key })
            }),
            Some((&found, _)) => return Err(WireError::Version { what: WHAT, found, reads: DOC_VERSION }),
        };
        decoded.map_err(|source| WireError::Decode { what: WHAT, source })
    }
}

/// A shard's answer for a document: what its selected shingles in the shard's buckets
/// found (indexes among the document's selected shingles, ascending).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    pub items: Vec<u32>,
    pub hits: Vec<Option<Hit>>,
    /// The origins whose entries the document took over (published after it): ascending,
    /// each once.
    pub taken: Vec<u64>,
    /// The shard's part of the signature and near-duplicate sections answering the
    /// document's searches (`crate::searched`; empty in a lookups message).
    pub index: IndexAnswers,
    /// The density threshold the shard selected the document's shingles at (the
    /// table's in force), and the asks for a raise its probe made
    /// ([`textorigin_core::table::Table::asks_of_document`]): the partition selects the
    /// document at that threshold and sums the asks into its feedback (0 and 0 in a
    /// lookups message).
    pub density: u8,
    pub asks: u64,
}

/// A shard's lookups for the documents a take-over revises (the feedback of document
/// `cause` listed them, [`textorigin_core::engine::Feedback::revise`]): for each, in
/// the feedback's order, what its shingles in the shard's buckets find in the table
/// right after the cause's phase 3 (`hits` of an [`Answer`]; `taken` empty).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lookups {
    pub cause: u64,
    pub found: Vec<Answer>,
}

/// What a partition's document came to, for the other partitions: its
/// result, and the revisions its arrival made (each revised document with its result
/// after and before), every result whole (`whole`: with what its serde form leaves out).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    pub seq: u64,
    #[serde(with = "whole")]
    pub result: DocResult,
    pub revised: Vec<Revision>,
}

impl Outcome {
    pub fn new(seq: u64, result: DocResult, revised: Vec<Revised>) -> Outcome {
        Outcome { seq, result, revised: revised.into_iter().map(Revision::from).collect() }
    }
}

/// A revision an [`Outcome`] carries: the revised document, its result after and before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Revision {
    pub seq: u64,
    #[serde(with = "whole")]
    pub after: DocResult,
    #[serde(with = "whole")]
    pub before: DocResult,
}

impl From<Revised> for Revision {
    fn from(Revised { seq, after, before }: Revised) -> Revision {
        Revision { seq, after, before }
    }
}

/// A result whole: its serde form, then what that form leaves out and the store keeps
/// behind it (its density threshold and what the passage attribution says beside its
/// blocks), so that a partition storing or reading another's result holds what the
/// one that made it holds.
mod whole {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use textorigin_core::align::Passages;
    use textorigin_core::engine::DocResult;

    pub fn serialize<S: Serializer>(r: &DocResult, s: S) -> Result<S::Ok, S::Error> {
        (r, r.density, &r.passages).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DocResult, D::Error> {
        let (mut r, density, passages) = <(DocResult, Option<u8>, Passages)>::deserialize(d)?;
        (r.density, r.passages) = (density, passages);
        Ok(r)
    }
}

/// A shard's selected shingles of a document, as [`textorigin_core::shard::split`]
/// gives them, and how many the document has in all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Items {
    /// The document's place in publication order ([`Doc::time`]).
    pub time: i64,
    pub selected: u32,
    pub items: Vec<ShardItem>,
    /// What the document asks of and adds to the searched sections (the same for
    /// every shard: each answers and adds in its part).
    pub index: IndexWork,
    /// With the adaptive density, the rank and top byte of each of the document's
    /// selected shingles at a table's starting threshold (`items` and `selected` are
    /// at it), for the worker to keep those the threshold in force selects
    /// ([`textorigin_core::shard::part_at_density`]); empty with the paper's density.
    pub ranks: Vec<u8>,
    pub tops: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_and_other_versions_are_refused() {
        let hit = Some(Hit { origin: 7, offset: 1, prev: 2, next: 3 });
        let a = Answer {
            items: vec![0, 3],
            hits: vec![None, hit],
            taken: vec![9],
            index: IndexAnswers::default(),
            density: 2,
            asks: 5,
        };
        let bytes = encode(&a);
        assert_eq!(decode::<Answer>(&bytes, "answer").unwrap(), a);
        let mut newer = bytes.clone();
        newer[0] = VERSION + 1;
        let err = decode::<Answer>(&newer, "answer").unwrap_err();
        assert!(matches!(err, WireError::Version { found, .. } if found == VERSION + 1));
        assert!(err.to_string().ends_with("a later build's; run the same textorigin version everywhere"), "{err}");
        // An earlier build's deployment: the way on is said.
        newer[0] = VERSION - 1;
        let err = decode::<Answer>(&newer, "answer").unwrap_err().to_string();
        assert!(err.contains("finish it with that build") && err.contains("`cluster init` a new deployment"), "{err}");
        assert!(matches!(decode::<Answer>(&[], "answer"), Err(WireError::Empty { .. })));
        assert!(matches!(decode::<Answer>(&bytes[..3], "answer"), Err(WireError::Decode { .. })));
        assert_eq!(subject(&hits_stream(2)), "txo.hits.2");
        assert_eq!(subject(&feedback_stream(1)), "txo.feedback.1");
        assert_eq!(
            (position_subject(&process_name(Some(3))), position_subject(&process_name(None))),
            ("txo.positions.w3".to_string(), "txo.positions.agg".to_string())
        );
    }

    #[test]
    fn partitions_own_every_document_once_in_turn() {
        for partitions in 1..=5u32 {
            let meta = Meta { shards: 1, config: Config::default(), prepared: false, partitions };
            let mut next = vec![1u64; partitions as usize];
            for n in 1..=40u64 {
                let (p, k) = meta.owner(n);
                assert_eq!(k, next[p as usize], "documents of a partition follow each other");
                next[p as usize] += 1;
                assert_eq!(meta.owned(p, k), n);
                for q in 0..partitions {
                    // The first of q's documents from n on, by brute force.
                    let first = (n..).find(|&m| meta.owner(m).0 == q).unwrap();
                    assert_eq!(meta.owned(q, meta.first_owned_from(q, n)), first);
                }
            }
            assert_eq!(meta.owned(0, 0), 0);
        }
    }

    #[test]
    fn documents_carry_their_metadata_and_older_messages_read_without() {
        let doc = Doc {
            name: "7".into(),
            source: "s".into(),
            url: None,
            published_at: Some("2020".into()),
            arrived_ms: 1_800_000_000_000,
            text: "words".into(),
            meta: Some(r#"{"title":"T"}"#.into()),
            id_number: true,
            date_field: true,
            key: Some(u128::MAX - 7),
        };
        assert_eq!(Doc::decode(&doc.encode()).unwrap(), doc);
        assert_eq!(doc.encode()[0], DOC_VERSION);
        let unkeyed = Doc { key: None, ..doc.clone() };
        assert_eq!(Doc::decode(&unkeyed.encode()).unwrap(), unkeyed);
        // Messages of the build before: the same fields but the key.
        let mut eight = vec![DOC_UNKEYED];
        eight.extend(
            postcard::to_allocvec(&("7", "s", None::<String>, Some("2020"), 1_800_000_000_000u64, "words")).unwrap(),
        );
        eight.extend(postcard::to_allocvec(&(Some(r#"{"title":"T"}"#), true, true)).unwrap());
        assert_eq!(Doc::decode(&eight).unwrap(), unkeyed);
        // Messages of the builds before: the fields alone, then with `meta` behind them.
        let before = |meta: Option<&str>| {
            let mut m = vec![DOC_BEFORE];
            m.extend(
                postcard::to_allocvec(&("7", "s", None::<String>, Some("2020"), 1_800_000_000_000u64, "words"))
                    .unwrap(),
            );
            m.extend(meta.map(|t| postcard::to_allocvec(t).unwrap()).unwrap_or_default());
            m
        };
        let old = Doc { id_number: false, date_field: false, key: None, ..doc.clone() };
        assert_eq!(Doc::decode(&before(None)).unwrap(), Doc { meta: None, ..old.clone() });
        assert_eq!(Doc::decode(&before(Some(r#"{"title":"T"}"#))).unwrap(), old);
        assert!(matches!(Doc::decode(&[]), Err(WireError::Empty { .. })));
        let newer = [DOC_VERSION + 1, 0];
        assert!(
            matches!(Doc::decode(&newer), Err(WireError::Version { found, reads: DOC_VERSION, .. }) if found == DOC_VERSION + 1)
        );
    }

    /// A partition stores the revisions another's document made of its documents, and
    /// reads the others' results, from outcomes: what their serde form leaves out (the
    /// density threshold, the passages) must come with them.
    #[test]
    fn an_outcome_carries_its_results_whole() {
        use textorigin_core::align::{AlsoEarlier, Passages};
        let passages =
            Passages { also_earlier: vec![AlsoEarlier { origin: 2, start_token: 1, end_token: 9 }], edits: vec![4] };
        let result =
            DocResult { seq: 7, tokens: 12, density: Some(3), passages: passages.clone(), ..DocResult::default() };
        let after = DocResult { seq: 5, passages, ..DocResult::default() };
        let before = DocResult { seq: 5, density: Some(1), ..DocResult::default() };
        let outcome = Outcome::new(7, result, vec![Revised { seq: 5, after, before }]);
        assert_eq!(decode::<Outcome>(&encode(&outcome), "outcome").unwrap(), outcome);
    }
}
