//! Configuration: the algorithm choices and sizes, typed. Defaults are the paper's
//! best; [`Overrides`] (from a TOML file and the flags, parsed by the command line)
//! change them in that order, later ones winning.
//!
//! A data directory remembers the configuration it was created with; later runs start
//! from it, so only an explicit option that differs is an error (reported by the table
//! and the store, never silently reinterpreted).

use serde::{Deserialize, Serialize};

use crate::estimate::Estimation;
use crate::neardup::NearDupConfig;
use crate::quote::QuoteConfig;
use crate::select::Selection;
use crate::table::{Eviction, ParamsError, TableParams};

/// Every algorithm choice and size that shapes a data directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// Shingle length in tokens (paper: 8).
    pub k: u32,
    /// Selection algorithm (paper's best: NHs).
    pub selection: Selection,
    /// Eviction policy (paper's best: Lucky).
    pub eviction: Eviction,
    /// Estimation algorithm (paper's best: BE).
    pub estimation: Estimation,
    /// Bridging limit T in selected shingles (paper: 30; 2-256).
    pub bridge_limit: u32,
    /// Table file size in bytes.
    pub table_bytes: u64,
    /// Entries per bucket (paper: 64; 4-256).
    pub bucket_entries: u32,
    /// Seed of Random eviction and of eviction tie-breaking.
    pub seed: u64,
    /// Lucky rule (d): every y-th selected shingle gets +1 (paper: 7).
    pub lucky_y: u32,
    /// Lucky rule (e): halve a bucket whose average score reaches this (paper: 11).
    pub lucky_limit: u8,
    /// Bytes of the derived indexes behind the table's buckets ([`crate::index`]).
    pub index_bytes: u64,
    /// Origin propagation: entries inserted for shingles estimation labelled copied
    /// carry the estimated origin ([`crate::engine`]; default on, off in data
    /// directories made before schema 7).
    pub propagate: bool,
    /// Seed-and-extend: copied blocks aligned against their origins' stored texts
    /// ([`crate::align`]; default on; off gives the paper's blocks).
    pub align: bool,
    /// Near-duplicate detection ([`crate::neardup`]; default on). Off: no sketch is
    /// made, stored or indexed, and views say "off" (the feature switches).
    pub near_duplicates: bool,
    /// Quotation search ([`crate::quote`]; default on). Off: no sentence is split,
    /// signed, indexed or searched, and views say "off".
    pub quotations: bool,
    /// What makes a term ([`crate::text::Terms`], schema 11): each ideograph a term of
    /// its own, kana runs by script and sentences ended by `。！？` (`Unicode`, the default), or the
    /// rule before (`Words`, kept by data directories made before).
    pub terms: crate::text::Terms,
    /// Selection density ([`crate::select`], schema 17): `Adaptive` (the
    /// default) selects extra shingles while the table has room; `Paper` (kept by data
    /// directories made before) the policy's selection alone.
    pub density: Density,
    /// What the stored dominant origin is ([`crate::engine`], schema 17):
    /// `Blocks` (the default) counts the shingles inside copied blocks for the blocks'
    /// origins; `Table` is the table's answers' argmax (kept by data directories made
    /// before).
    pub dominant: Dominant,
    /// What of an HTML page is its text (schema 20): `Main` (the default) its
    /// main content, without navigation, headers, footers, asides, forms and link
    /// lists; `All` every visible text (kept by data directories made before).
    pub html: HtmlMode,
    /// Which source a token several aligned runs cover is credited to ([`crate::align`],
    /// schema 20): `Passage` (the default) the longest run's, the earlier
    /// ones listed beside the block, runs going on through light edits; `Earliest` the
    /// earliest origin's, exact runs only (kept by data directories made before).
    pub attribution: Attribution,
    /// Which documents' site templates are labelled ([`crate::engine::template`],
    /// schema 21): `Site` (the default) those with a site (a URL's host, a
    /// `site` field, the folder of an HTML file); `All` every document, those without a
    /// site as one site; `Off` none (kept by data directories made before).
    pub templates: Templates,
    /// The pages of one site a line must stand on to be template there.
    pub template_pages: u32,
    /// Documents from a full bucket's first ask for a lower selection density to the
    /// raise of the threshold ([`crate::select::DENSITY_LAG`], schema 23): the
    /// threshold moves at document ends only; 0 (kept by data directories made before)
    /// raises it at once, in the middle of a document.
    pub density_lag: u8,
    /// Whether the `site` and `url` of documents submitted through the spool or over
    /// HTTP name their site (schema 25, last as the encoding appends it): `Ignore` (the
    /// default) leaves them without one, so that nobody hides a copy by submitting
    /// pages that claim a site; `Trust` (kept by data directories made before) takes
    /// them as `ingest`'s.
    pub submitted_sites: SubmittedSites,
    /// Origins (schema 26, last as the encoding appends it): the table's phases, estimation,
    /// alignment and propagation, which find where each copied passage came from (on by
    /// default). Off: a job of near-duplicates (and quotations when
    /// on) alone, as the near-duplicate tools run: no shingle is selected, looked up or
    /// inserted, and results carry no copied blocks or dominant origin.
    pub origins: bool,
    /// The field of a document's JSON metadata that names its site (schema 27, last as
    /// the encoding appends it): the operator's choice, `site` by default. Its value
    /// names the site, the host where it is a URL; without it, the URL's host, then an
    /// HTML file's folder ([`Templates`]).
    pub site_field: String,
    /// Exact copies answered from their earlier document (schema 28, last as the
    /// encoding appends it; on by default, off as before for data directories made
    /// earlier): a document whose terms equal an earlier stored document's is not
    /// analysed again. Every token is copied from that document, its quotations are
    /// that document's, and it adds nothing to the table, the signature index or the
    /// document frequencies (later documents find the earlier one); its near-duplicates
    /// are that document's, and that document at resemblance 1.0 (what a search finds:
    /// it is not searched, nor sketched). A copy arriving before its earlier-published
    /// original is analysed in full, as off.
    pub exact_copies: bool,
}

