//! The inspector's views: a document's results, the list, the statistics and the
//! export, as JSON values and as text for people.
//!
//! JSON field names are part of the interface (`docs/ARCHITECTURE.md` lists them).
//! Everything here reads; nothing writes. Output is deterministic: wall-clock times
//! appear only when asked for.

use serde_json::{json, Value};

use crate::engine::{DocResult, Span};
use crate::estimate::How;
use crate::neardup::{Mode, NearDup};
use crate::store::{DocMeta, Quotation, Store};
use crate::table::Table;

/// `{id, name}` of a document.
pub fn doc_ref(store: &Store, seq: u64) -> Value {
    json!({ "id": seq, "name": store.name_of(seq) })
}

fn slice(text: &str, s: &Span) -> String {
    text.get(s.start_byte as usize..s.end_byte as usize).unwrap_or("").to_string()
}

/// Options of the document view.
#[derive(Debug, Clone, Copy, Default)]
pub struct ViewOptions {
    /// Include every selected shingle's origin.
    pub shingles: bool,
    /// Include the wall-clock ingestion time.
    pub times: bool,
}

/// The JSON of near-duplicates that `mode` accepts.
pub fn near_dups_json(store: &Store, found: &[NearDup], mode: Mode) -> Value {
    found
        .iter()
        .filter(|d| d.says(mode))
        .map(|d| {
            let verdicts: Vec<&str> =
                [("default", d.default), ("B", d.b), ("C", d.c), ("combined", d.combined)].iter().filter(|x| x.1).map(|x| x.0).collect();
            json!({
                "id": d.seq,
                "name": store.name_of(d.seq),
                "exact": d.exact,
                "b_similarity": d.b_similarity,
                "c_similarity": d.c_similarity,
                "resemblance": (d.resemblance * 1e4).round() / 1e4,
                "verdicts": verdicts,
            })
        })
        .collect()
}

/// The JSON of quotations: one entry per quoting sentence (its span and `text`, a slice
/// of the document's `text`) with its sources.
pub fn quotations_json(store: &Store, text: &str, quotes: &[Quotation]) -> Value {
    let mut texts: std::collections::HashMap<u64, String> = std::collections::HashMap::new();
    quotes
        .iter()
        .map(|q| {
            let sources: Vec<Value> = q
                .sources
                .iter()
                .map(|s| {
                    let source = texts.entry(s.seq).or_insert_with(|| store.text(s.seq).ok().flatten().unwrap_or_default());
                    let sentence = store
                        .sentence(s.seq, s.sentence)
                        .ok()
                        .flatten()
                        .and_then(|x| source.get(x.start as usize..x.end as usize).map(str::to_string))
                        .unwrap_or_default();
                    json!({
                        "id": s.seq,
                        "name": store.name_of(s.seq),
                        "sentence": sentence,
                        "distance": s.distance,
                        "score": (s.score * 1e4).round() / 1e4,
                    })
                })
                .collect();
            let quoting = text.get(q.start_byte as usize..q.end_byte as usize).unwrap_or("");
            json!({ "start_byte": q.start_byte, "end_byte": q.end_byte, "text": quoting, "sources": sources })
        })
        .collect()
}

/// Everything the document view shows.
#[derive(Debug, Clone, Copy)]
pub struct DocView<'a> {
    /// None for a query (not stored).
    pub meta: Option<&'a DocMeta>,
    pub name: &'a str,
    pub text: &'a str,
    pub result: &'a DocResult,
    pub near: &'a [NearDup],
    pub quotes: &'a [Quotation],
}

