//! The views for people: plain text rendered from the view model.

use super::model::{
    DocRef, DocumentView, Dominant, ListRow, NearDupView, NearDupsView, QuotationView, QuotesView, RevisionView,
    StatsView,
};
use textorigin_store::check::CheckReport;

/// A name, path or reason as it may be shown on a terminal: control characters (C0 and
/// C1: escape sequences, bells, line breaks) and the bidirectional controls (U+202E
/// and its kin, which reorder what a terminal shows: "Trojan Source") written as
/// `\u{1b}` and the like, never sent.
pub fn safe(s: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| {
        c.is_control()
            || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if s.chars().any(unsafe_char) {
        s.chars()
            .map(|c| if unsafe_char(c) { c.escape_unicode().to_string() } else { c.to_string() })
            .collect::<String>()
            .into()
    } else {
        s.into()
    }
}

/// [`safe`] for a message of several lines: its line breaks are kept (error
/// messages printed a literal `\u{a}` where they meant a new line), every other control
/// character escaped.
pub fn safe_lines(s: &str) -> String {
    s.split('\n').map(safe).collect::<Vec<_>>().join("\n")
}

/// A table digest with the state it is of, when that is not the table's now.
fn digest_line(digest: &str, of: Option<&str>) -> String {
    match of {
        Some(of) => format!("{digest} ({of})"),
        None => digest.to_string(),
    }
}

fn clip(s: &str, max: usize) -> String {
    let one_line: String = safe(&s.split_whitespace().collect::<Vec<_>>().join(" ")).into_owned();
    if one_line.chars().count() <= max {
        one_line
    } else {
        let cut: String = one_line.chars().take(max).collect();
        format!("{cut}…")
    }
}

fn ref_text(r: &DocRef) -> String {
    let title = r.title.as_ref().map_or_else(String::new, |t| format!(" “{}”", safe(t)));
    match r.id {
        None => format!("{} (itself)", safe(&r.name)),
        Some(id) => format!("#{id} {}{title}", safe(&r.name)),
    }
}

fn pct(part: u32, whole: u32) -> f64 {
    if whole > 0 {
        100.0 * f64::from(part) / f64::from(whole)
    } else {
        0.0
    }
}

/// The revisions of a document's result, oldest first: what each changed (`show
/// --history`).
pub fn history(v: &DocumentView) -> String {
    let id = v.id.map_or_else(|| "query".to_string(), |id| format!("#{id}"));
    if v.revisions.is_empty() {
        return format!("{id} {}: never revised\n", safe(&v.name));
    }
    let mut out = format!("{id} {}: {} revision(s), oldest first\n", safe(&v.name), v.revisions.len());
    // A revision's state after is the next one's before, the last one's the result now.
    let dominant = |d: Option<&DocRef>| d.map_or_else(|| "itself".to_string(), ref_text);
    let now: Vec<(u32, u32, &DocRef)> =
        v.copied_blocks.iter().map(|b| (b.start_token, b.end_token, &b.origin)).collect();
    let state = |when: &str, old: u32, dom: Option<&DocRef>, blocks: &[(u32, u32, &DocRef)]| {
        let mut s = format!("    {when}: {old} old tokens, dominant origin {}\n", dominant(dom));
        for (start, end, origin) in blocks {
            s += &format!("    {when}: tokens {start}-{end} from {}\n", ref_text(origin));
        }
        s
    };
    #[allow(clippy::type_complexity)] // old tokens, dominant origin, blocks: named above
    fn before(r: &RevisionView) -> (u32, Option<&DocRef>, Vec<(u32, u32, &DocRef)>) {
        let blocks = r.copied_blocks_before.iter().map(|b| (b.start_token, b.end_token, &b.origin)).collect();
        (r.old_tokens_before, r.dominant_origin_before.as_ref(), blocks)
    }
    for (i, r) in v.revisions.iter().enumerate() {
        let via = r.caused_via.map_or_else(String::new, |v| format!(" (came in by {v})"));
        out += &format!("  revised by {}{via}\n", ref_text(&r.caused_by));
        let (old, dom, blocks) = before(r);
        out += &state("before", old, dom, &blocks);
        let (old, dom, blocks) = match v.revisions.get(i + 1) {
            Some(next) => before(next),
            None => (v.old_tokens, v.dominant_origin.as_ref(), now.clone()),
        };
        out += &state("after", old, dom, &blocks);
    }
    out
}

/// The document view.
pub fn document(v: &DocumentView) -> String {
    let mut out = String::new();
    let id = v.id.map_or_else(|| "query".to_string(), |id| format!("#{id}"));
    out += &format!("{id} {}\n", safe(&v.name));
    if let Some(s) = &v.source {
        out += &format!("  source: {}\n", safe(s));
    }
    for (what, value) in [("url", &v.url), ("published", &v.published_at)] {
        if let Some(x) = value {
            out += &format!("  {what}: {}\n", safe(x));
        }
    }
    if let Some(m) = &v.meta {
        out += &format!("  meta: {}\n", safe(&m.to_string()));
    }
    if let Some(of) = &v.exact_copy_of {
        out += &format!("  an exact copy of {} (its terms; answered from it, not analysed again)\n", ref_text(of));
    }
    for r in &v.revisions {
        out += &format!("  revised by {} (published before an origin of this one)\n", ref_text(&r.caused_by));
    }
    if v.origins_off {
        out += &format!(
            "  origins: off in this data directory (near-duplicates and quotations alone)\n  {} tokens, {} shingles\n",
            v.tokens, v.shingles
        );
    } else {
        out += &origins(v);
    }
    if !v.templates.is_empty() {
        out += &format!("site template lines ({}, not copies):\n", v.templates.len());
        for t in &v.templates {
            out += &format!(
                "  tokens {}-{} on {} pages: \"{}\"\n",
                t.start_token,
                t.end_token,
                t.pages,
                clip(&t.text, 100)
            );
        }
    }
    match &v.near_duplicates {
        Some(near) => out += &format!("near-duplicates of earlier documents ({}):\n{}", near.len(), near_dups(near)),
        None => out += "near-duplicates of earlier documents: off in this data directory\n",
    }
    match &v.quotations {
        Some(quotes) => out += &format!("quotations ({} sentences):\n{}", quotes.len(), quotations(quotes)),
        None => out += "quotations: off in this data directory\n",
    }
    if let Some(c) = &v.copied_by {
        out += &format!("copied by ({} documents):\n", c.count);
        for d in &c.documents {
            out += &format!("  {}: {} tokens\n", ref_text(&d.document), d.tokens);
        }
        if c.count > c.documents.len() {
            out += &format!("  ... and {} more\n", c.count - c.documents.len());
        }
    }
    out
}

/// The lines of a document view about its origins: the dominant origin, old and fresh
/// tokens, the similarity to each source, copied blocks and novel segments.
fn origins(v: &DocumentView) -> String {
    let mut out = String::new();
    let mut dom_text = match v.dominant() {
        Dominant::None => "none (no tokens)".to_string(),
        Dominant::Itself => v.itself_text(),
        Dominant::Other(r) => ref_text(r),
    };
    if v.dominant_by_rule() != v.dominant() {
        dom_text += &match v.dominant_by_rule() {
            Dominant::Other(r) => format!(" (the paper's 10% rule: {})", ref_text(r)),
            Dominant::Itself => " (the paper's 10% rule: itself)".to_string(),
            Dominant::None => " (the paper's 10% rule: none, no origin leads by 10%)".to_string(),
        };
    }
    out += &format!("  dominant origin: {dom_text}\n");
    let template = match (v.template_tokens, v.furniture_copied) {
        (0, _) => String::new(),
        (n, 0) => format!(", {n} site template (neither)"),
        (n, c) => format!(", {n} site template (neither; {c} copied tokens now labelled furniture)"),
    };
    let found = match &v.exact_copy_of {
        Some(of) => format!("each in #{}", of.id.unwrap_or(0)),
        None => format!("{} found in the table", v.hits),
    };
    out += &format!(
        "  {} tokens: {} old ({:.1}%), {} fresh{template}; {} shingles, {} selected, {found}\n",
        v.tokens,
        v.old_tokens,
        pct(v.old_tokens, v.old_tokens + v.fresh_tokens),
        v.fresh_tokens,
        v.shingles,
        v.selected,
    );
    if let Some(similarity) = v.similarity.as_ref().filter(|s| !s.is_empty()) {
        out += "  similarity to each source:";
        for s in similarity {
            out += &format!(" {:.1}% {};", s.percent, ref_text(&s.origin));
        }
        out.pop();
        out += "\n";
    }
    out += &format!("copied blocks ({}):\n", v.copied_blocks.len());
    for b in &v.copied_blocks {
        let there = match &b.source {
            Some(s) => format!(" (its tokens {}-{})", s.start_token, s.end_token),
            None => String::new(),
        };
        out += &format!(
            "  tokens {}-{} from {}{there}: \"{}\"\n",
            b.start_token,
            b.end_token,
            ref_text(&b.origin),
            clip(&b.text, 100)
        );
        for x in &b.also_earlier {
            out += &format!("    also earlier in {}: tokens {}-{}\n", ref_text(&x.origin), x.start_token, x.end_token);
        }
        if !b.edits.is_empty() {
            let edits: Vec<String> = b.edits.iter().map(u32::to_string).collect();
            out += &format!("    edited tokens ({}): {}\n", edits.len(), edits.join(", "));
        }
    }
    out += &format!("novel segments ({}):\n", v.novel_segments.len());
    for s in &v.novel_segments {
        out += &format!("  tokens {}-{}: \"{}\"\n", s.start_token, s.end_token, clip(&s.text, 100));
    }
    out
}

/// Lines for quotations.
pub fn quotations(quotes: &[QuotationView]) -> String {
    let mut out = String::new();
    for q in quotes {
        out += &format!("  \"{}\"\n", clip(&q.text, 110));
        for s in &q.sources {
            out += &format!(
                "    from #{} {}{} (score {:.2}, {} bits apart): \"{}\"\n",
                s.id,
                safe(&s.name),
                late(s.arrived_after),
                s.score,
                s.distance,
                clip(&s.sentence, 90)
            );
        }
    }
    out
}

/// The mark of a pair found by a late arrival (text and HTML pages).
pub(super) fn late(arrived_after: bool) -> &'static str {
    if arrived_after {
        " (published before, arrived after)"
    } else {
        ""
    }
}