/// The metadata field naming a document's site unless the operator names another.
pub const SITE_FIELD: &str = "site";

/// Which documents' site templates are labelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Templates {
    /// None: every repeated line is a copy.
    Off,
    /// Documents with a site; those without one (texts, JSON lines without a URL) are
    /// not labelled, so that a text republished by many is a copy.
    #[default]
    Site,
    /// Every document; those without a site count as one site.
    All,
}

impl std::str::FromStr for Templates {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "off" => Ok(Templates::Off),
            "site" => Ok(Templates::Site),
            "all" => Ok(Templates::All),
            _ => Err(format!("unknown template labelling `{s}`; expected site, all or off")),
        }
    }
}

impl std::fmt::Display for Templates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Templates::Off => "off",
            Templates::Site => "site",
            Templates::All => "all",
        })
    }
}

/// Whether submitted documents' `site` and `url` fields name their site for the
/// template labelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum SubmittedSites {
    /// A document of the spool or of HTTP has no site (unless `templates = all`).
    #[default]
    Ignore,
    /// Its `site` field, else its URL's host, is its site, as for `ingest`.
    Trust,
}

impl std::str::FromStr for SubmittedSites {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "ignore" => Ok(SubmittedSites::Ignore),
            "trust" => Ok(SubmittedSites::Trust),
            _ => Err(format!("unknown submitted-sites rule `{s}`; expected ignore or trust")),
        }
    }
}

impl std::fmt::Display for SubmittedSites {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SubmittedSites::Ignore => "ignore",
            SubmittedSites::Trust => "trust",
        })
    }
}

/// The pages of one site a line must stand on to be template there, by default: a
/// site's navigation, footer and notes stand on nearly every page, while a paragraph
/// one site quotes on five of its pages is its boilerplate too (docs/EVALUATION.md,
/// "Crawled pages").
pub const TEMPLATE_PAGES: u32 = 5;

