use std::process::ExitCode;

use anyhow::Result;
use textorigin_store::storage::datadir::{DataDir, RebuildOptions};

use crate::args::{on_off, size, DataArg};

/// Rebuild the table and its derived indexes by replaying the stored documents in
/// order: after an interrupted run, or to resize them (a stream that outgrew its
/// table). Each recomputed result is checked against the stored one; the stored
/// results are kept unless `--reanalyse` is given.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    data: DataArg,
    /// A new table size (bytes or with a unit, e.g. 1GiB): the rebuilt table has it, and
    /// the index size follows (half, at least 8MiB) unless --index-size is given.
    #[arg(long)]
    table_size: Option<String>,
    /// A new size of the derived indexes (document frequencies, quotation signatures,
    /// near-duplicate keys).
    #[arg(long)]
    index_size: Option<String>,
    /// Replace the stored results (origins, near-duplicates, quotations) by what the
    /// rebuilt table and indexes give. Without it they are kept as they are.
    #[arg(long)]
    reanalyse: bool,
    /// Turn origin propagation on or off (needs --reanalyse: the stored results
    /// follow from the table).
    #[arg(long, value_name = "on|off", value_parser = on_off)]
    propagate: Option<bool>,
    /// Turn the alignment of copied blocks on or off (needs --reanalyse).
    #[arg(long, value_name = "on|off", value_parser = on_off)]
    align: Option<bool>,
    /// Turn near-duplicate detection on or off (needs --reanalyse: every stored document
    /// is sketched and compared again, or its near-duplicates are dropped).
    #[arg(long = "neardup", value_name = "on|off", value_parser = on_off)]
    near_duplicates: Option<bool>,
    /// Turn quotation search on or off (needs --reanalyse: every stored document's
    /// sentences are searched again, or its quotations are dropped).
    #[arg(long = "quotes", value_name = "on|off", value_parser = on_off)]
    quotations: Option<bool>,
    /// Turn origins on or off (needs --reanalyse: every stored document is applied to
    /// the table and aligned again, or its origins are dropped and near-duplicates and
    /// quotations alone are kept).
    #[arg(long, value_name = "on|off", value_parser = on_off)]
    origins: Option<bool>,
    /// Answer exact copies from their earlier documents, or analyse them in full (needs
    /// --reanalyse): `--exact-copies on` moves a data directory made before schema 28
    /// to the rule of new ones.
    #[arg(long, value_name = "on|off", value_parser = on_off)]
    exact_copies: Option<bool>,
    /// Another rule of what makes a term, unicode or words (needs --reanalyse: every
    /// document is tokenized again): `--terms unicode` moves a data directory made
    /// before schema 11 to the rule of new ones (each Chinese or Japanese ideograph a term).
    #[arg(long, value_name = "unicode|words")]
    terms: Option<textorigin_core::text::Terms>,
    /// Quotation search by clauses too, on or off (needs --reanalyse: every sentence is
    /// indexed and searched again): `--quote-clauses on` moves a data directory made
    /// before schema 12 to the search of new ones.
    #[arg(long, value_name = "on|off", value_parser = on_off)]
    quote_clauses: Option<bool>,
    /// The quotation index laid out for exact searches, on or off (needs --reanalyse:
    /// every sentence is indexed and searched again): `--quote-exact-index on` moves a
    /// data directory made before schema 22 to the index of new ones (each signature
    /// once, in the bucket a hash of it picks: an eighth of the entries read a search).
    #[arg(long, value_name = "on|off", value_parser = on_off)]
    quote_exact_index: Option<bool>,
    /// Another selection density, adaptive or paper (needs --reanalyse: every document
    /// is selected and applied again): `--density adaptive` moves a data directory made
    /// before schema 17 to the selection of new ones (more shingles while the table has
    /// room).
    #[arg(long, value_name = "adaptive|paper")]
    density: Option<textorigin_core::config::Density>,
    /// Another lag of the adaptive density, in documents (needs --reanalyse):
    /// `--density-lag 32` moves a data directory made before schema 23 to the rule of
    /// new ones (the density moves at document ends only, as a sharded deployment's
    /// shards can agree on).
    #[arg(long, value_name = "DOCS")]
    density_lag: Option<u8>,
    /// Another dominant origin, blocks or table (needs --reanalyse): `--dominant blocks`
    /// moves a data directory made before schema 17 to the dominant origin of new ones.
    #[arg(long, value_name = "blocks|table")]
    dominant: Option<textorigin_core::config::Dominant>,
    /// Another attribution, passage or earliest (needs --reanalyse): `--attribution
    /// passage` moves a data directory made before schema 20 to the attribution of new
    /// ones (a copied passage one block of its source, earlier holders of its stock
    /// phrases listed beside it, runs through light edits).
    #[arg(long, value_name = "passage|earliest")]
    attribution: Option<textorigin_core::config::Attribution>,
    /// Another site template labelling, site, all or off (needs --reanalyse):
    /// `--templates site` moves a data directory made before schema 21 to the
    /// labelling of new ones (a line on --template-pages pages of one site is its
    /// template: neither old nor fresh).
    #[arg(long, value_name = "site|all|off")]
    templates: Option<textorigin_core::config::Templates>,
    /// The pages of one site a line must stand on to be template there (needs
    /// --reanalyse).
    #[arg(long, value_name = "N")]
    template_pages: Option<u32>,
    /// Whether the `site` and `url` of the documents the spool and HTTP took name
    /// their sites, ignore or trust (needs --reanalyse): `--submitted-sites ignore`
    /// moves a data directory made before schema 25 to the rule of new ones.
    #[arg(long, value_name = "ignore|trust")]
    submitted_sites: Option<textorigin_core::config::SubmittedSites>,
    /// The field of a document's JSON metadata that names its site (needs --reanalyse):
    /// the sites of every document are named again from it.
    #[arg(long, value_name = "FIELD")]
    site_field: Option<String>,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let opts = RebuildOptions {
        table_bytes: a.table_size.as_deref().map(size).transpose()?,
        index_bytes: a.index_size.as_deref().map(size).transpose()?,
        reanalyse: a.reanalyse,
        propagate: a.propagate,
        align: a.align,
        near_duplicates: a.near_duplicates,
        quotations: a.quotations,
        origins: a.origins,
        terms: a.terms,
        quote_clauses: a.quote_clauses,
        quote_exact_index: a.quote_exact_index,
        density: a.density,
        density_lag: a.density_lag,
        dominant: a.dominant,
        attribution: a.attribution,
        templates: a.templates,
        template_pages: a.template_pages,
        submitted_sites: a.submitted_sites,
        site_field: a.site_field,
        exact_copies: a.exact_copies,
    };
    let pb = super::ReplayProgress::new(&a.data.dir, "rebuild");
    let r = DataDir::rebuild(&a.data.dir, opts, |i, total| pb.at(i, total))?;
    pb.finish();
    eprintln!("configuration: {}", r.config);
    if r.resized || a.reanalyse {
        let done =
            if a.reanalyse { "stored results replaced" } else { "stored results kept (--reanalyse replaces them)" };
        eprintln!(
            "rebuilt the table from {} document(s); {} origin result(s) differ with the new table; {done}",
            r.documents, r.differing
        );
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "rebuilt the table from {} document(s); {} recomputed result(s) differed from the stored ones",
        r.documents, r.differing
    );
    Ok(if r.differing > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