/// Lines for near-duplicates.
pub fn near_dups(near: &[NearDupView]) -> String {
    near.iter()
        .map(|d| {
            format!(
                "  #{} {}{}: {}resemblance {:.2}, {} of 6 supershingles, {} of 384 SimHash bits ({})\n",
                d.id,
                safe(&d.name),
                late(d.arrived_after),
                if d.exact { "exact duplicate, " } else { "" },
                d.resemblance,
                d.b_similarity,
                d.c_similarity,
                d.verdicts.join(", ")
            )
        })
        .collect()
}

/// The `neardups` view.
pub fn neardups(v: &NearDupsView) -> String {
    let mut out = format!("#{} {}\n", v.id, safe(&v.name));
    out += &format!("earlier near-duplicates ({}):\n", v.near_duplicates.len());
    out += &near_dups(&v.near_duplicates);
    if let Some(later) = &v.later {
        out += &format!("later near-duplicates ({}):\n", later.len());
        out += &near_dups(later);
    }
    out
}

/// The `quotes` view.
pub fn quotes(v: &QuotesView) -> String {
    format!("#{} {}: {} quoting sentence(s)\n", v.id, safe(&v.name), v.quotations.len()) + &quotations(&v.quotations)
}

/// The list.
pub fn list(rows: &[ListRow]) -> String {
    let mut out = format!("{:>6}  {:<32} {:>7} {:>6}  dominant origin\n", "id", "name", "tokens", "old%");
    for r in rows {
        let dom = match r.dominant() {
            Dominant::None => "-".to_string(),
            Dominant::Itself => r.itself_text().to_string(),
            Dominant::Other(d) => ref_text(d),
        };
        let dom = match &r.exact_copy_of {
            Some(of) => format!("an exact copy of {}", ref_text(of)),
            None => dom,
        };
        if r.origins_off {
            let what = if r.exact_copy_of.is_some() { dom.as_str() } else { "origins off" };
            out += &format!("{:>6}  {:<32} {:>7} {:>6}  {what}\n", r.id, safe(&r.name), r.tokens, "-");
            continue;
        }
        out += &format!(
            "{:>6}  {:<32} {:>7} {:>5.1}%  {}\n",
            r.id,
            safe(&r.name),
            r.tokens,
            pct(r.old_tokens, r.tokens - r.template_tokens),
            dom
        );
    }
    out
}