/// Which source a token that several aligned runs cover is credited to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Attribution {
    /// The earliest origin of the runs covering it, per token (the paper's earliest
    /// source); runs are exact.
    Earliest,
    /// The longest run covering it, in tokens that agree (a copied passage keeps the
    /// source it was copied from; older documents holding a shorter run inside it are
    /// listed beside the block); runs go on through light edits, which are listed.
    #[default]
    Passage,
}

impl std::str::FromStr for Attribution {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "earliest" => Ok(Attribution::Earliest),
            "passage" => Ok(Attribution::Passage),
            _ => Err(format!("unknown attribution `{s}`; expected passage or earliest")),
        }
    }
}

impl std::fmt::Display for Attribution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Attribution::Earliest => "earliest",
            Attribution::Passage => "passage",
        })
    }
}

/// What of an HTML page becomes the document's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum HtmlMode {
    /// Every visible text: markup, scripts, styles and comments dropped.
    All,
    /// The main content: what `All` keeps without the page's template (navigation,
    /// header, footer, asides, forms, ARIA landmarks of the same roles, cookie and
    /// share widgets, link lists), unless nothing is left that way.
    #[default]
    Main,
}

impl std::str::FromStr for HtmlMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "all" => Ok(HtmlMode::All),
            "main" => Ok(HtmlMode::Main),
            _ => Err(format!("unknown HTML mode `{s}`; expected main or all")),
        }
    }
}

impl std::fmt::Display for HtmlMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            HtmlMode::All => "all",
            HtmlMode::Main => "main",
        })
    }
}

/// Selection density.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Density {
    /// The policy's selection alone (the paper).
    Paper,
    /// The policy's selection and, while the table has room, every other shingle of
    /// rank >= the table's threshold.
    #[default]
    Adaptive,
}

/// How the stored dominant origin is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Dominant {
    /// The argmax of the selected shingles' origins as the table answered.
    Table,
    /// The same argmax with each shingle inside a copied block counted for the block's
    /// origin ([`crate::engine::DocResult::dominant_by_blocks`]).
    #[default]
    Blocks,
}

impl std::str::FromStr for Density {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "paper" => Ok(Density::Paper),
            "adaptive" => Ok(Density::Adaptive),
            _ => Err(format!("unknown density `{s}`; expected adaptive or paper")),
        }
    }
}

impl std::fmt::Display for Density {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Density::Paper => "paper",
            Density::Adaptive => "adaptive",
        })
    }
}

impl std::str::FromStr for Dominant {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "table" => Ok(Dominant::Table),
            "blocks" => Ok(Dominant::Blocks),
            _ => Err(format!("unknown dominant origin `{s}`; expected blocks or table")),
        }
    }
}

impl std::fmt::Display for Dominant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Dominant::Table => "table",
            Dominant::Blocks => "blocks",
        })
    }
}

/// The index size that goes with a table size when none is given: half of it, at
/// least 8 MiB.
pub fn default_index_bytes(table_bytes: u64) -> u64 {
    (table_bytes / 2).max(8 << 20)
}

impl Default for Config {
    fn default() -> Self {
        Config {
            k: 8,
            selection: Selection::default(),
            eviction: Eviction::default(),
            estimation: Estimation::default(),
            bridge_limit: 30,
            table_bytes: 256 << 20,
            bucket_entries: 64,
            seed: 0,
            lucky_y: 7,
            lucky_limit: 11,
            index_bytes: default_index_bytes(256 << 20),
            propagate: true,
            align: true,
            near_duplicates: true,
            quotations: true,
            terms: crate::text::Terms::Unicode,
            density: Density::Adaptive,
            dominant: Dominant::Blocks,
            html: HtmlMode::Main,
            attribution: Attribution::Passage,
            templates: Templates::Site,
            template_pages: TEMPLATE_PAGES,
            submitted_sites: SubmittedSites::Ignore,
            density_lag: crate::select::DENSITY_LAG,
            origins: true,
            site_field: SITE_FIELD.to_string(),
            exact_copies: true,
        }
    }
}

