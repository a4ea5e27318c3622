//! `stats`: the data directory's counters, as one view.

use super::*;

/// The table part of `stats`.
#[derive(Debug, Clone, Serialize)]
pub struct TableView {
    pub path: String,
    pub bytes: u64,
    pub buckets: u64,
    /// Buckets in use: the table grows inside its file until it spans all `buckets`.
    pub used_buckets: u64,
    pub bucket_entries: usize,
    pub capacity: u64,
    pub occupied: u64,
    pub fill_pct: f64,
    pub inserts: u64,
    pub evictions: u64,
    pub lookups: u64,
    pub hits: u64,
    pub hit_pct: f64,
    /// The selection density in force: `1`, `1/2`, ... `1/128` of the
    /// shingles the policy leaves out are selected too, or `paper` (none).
    pub density: String,
    pub last_applied: u64,
    pub in_use: bool,
    /// Marked in use with no process holding the data directory: its writer died, and
    /// the next `ingest` or `serve` recovers it.
    pub needs_recovery: bool,
}

/// `stats`.
#[derive(Debug, Clone, Serialize)]
pub struct StatsView {
    pub documents: u64,
    /// A sharded deployment's aggregator: its shard workers hold the table and the
    /// signature and near-duplicate sections of the derived indexes (`cluster union`
    /// lays their images side by side); the table here holds no bucket.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub sharded: bool,
    pub table: TableView,
    pub shingles: u64,
    pub ssr_pct: f64,
    pub table_digest: String,
    /// Which state the digest is of beside a live writer (its newest checkpoint's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest_of: Option<String>,
    /// The derived indexes behind the table.
    pub indexes: IndexesView,
    pub index_digest: String,
    pub config: String,
    /// Origins found (the table's phases, estimation, alignment); off: near-duplicates
    /// and quotations alone.
    pub origins: bool,
    /// Origin propagation (table entries carry estimated origins).
    pub propagate: bool,
    /// Copied blocks aligned against their origins' texts.
    pub align: bool,
    /// Near-duplicate detection on.
    pub near_duplicates: bool,
    /// Quotation search on.
    pub quotations: bool,
    /// Quotation search by clauses too (schema 12's data directories).
    pub quote_clauses: bool,
    /// The quotation index laid out for exact searches (schema 22's data directories:
    /// `QuoteConfig::exact_only`), else by pieces.
    pub quote_exact_index: bool,
    /// The near-duplicate search: its shingle length, its Jaccard threshold, and whether
    /// a pair near the threshold is decided by its exact resemblance (schema 14).
    pub near_k: u32,
    pub near_threshold: f64,
    pub near_verify: bool,
    /// Documents waiting in the revision queue (take-overs' re-analyses beyond their
    /// budget, done while the daemon is idle).
    pub revision_queue: u64,
    /// Site furniture labelled: lines at `template_pages` pages of their site
    /// or more, and the sites holding them; None where templates are off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub templates: Option<TemplatesView>,
    /// Bytes on disk of the store's column families with data, largest first (their
    /// table files).
    pub store_bytes: Vec<(String, u64)>,
    /// Bytes of all the store's files on disk, and of its write-ahead logs among them.
    pub store_disk_bytes: u64,
    pub store_log_bytes: u64,
    /// Bytes free on the data directory's file system (the text only: it is the
    /// machine's, which changes under every reader, not the data directory's), and about
    /// what a checkpoint slot needs free (what the table file holds: its blocks).
    #[serde(skip)]
    pub disk_free_bytes: Option<u64>,
    pub checkpoint_needs_bytes: u64,
    /// The running (or last) daemon's status, when `daemon.json` is there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub daemon: Option<DaemonStatus>,
}

/// Site furniture in `stats`.
#[derive(Debug, Clone, Serialize)]
pub struct TemplatesView {
    pub lines: u64,
    pub sites: u64,
    /// The pages of a site a line stands on to be its furniture.
    pub pages: u32,
    /// The longest line that can be furniture, in terms.
    pub max_terms: u32,
}

