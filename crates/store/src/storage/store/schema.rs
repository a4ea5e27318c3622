//! The column families of the store and their records, declared once: the constants
//! the store's modules use, [`COLUMN_FAMILIES`] (what opening opens, in this order),
//! and the schema table ([`COLUMN_FAMILIES`]'s documentation) are made from the one
//! list below, each a [`Table`] with the types of its keys and values. A value starts with a version byte (`codec`); keys of one document are
//! its sequence number, big-endian, so that RocksDB's byte order is the sequence order.

use textorigin_core::neardup::{NearDup, Sketch};
use textorigin_core::quote::Quotation;

use super::documents::DocValue;
use super::exact::FirstValue;
use super::quote_index::StoredSentence;
use super::revisions::RevisionValue;
use super::spool_log::{DocFailure, Failure};
use super::table::{Empty, Postcard, Raw, ResultValue, Table, Text};

/// Declares the column families: each a constant, the list of them, and the table of
/// their records (a row a kind of key), in the documentation of the list.
macro_rules! column_families {
    ($($(#[$attr:meta])* $vis:vis $konst:ident: $table:ty = $name:literal { $($key:literal => $value:literal,)+ })+) => {
        $($(#[$attr])* $vis const $konst: $table = Table::new($name);)+

        #[doc = concat!(
            "The column families, in the order they are opened, and their records, with the ",
            "schema that added each (in parentheses; the others since the first):\n\n",
            "| column family | key | value |\n| --- | --- | --- |\n",
            $($("| `", $name, "` | ", $key, " | ", $value, " |\n",)+)+
        )]
        pub const COLUMN_FAMILIES: [&str; [$($name),+].len()] = [$($konst.name),+];
    };
}

column_families! {
    pub(super) CF_ADMITTED: Table<[u8], Raw> = "admitted" {
        "xxh3-128 of a spool file's name and bytes, BE" => "u32 LE documents done, u32 LE documents in the file (4), u32 LE documents failed (5; absent in older records): a [`FileAdmission`](super::FileAdmission), read while `u32::MAX` in the file, failed whole at 0",
        "`d` + a document's [`document_key`](super::document_key), BE (17 bytes)" => "u64 BE: the document's id (7)",
    }
    pub(super) CF_FAILED: Table<u64, Postcard<Failure>> = "failed" {
        "u64 BE counter" => "version byte 1, postcard [`Failure`](super::Failure) (4)",
    }
    pub(crate) CF_META: Table<[u8], Raw> = "meta" {
        "`schema_version`" => "u32 LE",
        "`config`" => "version byte 1, postcard [`Config`](textorigin_core::config::Config) (fields added behind the others: `propagate` and `align` in 7, the feature switches in 8, `terms` in 11, the density in 17, `html` in 20, the templates in 21, the density lag in 23)",
        "`next_seq`" => "u64 LE: the sequence number the next document gets",
        "`store_id`" => "u64 LE: the store's identity, carried by checkpoint slots (made on first write open)",
        "`neardup_config`" => "version byte 1, postcard [`NearDupConfig`](textorigin_core::neardup::NearDupConfig) (2)",
        "`quote_config`" => "postcard [`QuoteConfig`](textorigin_core::quote::QuoteConfig) (3)",
        "`failed_next`" => "u64 LE: the next failure number (4)",
        "`aggregator`" => "postcard bool: a deployment aggregator, whose table file holds no buckets",
        "`q_docs`" => "u64 LE: documents counted in `q_df` (3-5; schema 6 deletes it)",
        "`revise_queue/` + seq BE" => "u64 BE: the newest cause of the document's queued revision ([`revisions`](super::revisions); older builds never read these keys)",
        "`revisions_made/` + cause BE" => "version byte 1, postcard (seq, after, before) results: every revision a deployment partition's document made",
        "`tpl/l/` + site + line hash, `tpl/d/` + seq + deciding seq" => "a line's pages on a site; the template lines a document decided on a page ([`templates`](super::templates), 21; `tpl/d/` + seq alone before)",
    }
    pub(super) CF_DOCS: Table<u64, DocValue> = "docs" {
        "seq, u64 BE" => "version byte 1, postcard [`DocMeta`](super::DocMeta), then the tails later builds added (`documents::encode_doc`)",
    }
    pub(super) CF_NAMES: Table<[u8], Empty> = "names" {
        "name bytes, 0x00, seq u64 BE" => "empty",
    }
    pub(crate) CF_TEXT: Table<u64, Text> = "text" {
        "seq, u64 BE" => "version byte 1, UTF-8 text (zstd-compressed by RocksDB)",
    }
    pub(crate) CF_RESULTS: Table<u64, ResultValue> = "results" {
        "seq, u64 BE" => "version byte 1, postcard [`DocResult`](textorigin_core::engine::DocResult)",
    }
    pub(crate) CF_ND_SKETCH: Table<u64, Postcard<Sketch>> = "nd_sketch" {
        "seq, u64 BE" => "version byte 1, postcard [`Sketch`](textorigin_core::neardup::Sketch) (2; since 16 only those an older build computed otherwise: `storage/recompute.rs`)",
    }
    pub(super) CF_ND_RESULT: Table<u64, Postcard<Vec<NearDup>>> = "nd_result" {
        "seq, u64 BE" => "version byte 1, postcard `Vec<NearDup>`: earlier near-duplicates (2)",
    }
    pub(super) CF_ND_LATER: Table<(u64, u64), Postcard<NearDup>> = "nd_later" {
        "earlier seq BE, later seq BE" => "version byte 1, postcard [`NearDup`](textorigin_core::neardup::NearDup) seen from the earlier one (2)",
    }
    pub(super) CF_ND_LATE: Table<(u64, u64), Postcard<NearDup>> = "nd_late" {
        "seq BE, late arrival BE" => "version byte 1, postcard [`NearDup`](textorigin_core::neardup::NearDup): a pair oriented by publication (10)",
    }
    pub(crate) CF_Q_SENT: Table<(u64, u32), Postcard<StoredSentence>> = "q_sent" {
        "seq BE, sentence u32 BE" => "version byte 1, postcard [`Sentence`](textorigin_core::quote::Sentence) without its clauses (3; since 16 only those an older build split otherwise: `storage/recompute.rs`)",
    }
    pub(super) CF_Q_RESULT: Table<u64, Postcard<Vec<Quotation>>> = "q_result" {
        "seq BE" => "version byte 1, postcard `Vec<Quotation>` (3)",
    }
    pub(super) CF_Q_LATE: Table<(u64, u64), Postcard<Vec<Quotation>>> = "q_late" {
        "quoting seq BE, late arrival BE" => "version byte 1, postcard `Vec<Quotation>`: its sentences quoting the late arrival (10)",
    }
    pub(super) CF_COPIERS: Table<(u64, u64), Empty> = "copiers" {
        "origin BE, copier BE" => "empty: who copied from whom (9)",
    }
    pub(super) CF_REVISIONS: Table<(u64, u64), RevisionValue> = "revisions" {
        "seq BE, cause BE" => "version byte 1, postcard [`DocResult`](textorigin_core::engine::DocResult): the result before a revision (9)",
    }
    pub(super) CF_FAILED_DOCS: Table<[u8], Postcard<DocFailure>> = "failed_docs" {
        "a failed input document's source (`path:LINE`)" => "version byte 1, postcard [`DocFailure`](super::DocFailure): its id and why (15)",
    }
    pub(super) CF_TOKENS: Table<[u8], FirstValue> = "tokens" {
        "xxh3-128 of a document's token fingerprints (`text::tokens_hash`), BE" => "version byte 1, postcard u64: the first document with those tokens, then, once its first copy gave them (near-duplicates on), postcard `Vec<u64>`: its near-duplicate index keys ([`exact`](super::exact), 28)",
    }
    pub(super) CF_COPY_OF: Table<u64, Postcard<u64>> = "copy_of" {
        "seq BE" => "version byte 1, postcard u64: the earlier document it is an exact copy of ([`exact`](super::exact), 28)",
    }
    /// What a deployment's stage keeps with each document for a restart (a
    /// partition's feedback, [`DocumentWrite::stage`](super::DocumentWrite::stage)).
    pub(super) CF_STAGE: Table<u64, Raw> = "stage" {
        "seq BE" => "what a deployment partition's stage keeps with the document (18)",
    }
    /// What a partition keeps of the other partitions' documents ([`book`](super::book)).
    pub(super) CF_BOOK: Table<[u8], Raw> = "book" {
        "`t`/`r` + seq, `c` + origin + copier, `s`" => "a partition's book of the other partitions' documents ([`book`](super::book), 19)",
    }
}

/// Column families of schemas 2-5 that schema 6 drops (the derived indexes, which
/// moved into the table file).
pub(crate) const LEGACY_CFS: [&str; 3] = ["nd_index", "q_index", "q_df"];