/// Typed overrides of a configuration: what a TOML file and the flags ask for, already
/// parsed (the command line converts its strings at the edge).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    pub k: Option<u32>,
    pub selection: Option<Selection>,
    pub eviction: Option<Eviction>,
    pub estimation: Option<Estimation>,
    pub bridge_limit: Option<u32>,
    /// Table file size in bytes.
    pub table_bytes: Option<u64>,
    pub bucket_entries: Option<u32>,
    pub seed: Option<u64>,
    pub lucky_y: Option<u32>,
    pub lucky_limit: Option<u8>,
    /// Bytes of the derived indexes (default: half the table size, at least 8 MiB).
    pub index_bytes: Option<u64>,
    pub propagate: Option<bool>,
    pub align: Option<bool>,
    /// Near-duplicate detection on or off.
    pub near_duplicates: Option<bool>,
    /// Quotation search on or off.
    pub quotations: Option<bool>,
    /// What makes a term.
    pub terms: Option<crate::text::Terms>,
    /// Selection density.
    pub density: Option<Density>,
    /// How the dominant origin is counted.
    pub dominant: Option<Dominant>,
    /// What of an HTML page is its text.
    pub html: Option<HtmlMode>,
    /// Which source a token several runs cover is credited to.
    pub attribution: Option<Attribution>,
    pub templates: Option<Templates>,
    pub template_pages: Option<u32>,
    /// Whether submitted documents name their site.
    pub submitted_sites: Option<SubmittedSites>,
    /// Documents from a full bucket's first ask for a lower density to the raise.
    pub density_lag: Option<u8>,
    /// Origins on or off.
    pub origins: Option<bool>,
    /// The metadata field naming a document's site.
    pub site_field: Option<String>,
    /// Exact copies answered from their earlier document.
    pub exact_copies: Option<bool>,
    /// Near-duplicate parameters.
    pub neardup: Option<NearDupConfig>,
    /// Quotation-search parameters.
    pub quotes: Option<QuoteConfig>,
}

/// A configuration that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("k = {0} is out of range (1-64)")]
    K(u32),
    #[error("bridge limit T = {0} is out of range (2-256)")]
    BridgeLimit(u32),
    #[error("lucky y must be at least 1")]
    LuckyY,
    #[error("lucky limit must be at least 1")]
    LuckyLimit,
    #[error("template pages = {0} is out of range (2-1000000): a line on one page is that page's own")]
    TemplatePages(u32),
    #[error(
        "site field {0:?} names no field: give the JSON metadata field that names a document's site, such as `site`"
    )]
    SiteField(String),
    #[error(transparent)]
    Table(#[from] ParamsError),
}

/// Parses a size such as `4096`, `64MiB`, `1.5GB`.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 =
        num.parse().map_err(|_| format!("size `{s}`: expected a number with an optional unit, e.g. 64MiB"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        u => return Err(format!("size `{s}`: unknown unit `{u}` (use B, KiB, MiB, GiB, KB, MB, GB)")),
    };
    let bytes = value * mult as f64;
    if !(bytes.is_finite() && (1.0..1.8e19).contains(&bytes)) {
        return Err(format!("size `{s}` is out of range"));
    }
    Ok(bytes.round() as u64)
}

