//! The configuration as people spell it: the command line's flags, the keys of a TOML
//! file (`--config`) and the Python package's keyword arguments share these names and
//! values (`table_size = "64MiB"`, `selection = "nhs"`, `quotations = false`);
//! [`Settings::typed`] parses them into [`Overrides`]. With the `clap` feature (the
//! command line's) the struct is also the flags.

use serde::Deserialize;

use crate::config::{parse_size, Overrides};
use crate::neardup::NearDupConfig;
use crate::quote::QuoteConfig;

/// Algorithm options as the flags and a TOML file spell them; [`Settings::typed`]
/// parses them into the core's [`Overrides`].
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[allow(rustdoc::invalid_html_tags)] // The doc comments are the flags' help, where `<l>` is a placeholder, not HTML.
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Shingle length k in tokens (default 8).
    #[cfg_attr(feature = "clap", arg(long))]
    pub k: Option<u32>,
    /// Selection algorithm: all, <l>th (every l-th), m<l> / nm<l> (modulo),
    /// w<w> / nw<w> (winnowing), hs / nhs (Hailstorm), hb<p> (hash-breaking),
    /// dct<p>. An `n` prefix drops shingles completely overlapped by others.
    /// Default nhs.
    #[cfg_attr(feature = "clap", arg(long))]
    pub selection: Option<String>,
    /// Eviction of a full bucket: random, lru, cc (copy-count), lucky. Default lucky.
    #[cfg_attr(feature = "clap", arg(long))]
    pub eviction: Option<String>,
    /// Estimation of unfound shingles: nb (none), e (expansion), b (bridging),
    /// be (bridging with expansion). Default be.
    #[cfg_attr(feature = "clap", arg(long))]
    pub estimation: Option<String>,
    /// Bridging limit T, in selected shingles (2-256, default 30).
    #[cfg_attr(feature = "clap", arg(long))]
    pub bridge_limit: Option<u32>,
    /// Table file size: bytes, or with a unit (KiB, MiB, GiB, KB, MB, GB). Default 256MiB.
    #[cfg_attr(feature = "clap", arg(long))]
    pub table_size: Option<String>,
    /// Size of the derived indexes (document frequencies, quotation signatures,
    /// near-duplicate keys) stored behind the table in the same file: bytes or with a
    /// unit. Default half the table size, at least 8MiB. Fixed at creation.
    #[cfg_attr(feature = "clap", arg(long))]
    pub index_size: Option<String>,
    /// Entries per table bucket (4-256, default 64).
    #[cfg_attr(feature = "clap", arg(long))]
    pub bucket_entries: Option<u32>,
    /// Seed of random eviction and of tie-breaking (default 0).
    #[cfg_attr(feature = "clap", arg(long))]
    pub seed: Option<u64>,
    /// Lucky eviction: every y-th selected shingle gets a bonus (default 7).
    #[cfg_attr(feature = "clap", arg(long))]
    pub lucky_y: Option<u32>,
    /// Lucky eviction: halve a bucket's scores when their average reaches this (default 11).
    #[cfg_attr(feature = "clap", arg(long))]
    pub lucky_limit: Option<u8>,
    /// Origin propagation: a shingle estimation labels copied is stored with the
    /// estimated origin, so that later copies find the earliest source (on or off;
    /// default on for a new data directory).
    #[cfg_attr(feature = "clap", arg(long, value_name = "on|off", value_parser = on_off))]
    pub propagate: Option<bool>,
    /// Seed-and-extend: copied blocks aligned against their origins' stored texts to
    /// the exact edges of the common run; off gives the paper's blocks (on or off;
    /// default on for a new data directory).
    #[cfg_attr(feature = "clap", arg(long, value_name = "on|off", value_parser = on_off))]
    pub align: Option<bool>,
    /// Near-duplicate detection (on or off; default on for a new data directory). Off:
    /// no sketch is made or stored, and the views say "off". TOML: `near_duplicates`.
    /// Turning it on later: `rebuild --reanalyse --neardup on`.
    #[cfg_attr(feature = "clap", arg(long = "neardup", value_name = "on|off", value_parser = on_off))]
    pub near_duplicates: Option<bool>,
    /// Quotation search (on or off; default on for a new data directory). Off: no
    /// sentence is signed, indexed or searched, and the views say "off". TOML:
    /// `quotations`. Turning it on later: `rebuild --reanalyse --quotes on`.
    #[cfg_attr(feature = "clap", arg(long = "quotes", value_name = "on|off", value_parser = on_off))]
    pub quotations: Option<bool>,
    /// Origins: where each copied passage came from, by the table of shingles (on or
    /// off; default on). Off: near-duplicates (and quotations when on) alone, the job
    /// of the near-duplicate tools: no table lookups or inserts, no copied blocks or
    /// dominant origin, and the views say "off". Turning them on later: `rebuild
    /// --reanalyse --origins on`.
    #[cfg_attr(feature = "clap", arg(long, value_name = "on|off", value_parser = on_off))]
    pub origins: Option<bool>,
    /// Exact copies answered from their earlier document (on or off; default on for a
    /// new data directory): a document whose terms equal an earlier stored document's
    /// (case, punctuation and spacing aside) is copied whole from it, with its
    /// quotations and near-duplicates (that document among them at resemblance 1.0),
    /// without looking it up in the table or searching its sentences or sketch; later
    /// documents find the earlier one's sentences. Off: analysed as any document.
    /// Switching later: `rebuild --reanalyse --exact-copies on|off`.
    #[cfg_attr(feature = "clap", arg(long, value_name = "on|off", value_parser = on_off))]
    pub exact_copies: Option<bool>,
    /// What makes a term: unicode (each Chinese or Japanese ideograph a term, each run
    /// of hiragana or katakana one, sentences also ended by 。！？; the default for a new
    /// data directory) or words (a run of
    /// letters and digits whatever the script: data directories made before).
    #[cfg_attr(feature = "clap", arg(long, value_name = "unicode|words"))]
    pub terms: Option<String>,
    /// Selection density: adaptive (while the table has room, shingles beyond the
    /// selection's are inserted and looked up too, and the selection alone once the
    /// table is full, exactly the paper's from then on; finds short copies; the default
    /// for a new data directory) or paper (the selection alone: data directories made
    /// before).
    #[cfg_attr(feature = "clap", arg(long, value_name = "adaptive|paper"))]
    pub density: Option<String>,
    /// With an adaptive density, the documents from a full bucket's first ask for a
    /// lower density to the fall to the selection alone (default 32 for a new data
    /// directory: the density moves at document ends only, where a sharded deployment's
    /// shards agree; 0 moves it at once, in the middle of a document: data directories
    /// made before).
    #[cfg_attr(feature = "clap", arg(long, value_name = "DOCS"))]
    pub density_lag: Option<u8>,
    /// The stored dominant origin: blocks (each selected shingle inside a copied block
    /// counts for the block's origin, the earliest source alignment found, so that it
    /// survives eviction; the default for a new data directory) or table (the table's
    /// answers alone: data directories made before).
    #[cfg_attr(feature = "clap", arg(long, value_name = "blocks|table"))]
    pub dominant: Option<String>,
    /// What of an HTML page is its text: main (its main content, without the site's
    /// navigation, header, footer, asides, forms, cookie and share widgets and link
    /// lists, unless that leaves nothing; the default for a new data directory) or all
    /// (every visible text: data directories made before).
    #[cfg_attr(feature = "clap", arg(long, value_name = "main|all"))]
    pub html: Option<String>,
    /// Which source a copied token is credited to: passage (the source of the longest
    /// aligned run covering it, so a passage copied whole is one block of the document
    /// it was copied from, older documents holding a stock phrase inside it listed
    /// beside it, and runs go on through light edits; the default for a new data
    /// directory) or earliest (the earliest document holding it, exact runs: the
    /// paper's earliest source, data directories made before).
    #[cfg_attr(feature = "clap", arg(long, value_name = "passage|earliest"))]
    pub attribution: Option<String>,
    /// Whose site templates are labelled: site (the default for a new data directory:
    /// documents with a site, a URL's host, a JSON `site` field or the folder of an
    /// HTML file; a line standing on --template-pages pages of its site is template
    /// there, neither old nor fresh, out of old%, the dominant origin, sketches and
    /// quotations), all (every document, those without a site as one site) or off
    /// (every repeated line is a copy: data directories made before).
    #[cfg_attr(feature = "clap", arg(long, value_name = "site|all|off"))]
    pub templates: Option<String>,
    /// The pages of one site a line must stand on to be template there (default 5).
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    pub template_pages: Option<u32>,
    /// Whether the `site` and `url` fields of documents submitted through the spool or
    /// over HTTP name their site: ignore (the default for a new data directory: they
    /// have none, so that nobody hides a copy by submitting pages claiming a site) or
    /// trust (when the producers are the operator's own: data directories made before).
    #[cfg_attr(feature = "clap", arg(long, value_name = "ignore|trust"))]
    pub submitted_sites: Option<String>,
    /// The field of a document's JSON metadata that names its site (default `site`):
    /// `publisher`, say, where the feed names its sites so. Its value names the site
    /// (the host, where it is a URL); a document without it falls back on its URL's
    /// host, then an HTML file's folder.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FIELD"))]
    pub site_field: Option<String>,
    /// Shingle length of the near-duplicate search, in terms (default 3 for a new data
    /// directory; its own setting, apart from the table's k). Fixed at creation.
    #[cfg_attr(feature = "clap", arg(long, value_name = "K"))]
    pub near_k: Option<u32>,
    /// Jaccard resemblance (of the near-duplicate shingle sets) at which a pair is a
    /// near-duplicate (default 0.7 for a new data directory): the LSH bands are tuned
    /// to it, and a pair near it is decided by its exact resemblance. Fixed at
    /// creation.
    #[cfg_attr(feature = "clap", arg(long, value_name = "J"))]
    pub near_threshold: Option<f64>,
    /// Near-duplicate parameters (TOML table `[neardup]` only; see `NearDupConfig`).
    /// `near_k` and `near_threshold` set two of them (and retune the bands).
    #[cfg_attr(feature = "clap", arg(skip))]
    pub neardup: Option<NearDupConfig>,
    /// Quotation-search parameters (TOML table `[quotes]` only; see `QuoteConfig`).
    #[cfg_attr(feature = "clap", arg(skip))]
    pub quotes: Option<QuoteConfig>,
}