/// The JSON view of a document.
pub fn doc_json(store: &Store, view: DocView<'_>, opt: ViewOptions) -> Value {
    let DocView { meta, name, text, result: r, near, quotes } = view;
    let origin = |seq: u64| -> Value {
        if meta.is_none() && seq == r.seq {
            json!({ "id": null, "name": name })
        } else {
            doc_ref(store, seq)
        }
    };
    let mut v = json!({
        "id": meta.map(|m| m.seq),
        "name": name,
        "source": meta.map(|m| m.source.clone()),
        "url": meta.and_then(|m| m.url.clone()),
        "published_at": meta.and_then(|m| m.published_at.clone()),
        "content_hash": meta.map(|m| m.content_hash.clone()),
        "tokens": r.tokens,
        "shingles": r.shingles,
        "selected": r.selected,
        "hits": r.hits,
        "fresh_tokens": r.fresh_tokens,
        "old_tokens": r.old_tokens,
        "dominant_origin": r.dominant_origin.map(origin),
        "most_copied_origin": r.most_copied_origin.map(origin),
        "origins": r.origin_counts.iter().map(|&(o, n)| {
            let mut x = origin(o);
            x["shingles"] = json!(n);
            x
        }).collect::<Vec<_>>(),
        "copied_blocks": r.copied_blocks.iter().map(|b| json!({
            "start_token": b.span.start_token,
            "end_token": b.span.end_token,
            "start_byte": b.span.start_byte,
            "end_byte": b.span.end_byte,
            "shingles": b.shingles,
            "origin": origin(b.origin),
            "text": slice(text, &b.span),
        })).collect::<Vec<_>>(),
        "novel_segments": r.novel_segments.iter().map(|s| json!({
            "start_token": s.start_token,
            "end_token": s.end_token,
            "start_byte": s.start_byte,
            "end_byte": s.end_byte,
            "text": slice(text, s),
        })).collect::<Vec<_>>(),
        "near_duplicates": near_dups_json(store, near, Mode::Default),
        "quotations": quotations_json(store, text, quotes),
    });
    if opt.shingles {
        v["selected_shingles"] = r
            .selected_origins
            .iter()
            .map(|s| {
                json!({
                    "start_token": s.start_token,
                    "end_token": s.end_token,
                    "origin": s.origin,
                    "how": match s.how { How::Own => "own", How::Found => "found", How::Bridged => "bridged", How::Expanded => "expanded" },
                })
            })
            .collect();
    }
    if opt.times {
        v["ingested_at_ms"] = json!(meta.map(|m| m.ingested_at_ms));
    }
    v
}

fn clip(s: &str, max: usize) -> String {
    let one_line: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        let cut: String = one_line.chars().take(max).collect();
        format!("{cut}…")
    }
}

/// What a view's `dominant_origin` says.
#[derive(Debug, Clone, PartialEq)]
pub enum Dominant {
    /// No origin has a 10% lead (or nothing was selected).
    None,
    /// The document itself: mostly new text.
    Itself,
    /// Another document: (id, name).
    Other(Value, String),
}

/// Reads the dominant origin of a document view (or list row).
pub fn dominant(v: &Value) -> Dominant {
    let dom = &v["dominant_origin"];
    if dom.is_null() {
        Dominant::None
    } else if dom["id"] == v["id"] {
        Dominant::Itself
    } else {
        Dominant::Other(dom["id"].clone(), dom["name"].as_str().unwrap_or("").to_string())
    }
}

fn ref_text(v: &Value) -> String {
    match (&v["id"], v["name"].as_str()) {
        (Value::Null, Some(n)) => format!("{n} (itself)"),
        (id, Some(n)) => format!("#{id} {n}"),
        _ => "none".into(),
    }
}