impl Overrides {
    /// `other`'s values where it has them, else ours.
    pub fn or(self, other: Overrides) -> Overrides {
        Overrides {
            k: other.k.or(self.k),
            selection: other.selection.or(self.selection),
            eviction: other.eviction.or(self.eviction),
            estimation: other.estimation.or(self.estimation),
            bridge_limit: other.bridge_limit.or(self.bridge_limit),
            table_bytes: other.table_bytes.or(self.table_bytes),
            bucket_entries: other.bucket_entries.or(self.bucket_entries),
            seed: other.seed.or(self.seed),
            lucky_y: other.lucky_y.or(self.lucky_y),
            lucky_limit: other.lucky_limit.or(self.lucky_limit),
            index_bytes: other.index_bytes.or(self.index_bytes),
            propagate: other.propagate.or(self.propagate),
            align: other.align.or(self.align),
            near_duplicates: other.near_duplicates.or(self.near_duplicates),
            quotations: other.quotations.or(self.quotations),
            terms: other.terms.or(self.terms),
            density: other.density.or(self.density),
            dominant: other.dominant.or(self.dominant),
            html: other.html.or(self.html),
            attribution: other.attribution.or(self.attribution),
            templates: other.templates.or(self.templates),
            template_pages: other.template_pages.or(self.template_pages),
            submitted_sites: other.submitted_sites.or(self.submitted_sites),
            density_lag: other.density_lag.or(self.density_lag),
            origins: other.origins.or(self.origins),
            site_field: other.site_field.or(self.site_field),
            exact_copies: other.exact_copies.or(self.exact_copies),
            neardup: other.neardup.or(self.neardup),
            quotes: other.quotes.or(self.quotes),
        }
    }

    /// Applies the overrides to `base` and validates the result.
    pub fn apply(&self, base: &Config) -> Result<Config, ConfigError> {
        let mut c = base.clone();
        if let Some(k) = self.k {
            c.k = k;
        }
        if let Some(s) = self.selection {
            c.selection = s;
        }
        if let Some(e) = self.eviction {
            c.eviction = e;
        }
        if let Some(e) = self.estimation {
            c.estimation = e;
        }
        if let Some(t) = self.bridge_limit {
            c.bridge_limit = t;
        }
        if let Some(b) = self.table_bytes {
            if b != c.table_bytes {
                // A new table size brings its default index size unless one is given.
                c.index_bytes = default_index_bytes(b);
            }
            c.table_bytes = b;
        }
        if let Some(b) = self.index_bytes {
            c.index_bytes = b;
        }
        if let Some(b) = self.bucket_entries {
            c.bucket_entries = b;
        }
        if let Some(s) = self.seed {
            c.seed = s;
        }
        if let Some(y) = self.lucky_y {
            c.lucky_y = y;
        }
        if let Some(l) = self.lucky_limit {
            c.lucky_limit = l;
        }
        if let Some(p) = self.propagate {
            c.propagate = p;
        }
        if let Some(a) = self.align {
            c.align = a;
        }
        if let Some(n) = self.near_duplicates {
            c.near_duplicates = n;
        }
        if let Some(q) = self.quotations {
            c.quotations = q;
        }
        if let Some(t) = self.terms {
            c.terms = t;
        }
        if let Some(d) = self.density {
            c.density = d;
        }
        if let Some(d) = self.dominant {
            c.dominant = d;
        }
        if let Some(h) = self.html {
            c.html = h;
        }
        if let Some(a) = self.attribution {
            c.attribution = a;
        }
        if let Some(t) = self.templates {
            c.templates = t;
        }
        if let Some(n) = self.template_pages {
            c.template_pages = n;
        }
        if let Some(t) = self.submitted_sites {
            c.submitted_sites = t;
        }
        if let Some(n) = self.density_lag {
            c.density_lag = n;
        }
        if let Some(o) = self.origins {
            c.origins = o;
        }
        if let Some(f) = &self.site_field {
            c.site_field = f.clone();
        }
        if let Some(e) = self.exact_copies {
            c.exact_copies = e;
        }
        c.validate()?;
        Ok(c)
    }
}

