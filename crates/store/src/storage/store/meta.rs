//! The `meta` column family: typed keys for the schema version, the configurations
//! and the counters.

use rocksdb::WriteBatch;
use serde::de::DeserializeOwned;
use serde::Serialize;
use textorigin_core::config::Config;
use textorigin_core::neardup::NearDupConfig;
use textorigin_core::quote::QuoteConfig;

use super::codec::le_u64;
use super::table::Postcard;
use super::{Result, Store, CF_META};

/// A key of `meta`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaKey {
    /// u32 LE: the schema version.
    SchemaVersion,
    /// postcard [`Config`]: the configuration the data directory was made with.
    Config,
    /// u64 LE: the sequence number the next document gets.
    NextSeq,
    /// postcard [`NearDupConfig`] (schema 2).
    NeardupConfig,
    /// postcard [`QuoteConfig`] (schema 3).
    QuoteConfig,
    /// u64 LE: documents counted in `q_df` (schemas 3-5; schema 6 deletes it).
    QuoteDocs,
    /// u64 LE: the next failure number (schema 4).
    FailedNext,
    /// u64 LE: the store's identity, made when it is first opened for writing; checkpoint
    /// slots carry it, so that a slot of another store is never restored.
    StoreId,
    /// postcard bool: the data directory is a sharded deployment's aggregator, whose
    /// table file holds no buckets (absent: false).
    Aggregator,
    /// u64 LE: spool files whose documents failed, whole or in part, since the counter
    /// was added (absent: 0); written in the batch of the file's last admission record.
    FilesFailed,
    /// u64 LE: the first document the adaptive density's extra entries were guests for
    /// (schema 24; absent: every document, or the paper's density): the results stored
    /// before it were made by the earlier rule, which replay does not give again.
    GuestsFrom,
}

impl MetaKey {
    /// The key's bytes.
    pub fn bytes(self) -> &'static [u8] {
        match self {
            MetaKey::SchemaVersion => b"schema_version",
            MetaKey::Config => b"config",
            MetaKey::NextSeq => b"next_seq",
            MetaKey::NeardupConfig => b"neardup_config",
            MetaKey::QuoteConfig => b"quote_config",
            MetaKey::QuoteDocs => b"q_docs",
            MetaKey::FailedNext => b"failed_next",
            MetaKey::StoreId => b"store_id",
            MetaKey::Aggregator => b"aggregator",
            MetaKey::FilesFailed => b"files_failed",
            MetaKey::GuestsFrom => b"guests_from",
        }
    }
}

impl Store {
    /// A postcard value stored under `key`.
    fn meta_value<T: Serialize + DeserializeOwned>(&self, key: MetaKey) -> Result<Option<T>> {
        self.read(CF_META.records::<Postcard<T>>(), key.bytes())
    }

    /// Stores a postcard value under `key` (synced).
    pub(crate) fn put_meta_value<T: Serialize + DeserializeOwned>(&self, key: MetaKey, v: &T) -> Result<()> {
        let mut b = WriteBatch::default();
        self.put(&mut b, CF_META.records::<Postcard<T>>(), key.bytes(), v);
        self.write(b, true)
    }

    /// A u64 counter under `key` (None when absent).
    pub(super) fn meta_u64(&self, key: MetaKey) -> Result<Option<u64>> {
        Ok(self.read(CF_META, key.bytes())?.and_then(|v| le_u64(&v)))
    }

    /// Puts a u64 counter under `key` into a batch.
    pub(crate) fn put_meta_u64(&self, b: &mut WriteBatch, key: MetaKey, v: u64) {
        self.put(b, CF_META, key.bytes(), &v.to_le_bytes());
    }

    /// The configuration the data directory was created with.
    pub fn config(&self) -> Result<Option<Config>> {
        self.meta_value(MetaKey::Config)
    }

    /// Records the configuration (synced).
    pub fn put_config(&self, c: &Config) -> Result<()> {
        self.put_meta_value(MetaKey::Config, c)
    }