/// The document view for people.
pub fn doc_text(v: &Value) -> String {
    let mut out = String::new();
    let id = if v["id"].is_null() { "query".to_string() } else { format!("#{}", v["id"]) };
    out += &format!("{id} {}\n", v["name"].as_str().unwrap_or(""));
    if let Some(s) = v["source"].as_str() {
        out += &format!("  source: {s}\n");
    }
    let dom_text = match dominant(v) {
        Dominant::None => "none (no origin has a 10% lead)".to_string(),
        Dominant::Itself => "itself (mostly new text)".to_string(),
        Dominant::Other(..) => ref_text(&v["dominant_origin"]),
    };
    out += &format!("  dominant origin: {dom_text}\n");
    let tokens = v["tokens"].as_u64().unwrap_or(0);
    let old = v["old_tokens"].as_u64().unwrap_or(0);
    let pct = if tokens > 0 { 100.0 * old as f64 / tokens as f64 } else { 0.0 };
    out += &format!(
        "  {tokens} tokens: {old} old ({pct:.1}%), {} fresh; {} shingles, {} selected, {} found in the table\n",
        v["fresh_tokens"], v["shingles"], v["selected"], v["hits"]
    );
    let blocks = v["copied_blocks"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    out += &format!("copied blocks ({}):\n", blocks.len());
    for b in blocks {
        out += &format!(
            "  tokens {}-{} from {}: \"{}\"\n",
            b["start_token"],
            b["end_token"],
            ref_text(&b["origin"]),
            clip(b["text"].as_str().unwrap_or(""), 100)
        );
    }
    let novel = v["novel_segments"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    out += &format!("novel segments ({}):\n", novel.len());
    for s in novel {
        out += &format!("  tokens {}-{}: \"{}\"\n", s["start_token"], s["end_token"], clip(s["text"].as_str().unwrap_or(""), 100));
    }
    let near = v["near_duplicates"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    out += &format!("near-duplicates of earlier documents ({}):\n", near.len());
    out += &near_dups_text(near);
    let quotes = v["quotations"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    out += &format!("quotations ({} sentences):\n", quotes.len());
    out += &quotations_text(quotes);
    out
}

/// Lines for quotations (JSON from [`doc_json`]).
pub fn quotations_text(quotes: &[Value]) -> String {
    let mut out = String::new();
    for q in quotes {
        out += &format!("  \"{}\"\n", clip(q["text"].as_str().unwrap_or(""), 110));
        for s in q["sources"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
            out += &format!(
                "    from #{} {} (score {:.2}, {} bits apart): \"{}\"\n",
                s["id"],
                s["name"].as_str().unwrap_or(""),
                s["score"].as_f64().unwrap_or(0.0),
                s["distance"],
                clip(s["sentence"].as_str().unwrap_or(""), 90)
            );
        }
    }
    out
}

/// Lines for a list of near-duplicates (JSON from [`near_dups_json`]).
pub fn near_dups_text(near: &[Value]) -> String {
    near.iter()
        .map(|d| {
            format!(
                "  #{} {}: {}resemblance {:.2}, {} of 6 supershingles, {} of 384 SimHash bits ({})\n",
                d["id"],
                d["name"].as_str().unwrap_or(""),
                if d["exact"] == true { "exact duplicate, " } else { "" },
                d["resemblance"].as_f64().unwrap_or(0.0),
                d["b_similarity"],
                d["c_similarity"],
                d["verdicts"].as_array().map(|v| v.iter().filter_map(|x| x.as_str()).collect::<Vec<_>>().join(", ")).unwrap_or_default()
            )
        })
        .collect()
}

/// A document's JSON view read from the store.
pub fn stored_doc_json(store: &Store, seq: u64, opt: ViewOptions) -> anyhow::Result<Value> {
    use anyhow::Context;
    let meta = store.doc(seq)?.with_context(|| format!("document #{seq} has no metadata"))?;
    let text = store.text(seq)?.with_context(|| format!("document #{seq} has no text"))?;
    let result = store.result(seq)?.with_context(|| format!("document #{seq} has no result"))?;
    let near = store.near_dups(seq)?;
    let quotes = store.quotations(seq)?;
    let view = DocView { meta: Some(&meta), name: &meta.name, text: &text, result: &result, near: &near, quotes: &quotes };
    Ok(doc_json(store, view, opt))
}

/// The statistics of a data directory.
pub fn stats_json(store: &Store, table: &Table, config: &crate::config::Config) -> anyhow::Result<Value> {
    let s = table.stats();
    let docs = store.next_seq()? - 1;
    let pct = |a: u64, b: u64| if b == 0 { 0.0 } else { 100.0 * a as f64 / b as f64 };
    Ok(json!({
        "documents": docs,
        "table": {
            "path": table.path().display().to_string(),
            "bytes": config.table_bytes,
            "buckets": table.buckets(),
            "bucket_entries": table.bucket_entries(),
            "capacity": table.capacity(),
            "occupied": s.occupied,
            "fill_pct": pct(s.occupied, table.capacity()),
            "inserts": s.inserts,
            "evictions": s.evictions,
            "lookups": s.lookups,
            "hits": s.hits,
            "hit_pct": pct(s.hits, s.lookups),
            "last_applied": s.last_seq,
            "in_use": table.in_use(),
        },
        "shingles": s.shingles,
        "ssr_pct": pct(s.lookups, s.shingles),
        "table_digest": format!("{:016x}", table.digest()),
        "config": config.canonical(),
    }))
}

/// The statistics for people.
pub fn stats_text(v: &Value) -> String {
    let t = &v["table"];
    format!(
        "documents:   {}\ntable:       {} ({} bytes, {} buckets of {} entries)\n  fill:      {} of {} entries ({:.1}%)\n  inserts:   {}, evictions: {}\n  lookups:   {}, hits: {} ({:.1}%)\nssr:         {:.1}% of {} shingles sent to the table\ntable_digest: {}\nconfig:      {}\n",
        v["documents"],
        t["path"].as_str().unwrap_or(""),
        t["bytes"],
        t["buckets"],
        t["bucket_entries"],
        t["occupied"],
        t["capacity"],
        t["fill_pct"].as_f64().unwrap_or(0.0),
        t["inserts"],
        t["evictions"],
        t["lookups"],
        t["hits"],
        t["hit_pct"].as_f64().unwrap_or(0.0),
        v["ssr_pct"].as_f64().unwrap_or(0.0),
        v["shingles"],
        v["table_digest"].as_str().unwrap_or(""),
        v["config"].as_str().unwrap_or(""),
    )
}

/// One row of the list.
pub fn list_row(store: &Store, meta: &DocMeta) -> anyhow::Result<Value> {
    let r = store.result(meta.seq)?.unwrap_or_default();
    Ok(json!({
        "id": meta.seq,
        "name": meta.name,
        "source": meta.source,
        "tokens": r.tokens,
        "old_tokens": r.old_tokens,
        "copied_blocks": r.copied_blocks.len(),
        "dominant_origin": r.dominant_origin.map(|o| doc_ref(store, o)),
    }))
}