impl Config {
    /// Checks ranges.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(1..=64).contains(&self.k) {
            return Err(ConfigError::K(self.k));
        }
        if !(2..=256).contains(&self.bridge_limit) {
            return Err(ConfigError::BridgeLimit(self.bridge_limit));
        }
        if self.lucky_y == 0 {
            return Err(ConfigError::LuckyY);
        }
        if self.lucky_limit == 0 {
            return Err(ConfigError::LuckyLimit);
        }
        if !(2..=1_000_000).contains(&self.template_pages) {
            return Err(ConfigError::TemplatePages(self.template_pages));
        }
        if self.site_field.trim().is_empty() || self.site_field.trim() != self.site_field {
            return Err(ConfigError::SiteField(self.site_field.clone()));
        }
        Ok(self.table_params().check()?)
    }

    /// One line naming every value that shapes the table's content (stored in the
    /// table header and compared on open). Origin propagation appears only when on, and
    /// the feature switches (which shape the derived indexes) only when off, and the
    /// density and dominant origin only when not the paper's (the density's lag behind
    /// it when not 0), and the HTML mode, the attribution, the site field and exact
    /// copies only when not the rule before, so that tables made before them keep
    /// their line.
    pub fn canonical(&self) -> String {
        format!(
            "k={} selection={} eviction={} estimation={} bridge_limit={} lucky_y={} lucky_limit={} bucket_entries={} table_bytes={} seed={} index_bytes={}{}{}{}{}{}{}{}{}{}{}{}{}",
            self.k,
            self.selection,
            self.eviction,
            self.estimation,
            self.bridge_limit,
            self.lucky_y,
            self.lucky_limit,
            self.bucket_entries,
            self.table_bytes,
            self.seed,
            self.index_bytes,
            if self.propagate { " propagate=on" } else { "" },
            if self.near_duplicates { "" } else { " neardup=off" },
            if self.quotations { "" } else { " quotes=off" },
            // Named when it is not the rule before, so that a table file made before
            // schema 11 keeps its parameters' fingerprint.
            if self.terms == crate::text::Terms::Words { "" } else { " terms=unicode" },
            match (self.density, self.density_lag) {
                (Density::Paper, _) => String::new(),
                (Density::Adaptive, 0) => " density=adaptive".into(),
                (Density::Adaptive, lag) => format!(" density=adaptive/{lag}"),
            },
            if self.dominant == Dominant::Table { "" } else { " dominant=blocks" },
            if self.html == HtmlMode::All { "" } else { " html=main" },
            if self.attribution == Attribution::Earliest { "" } else { " attribution=passage" },
            match (self.templates, self.submitted_sites) {
                (Templates::Off, _) => String::new(),
                (t, SubmittedSites::Trust) => format!(" templates={t}/{}", self.template_pages),
                (t, SubmittedSites::Ignore) => format!(" templates={t}/{}/own-sites", self.template_pages),
            },
            if self.site_field == SITE_FIELD { String::new() } else { format!(" site_field={}", self.site_field) },
            if self.origins { "" } else { " origins=off" },
            if self.exact_copies { " exact_copies=on" } else { "" },
        )
    }

    /// The table's parameters.
    pub fn table_params(&self) -> TableParams {
        TableParams {
            bytes: self.table_bytes,
            bucket_entries: self.bucket_entries,
            eviction: self.eviction,
            seed: self.seed,
            lucky_limit: self.lucky_limit,
            index_bytes: self.index_bytes,
            fingerprint_text: self.canonical(),
            adaptive: self.density == Density::Adaptive,
            density_lag: self.density_lag,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("64MiB").unwrap(), 64 << 20);
        assert_eq!(parse_size("1.5 GB").unwrap(), 1_500_000_000);
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("").is_err());
    }

    #[test]
    fn later_overrides_win_and_results_are_validated() {
        let file = Overrides {
            selection: Some("nw8".parse().unwrap()),
            k: Some(6),
            table_bytes: Some(8 << 20),
            ..Default::default()
        };
        let flags = Overrides { k: Some(5), ..Default::default() };
        let c = file.or(flags).apply(&Config::default()).unwrap();
        assert_eq!(c.k, 5);
        assert_eq!(c.selection.to_string(), "NW8");
        assert_eq!(c.table_bytes, 8 << 20);
        let bad = Overrides { bucket_entries: Some(3), ..Default::default() };
        assert_eq!(bad.apply(&Config::default()), Err(ConfigError::Table(ParamsError::BucketEntries(3))));
    }
}