    /// Whether the data directory is a sharded deployment's aggregator.
    pub fn is_aggregator(&self) -> Result<bool> {
        Ok(self.meta_value(MetaKey::Aggregator)?.unwrap_or(false))
    }

    /// Records that the data directory is a sharded deployment's aggregator (synced).
    pub fn put_aggregator(&self) -> Result<()> {
        self.put_meta_value(MetaKey::Aggregator, &true)
    }

    /// The stored near-duplicate parameters, if any.
    pub fn stored_neardup_config(&self) -> Result<Option<NearDupConfig>> {
        self.meta_value(MetaKey::NeardupConfig)
    }

    /// The near-duplicate parameters (the defaults until some are stored).
    pub fn neardup_config(&self) -> Result<NearDupConfig> {
        Ok(self.stored_neardup_config()?.unwrap_or_default())
    }

    /// Records the near-duplicate parameters (synced).
    pub fn put_neardup_config(&self, c: &NearDupConfig) -> Result<()> {
        self.put_meta_value(MetaKey::NeardupConfig, c)
    }

    /// The stored quotation parameters, if any.
    pub fn stored_quote_config(&self) -> Result<Option<QuoteConfig>> {
        self.meta_value(MetaKey::QuoteConfig)
    }

    /// The quotation parameters (the defaults until some are stored).
    pub fn quote_config(&self) -> Result<QuoteConfig> {
        Ok(self.stored_quote_config()?.unwrap_or_default())
    }

    /// Records the quotation parameters (synced).
    pub fn put_quote_config(&self, c: &QuoteConfig) -> Result<()> {
        self.put_meta_value(MetaKey::QuoteConfig, c)
    }

    /// The sequence number the next document gets (1 for an empty store).
    /// The store's identity (0 for a store never opened for writing by a build that
    /// makes one).
    pub fn id(&self) -> Result<u64> {
        Ok(self.meta_u64(MetaKey::StoreId)?.unwrap_or(0))
    }

    /// Gives the store an identity if it has none: xxh3 of its path, the process and
    /// the clock (unique enough to tell a store from the one deleted before it; not a
    /// secret).
    pub(super) fn ensure_id(&self) -> Result<()> {
        if self.meta_u64(MetaKey::StoreId)?.is_some() {
            return Ok(());
        }
        let nanos = crate::clock::since_epoch().as_nanos();
        let seed = format!("{}\0{}\0{nanos}", self.path.display(), std::process::id());
        let id = xxhash_rust::xxh3::xxh3_64(seed.as_bytes()).max(1);
        let mut b = WriteBatch::default();
        self.put_meta_u64(&mut b, MetaKey::StoreId, id);
        self.write(b, true)
    }

    pub fn next_seq(&self) -> Result<u64> {
        let mut next = self.meta_u64(MetaKey::NextSeq)?.unwrap_or(1);
        for s in self.siblings() {
            next = next.max(s.next_seq()?);
        }
        Ok(next)
    }

    /// The first document whose stored result replay gives again under the adaptive
    /// density ([`MetaKey::GuestsFrom`]; 1 where every one is).
    pub fn guests_from(&self) -> Result<u64> {
        Ok(self.meta_u64(MetaKey::GuestsFrom)?.unwrap_or(1))
    }

    /// The stored schema version (0 for a store with no version yet).
    pub fn schema_version(&self) -> Result<u32> {
        Ok(self
            .read(CF_META, MetaKey::SchemaVersion.bytes())?
            .and_then(|v| v.try_into().ok().map(u32::from_le_bytes))
            .unwrap_or(0))
    }

    /// Puts the schema version into a batch.
    pub(crate) fn put_schema_version(&self, b: &mut WriteBatch, v: u32) {
        self.put(b, CF_META, MetaKey::SchemaVersion.bytes(), &v.to_le_bytes());
    }
}