fn on_off(on: bool) -> &'static str {
    if on {
        "on"
    } else {
        "off"
    }
}

/// The statistics.
pub fn stats(v: &StatsView) -> String {
    let t = &v.table;
    // A deployment's aggregator holds no bucket: its workers hold the table.
    let table = match v.sharded {
        true => "table:       the deployment's shard workers' (`textorigin cluster union` of their images: its digest \
                 and counters)\n"
            .to_string(),
        false => format!(
            "table:       {} ({} bytes, {} buckets of {} entries, {} in use)\n  fill:      {} of {} entries ({:.1}%)\n  \
             inserts:   {}, evictions: {}\n  lookups:   {}, hits: {} ({:.1}%)\nssr:         {:.1}% of {} shingles sent to \
             the table\n",
            t.path,
            t.bytes,
            t.buckets,
            t.bucket_entries,
            t.used_buckets,
            t.occupied,
            t.capacity,
            t.fill_pct,
            t.inserts,
            t.evictions,
            t.lookups,
            t.hits,
            t.hit_pct,
            v.ssr_pct,
            v.shingles,
        ),
    };
    let mut out = format!(
        "documents:   {}\n{}density:     {}\n{}indexes:     {} bytes: {} documents; words {} of {} (evicted {}), signatures {} of {} (evicted {}, copies not indexed {}), near-dup keys {} of {} (evicted {}){}\n  in use:    buckets of words {} of {}, of signatures {} of {}, of near-dup keys {} of {}\nindex_digest: {}\nconfig:      {}\norigins:     {}\nfeatures:    near-duplicates {}{}, quotations {}{}{}\n",
        v.documents,
        table,
        match t.density.as_str() {
            "paper" => "paper (the selection alone)".to_string(),
            d => format!("{d} of the shingles the selection leaves out are sent too (adaptive: the selection alone once the table is full)"),
        },
        match v.sharded {
            true => String::new(),
            false => format!("table_digest: {}\n", digest_line(&v.table_digest, v.digest_of.as_deref())),
        },
        v.indexes.bytes,
        v.indexes.counters.documents,
        v.indexes.counters.df_inserts - v.indexes.counters.df_evictions,
        v.indexes.df_capacity,
        v.indexes.counters.df_evictions,
        v.indexes.counters.sig_inserts - v.indexes.counters.sig_evictions,
        v.indexes.signature_capacity,
        v.indexes.counters.sig_evictions,
        v.indexes.counters.sig_copies,
        v.indexes.counters.nd_inserts - v.indexes.counters.nd_evictions,
        v.indexes.neardup_capacity,
        v.indexes.counters.nd_evictions,
        if v.sharded { " (signatures and near-dup keys: the shard workers')" } else { "" },
        v.indexes.buckets_in_use[0],
        v.indexes.buckets[0],
        v.indexes.buckets_in_use[1],
        v.indexes.buckets[1],
        v.indexes.buckets_in_use[2],
        v.indexes.buckets[2],
        v.index_digest,
        v.config,
        match v.origins {
            true => format!("propagation {}, alignment {}", on_off(v.propagate), on_off(v.align)),
            false => "off (near-duplicates and quotations alone)".to_string(),
        },
        if v.near_duplicates { "on" } else { "off" },
        match (v.near_duplicates, v.near_verify) {
            (false, _) => String::new(),
            (true, true) => format!(
                " (shingles of {} terms at Jaccard {}, a pair near it decided exactly)",
                v.near_k, v.near_threshold
            ),
            (true, false) => format!(" (shingles of {} terms at Jaccard {}, by the estimate)", v.near_k, v.near_threshold),
        },
        if v.quotations { "on" } else { "off" },
        if v.quotations && v.quote_clauses { " (by sentence and by clause)" } else { "" },
        if v.quotations && !v.quote_exact_index { ", its index by pieces" } else { "" },
    );
    if t.needs_recovery {
        out += "recovery:    needed: the table is marked in use but its writer is gone (killed, or the power failed); the next `ingest` or `serve` recovers it, or `textorigin rebuild`\n";
    }
    out += &format!("revisions:   {} document(s) waiting in the revision queue\n", v.revision_queue);
    if let Some(t) = &v.templates {
        out += &format!(
            "templates:   {} line(s) of site furniture on {} site(s) left out of old%, the copied blocks and the quotation search (a line of up to {} terms on {} pages of its site or more; `--templates off` for a new data directory, `rebuild --reanalyse --templates off` for this one, labels none)\n",
            t.lines, t.sites, t.max_terms, t.pages
        );
    }
    let parts: Vec<String> = v.store_bytes.iter().map(|(cf, b)| format!("{cf} {:.1}", *b as f64 / 1e6)).collect();
    out += &format!(
        "store:       {:.1} MB on disk, {:.1} MB of it write-ahead log (MB of table files by kind: {})\n",
        v.store_disk_bytes as f64 / 1e6,
        v.store_log_bytes as f64 / 1e6,
        if parts.is_empty() { "none yet".to_string() } else { parts.join(", ") }
    );
    if let Some(free) = v.disk_free_bytes {
        let short = if free < v.checkpoint_needs_bytes { ": too little, the next checkpoint may fail" } else { "" };
        out += &format!(
            "disk:        {:.1} MB free; a checkpoint needs about {:.1} MB free (what the table file holds){short}\n",
            free as f64 / 1e6,
            v.checkpoint_needs_bytes as f64 / 1e6
        );
    }
    if let Some(d) = &v.daemon {
        out += &format!(
            "daemon:      pid {}, {}; {} files admitted, {} failed; last applied #{}; checkpoint generation {} at #{}; backlog {}; {:.1} documents/s\n",
            d.pid,
            d.state,
            d.files_admitted,
            d.files_failed,
            d.last_applied,
            d.last_checkpoint_generation,
            d.last_checkpoint_seq,
            d.spool_backlog,
            d.documents_per_second
        );
    }
    out
}

/// The `check` report (without the verdict line).
pub fn check(v: &CheckReport) -> String {
    let mut out = String::new();
    for s in &v.slots {
        out += s;
        out.push('\n');
    }
    out += &format!(
        "documents: {}; table: documents up to #{}{}\n",
        v.documents,
        v.table_last,
        match (v.table_in_use, v.writer_alive) {
            (true, true) => " (in use by a live writer)",
            (true, false) => " (marked in use by a writer that died)",
            (false, _) => "",
        }
    );
    out += &format!("table_digest: {}\n", digest_line(&v.table_digest, v.digest_of.as_deref()));
    out
}