impl Settings {
    /// Parses the strings into typed overrides.
    pub fn typed(&self) -> Result<Overrides, String> {
        fn parse<T: std::str::FromStr<Err = String>>(s: &Option<String>) -> Result<Option<T>, String> {
            s.as_deref().map(str::parse).transpose()
        }
        Ok(Overrides {
            k: self.k,
            selection: parse(&self.selection)?,
            eviction: parse(&self.eviction)?,
            estimation: parse(&self.estimation)?,
            bridge_limit: self.bridge_limit,
            table_bytes: self.table_size.as_deref().map(parse_size).transpose()?,
            index_bytes: self.index_size.as_deref().map(parse_size).transpose()?,
            bucket_entries: self.bucket_entries,
            seed: self.seed,
            lucky_y: self.lucky_y,
            lucky_limit: self.lucky_limit,
            propagate: self.propagate,
            align: self.align,
            near_duplicates: self.near_duplicates,
            quotations: self.quotations,
            origins: self.origins,
            exact_copies: self.exact_copies,
            terms: parse(&self.terms)?,
            density: parse(&self.density)?,
            density_lag: self.density_lag,
            dominant: parse(&self.dominant)?,
            html: parse(&self.html)?,
            attribution: parse(&self.attribution)?,
            templates: parse(&self.templates)?,
            template_pages: self.template_pages,
            submitted_sites: parse(&self.submitted_sites)?,
            site_field: self.site_field.clone(),
            neardup: self.near_duplicate_config()?,
            quotes: self.quotes.clone(),
        })
    }
}

impl Settings {
    /// The `[neardup]` table with `near_k` and `near_threshold` applied (the bands
    /// tuned to the threshold: [`NearDupConfig::tuned`]).
    fn near_duplicate_config(&self) -> Result<Option<NearDupConfig>, String> {
        if self.near_k.is_none() && self.near_threshold.is_none() {
            return Ok(self.neardup.clone());
        }
        let base = self.neardup.clone().unwrap_or_default();
        let c = base.tuned(self.near_k.unwrap_or(base.k), self.near_threshold.unwrap_or(base.threshold));
        c.validate().map_err(|_| {
            format!(
                "near-duplicate shingle length {} or threshold {} out of range (k at least 1, threshold 0-1)",
                c.k, c.threshold
            )
        })?;
        Ok(Some(c))
    }
}

/// Parses an on/off flag.
pub fn on_off(s: &str) -> Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" => Ok(true),
        "off" | "false" | "no" => Ok(false),
        _ => Err(format!("`{s}`: expected on or off")),
    }
}