/// The derived indexes in `stats`: their size, entries per section and counters.
#[derive(Debug, Clone, Serialize)]
pub struct IndexesView {
    pub bytes: u64,
    pub df_capacity: u64,
    pub signature_capacity: u64,
    pub neardup_capacity: u64,
    /// Buckets of each section (words, signatures, near-duplicate keys) and those in
    /// use: the sections grow inside the region (table format 5).
    pub buckets: [u64; 3],
    pub buckets_in_use: [u64; 3],
    #[serde(flatten)]
    pub counters: IndexStats,
}

/// The statistics of the data directory `dir`.
pub fn stats(
    store: &Store,
    table: &TableFile,
    indexes: &Indexes<&[u8]>,
    config: &Config,
    dir: &Path,
) -> Result<StatsView> {
    let s = table.stats();
    let pct = |a: u64, b: u64| if b == 0 { 0.0 } else { 100.0 * a as f64 / b as f64 };
    let nd = store.neardup_config()?;
    let stored_q = store.stored_quote_config()?;
    let (store_disk_bytes, store_log_bytes) = store.files_on_disk()?;
    Ok(StatsView {
        documents: store.next_seq()? - 1,
        sharded: store.is_aggregator()?,
        table: TableView {
            path: table.path().display().to_string(),
            bytes: config.table_bytes,
            buckets: table.buckets(),
            used_buckets: table.used_buckets(),
            bucket_entries: table.bucket_entries(),
            capacity: table.capacity(),
            occupied: s.occupied,
            fill_pct: pct(s.occupied, table.capacity()),
            inserts: s.inserts,
            evictions: s.evictions,
            lookups: s.lookups,
            hits: s.hits,
            hit_pct: pct(s.hits, s.lookups),
            density: textorigin_core::select::density_label(table.density()),
            last_applied: s.last_seq,
            in_use: table.in_use(),
            needs_recovery: table.in_use() && textorigin_store::storage::datadir::writer_gone(dir),
        },
        shingles: s.shingles,
        revision_queue: store.queue_len()?,
        templates: match config.templates {
            textorigin_core::config::Templates::Off => None,
            _ => {
                let (lines, sites) = store.template_lines(config.template_pages)?;
                let max_terms = textorigin_core::engine::template::FURNITURE_TOKENS;
                Some(TemplatesView { lines, sites, pages: config.template_pages, max_terms })
            }
        },
        store_bytes: store.disk_use()?.into_iter().map(|(cf, bytes)| (cf.to_string(), bytes)).collect(),
        store_disk_bytes,
        store_log_bytes,
        disk_free_bytes: textorigin_store::sys::free_bytes(dir).ok(),
        checkpoint_needs_bytes: textorigin_store::storage::datadir::checkpoint_needs(table.path()),
        ssr_pct: pct(s.lookups, s.shingles),
        table_digest: format!("{:016x}", table.digest()),
        digest_of: textorigin_store::check::digest_state(
            dir,
            table.in_use() && !textorigin_store::storage::datadir::writer_gone(dir),
        ),
        indexes: {
            let (df, sig, nd) = indexes.shape().capacity();
            IndexesView {
                bytes: table.index_bytes(),
                df_capacity: df,
                signature_capacity: sig,
                neardup_capacity: nd,
                buckets: indexes.shape().buckets().into(),
                buckets_in_use: indexes.buckets_in_use().into(),
                counters: indexes.stats(),
            }
        },
        index_digest: format!("{:016x}", indexes.digest_of(&table.index_data())),
        config: config.canonical(),
        origins: config.origins,
        propagate: config.propagate,
        align: config.align,
        near_duplicates: config.near_duplicates,
        quotations: config.quotations,
        quote_clauses: stored_q.as_ref().is_some_and(|q| q.clauses),
        quote_exact_index: stored_q.as_ref().is_some_and(|q| q.exact_only()),
        near_k: nd.k,
        near_threshold: nd.threshold,
        near_verify: nd.verify,
        daemon: DaemonStatus::read(dir),
    })
}
