//! What a dedup pipeline acts on, from the document views: a summary row per
//! document (`export --format csv`, the Python annotations), a keep or drop decision
//! with the rule that made it and the document's near-duplicate cluster, the copied
//! spans as Dolma attributes, and the documents as a corpus again (without the dropped
//! ones, optionally without their copied spans).
//!
//! Each works on one document at a time, in sequence order: the outputs stream, and the
//! only state is a bounded memo of cluster roots (the decisions). Deterministic: the
//! same data directory gives the same bytes.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::{Map, Value};
use textorigin_core::neardup::{Mode, NearDupConfig};
use textorigin_store::storage::store::Store;

use super::model::{round4, DocumentView, Dominant, NearDupView, ViewError};

/// One document in a row: what a table or a dataset column wants. Documents are named
/// by the input's own ids ([`input_id`]), which a user joins the results back on;
/// textorigin's sequence number is `seq`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub id: Value,
    pub seq: u64,
    pub tokens: u32,
    /// Old tokens over all tokens (4 decimals).
    pub old_fraction: f64,
    /// The dominant origin when it is another document.
    pub dominant_origin: Option<Value>,
    /// The earlier document it resembles most (ties: the earliest), if any.
    pub near_duplicate_of: Option<Value>,
    /// The earliest-published earlier document with the same text (exact hash), if any.
    pub exact_duplicate_of: Option<Value>,
    /// Quoting sentences; None when quotation search is off.
    pub quotations: Option<usize>,
}

/// The columns of [`Summary`], in order (the CSV header).
pub const SUMMARY_COLUMNS: [&str; 8] =
    ["id", "seq", "tokens", "old_fraction", "dominant_origin", "near_duplicate_of", "exact_duplicate_of", "quotations"];

/// The summary of a stored document's view (the documents it names read from `store`
/// for their input ids).
pub fn summary(store: &Store, v: &DocumentView) -> Result<Summary, ViewError> {
    let near = v.near_duplicates.as_deref().unwrap_or_default();
    // Earliest published first: on a tie the one before stays.
    let most = near.iter().fold(None::<&NearDupView>, |best, d| match best {
        Some(b) if b.resemblance >= d.resemblance => Some(b),
        _ => Some(d),
    });
    let dominant = match v.dominant() {
        Dominant::Other(r) => r.id,
        _ => None,
    };
    let of = |seq: Option<u64>| seq.map(|s| stored_input_id(store, s)).transpose();
    Ok(Summary {
        id: input_id(v),
        seq: v.id.unwrap_or(0),
        tokens: v.tokens,
        old_fraction: round4(fraction(v.old_tokens, v.old_tokens + v.fresh_tokens)),
        dominant_origin: of(dominant)?,
        near_duplicate_of: of(most.map(|d| d.id))?,
        exact_duplicate_of: of(exact_copy_of(near))?,
        quotations: v.quotations.as_ref().map(Vec::len),
    })
}

/// The input id of stored document `seq` (`#seq` where the store does not have it).
pub fn stored_input_id(store: &Store, seq: u64) -> Result<Value, ViewError> {
    Ok(match store.doc(seq)? {
        Some(m) => input_id_of(&m.name, m.id_number),
        None => Value::String(format!("#{seq}")),
    })
}

/// An input id as a CSV cell or in words: a string as it is, a number as JSON writes it.
pub fn id_text(id: &Value) -> String {
    match id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The earliest earlier document with the same text (exact hash), if any.
fn exact_copy_of(near: &[NearDupView]) -> Option<u64> {
    near.iter().find(|d| d.exact).map(|d| d.id)
}

fn fraction(part: u32, whole: u32) -> f64 {
    if whole == 0 {
        0.0
    } else {
        f64::from(part) / f64::from(whole)
    }
}

/// The summary's fields as CSV cells, in [`SUMMARY_COLUMNS`] order (empty: none).
pub fn summary_cells(s: &Summary) -> [String; 8] {
    let opt = |x: &Option<Value>| x.as_ref().map_or_else(String::new, id_text);
    [
        id_text(&s.id),
        s.seq.to_string(),
        s.tokens.to_string(),
        format!("{:.4}", s.old_fraction),
        opt(&s.dominant_origin),
        opt(&s.near_duplicate_of),
        opt(&s.exact_duplicate_of),
        s.quotations.map_or_else(String::new, |q| q.to_string()),
    ]
}

/// When a document is dropped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// A near-duplicate of an earlier document at this resemblance or more.
    pub near: f64,
    /// This fraction of its tokens or more found in earlier documents.
    pub old: f64,
}

/// The old-fraction threshold when none is given.
pub const OLD_THRESHOLD: f64 = 0.9;

impl Thresholds {
    /// The thresholds asked for, by default the near-duplicate threshold of the data
    /// directory's search (`nd`) and [`OLD_THRESHOLD`], checked against that search: the
    /// decisions read the near-duplicates it kept, so a near threshold below what it
    /// keeps would silently act as that.
    pub fn of(nd: &NearDupConfig, near: Option<f64>, old: Option<f64>) -> Result<Thresholds, String> {
        let t = Thresholds { near: near.unwrap_or(nd.threshold), old: old.unwrap_or(OLD_THRESHOLD) };
        if !(0.0..=1.0).contains(&t.near) || t.old < 0.0 {
            return Err("the near threshold must be within 0-1 and the old threshold at least 0".into());
        }
        // With exact verification every pair at the threshold is kept; before schema 14
        // those whose estimate reached the threshold less the margin.
        let kept = nd.lowest();
        let how = if nd.verify {
            format!("pairs of resemblance {kept:.2} or more, its threshold")
        } else {
            format!(
                "resemblance estimates of {kept:.2} or more: its threshold {} less its margin {}",
                nd.threshold, nd.margin
            )
        };
        if t.near < kept - 1e-9 {
            return Err(format!(
                "near threshold {} is below what this data directory's near-duplicate search keeps ({how}); a lower threshold needs a data directory made with a lower `--near-threshold` (see README, Configuration)",
                t.near
            ));
        }
        Ok(t)
    }
}

/// Why a document is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    ExactDuplicate,
    NearDuplicate,
    OldFraction,
}

/// A document's keep or drop decision, documents named by their input ids as in
/// [`Summary`] (its sequence number is `seq`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    pub id: Value,
    pub seq: u64,
    /// "keep" or "drop".
    pub decision: &'static str,
    /// The rule that dropped it (None: kept), as a code, and why in words.
    pub rule: Option<Reason>,
    pub reason: Option<String>,
    /// The earlier document of the duplicate rules; for the old-fraction rule the
    /// document's dominant origin (its most-copied one when it dominates itself).
    pub of: Option<Value>,
    pub resemblance: Option<f64>,
    pub old_fraction: f64,
    /// Its cluster: the id of the earliest member, reached through near-duplicate links
    /// and, for a document dropped for its old fraction, its `of` (itself when it has
    /// neither).
    pub cluster: Value,
    /// The cluster's earliest member's sequence number (Dolma's attributes are numbers).
    #[serde(skip)]
    pub cluster_seq: u64,
}

/// Cluster roots remembered (the memo is cleared when full; a root forgotten is read
/// again from the store).
const ROOTS_HELD: usize = 1 << 20;

/// Decides documents in sequence order.
pub struct Decider<'a> {
    store: &'a Store,
    pub thresholds: Thresholds,
    roots: HashMap<u64, u64>,
}

impl<'a> Decider<'a> {
    pub fn new(store: &'a Store, thresholds: Thresholds) -> Decider<'a> {
        Decider { store, thresholds, roots: HashMap::new() }
    }

    /// The earliest earlier document of `near` (id, exact, resemblance; earliest
    /// published first, as the store lists them) at the threshold; an exact copy always
    /// qualifies.
    fn link(&self, mut near: impl Iterator<Item = (u64, bool, f64)>) -> Option<(u64, f64)> {
        near.find(|&(_, exact, r)| exact || r >= self.thresholds.near)
            .map(|(id, exact, r)| (id, if exact { 1.0 } else { r }))
    }

    /// The cluster root of document `seq`: the root of its link, else itself.
    fn root(&mut self, seq: u64) -> Result<u64, ViewError> {
        let mut path = Vec::new();
        let mut at = seq;
        let root = loop {
            if let Some(&r) = self.roots.get(&at) {
                break r;
            }
            let near = self.store.near_dups(at)?;
            path.push(at);
            let views = near.iter().filter(|d| d.says(Mode::Default)).map(|d| (d.seq, d.exact, round4(d.resemblance)));
            // Each link goes to an earlier-published document: no cycle, unless the
            // store is corrupt.
            let next = match self.link(views) {
                Some((earlier, _)) => Some(earlier),
                None => {
                    let r = self.store.labelled_result(at)?;
                    r.and_then(|r| {
                        self.old_origin(at, r.old_tokens, r.counted_tokens(), [r.dominant_origin, r.most_copied_origin])
                    })
                }
            };
            match next {
                Some(earlier) if !path.contains(&earlier) => at = earlier,
                _ => break at,
            }
        };
        for p in path {
            self.remember(p, root);
        }
        Ok(root)
    }

    /// Where document `seq`'s old text came from when the old-fraction rule drops it:
    /// its dominant origin, or its most-copied origin when it dominates itself (half
    /// of it new).
    fn old_origin(&self, seq: u64, old_tokens: u32, tokens: u32, origins: [Option<u64>; 2]) -> Option<u64> {
        let dropped = self.old_enough(old_tokens, tokens);
        origins.into_iter().flatten().find(|&o| o != seq).filter(|_| dropped)
    }

    /// Whether the old-fraction rule drops a document with these counts.
    fn old_enough(&self, old_tokens: u32, tokens: u32) -> bool {
        tokens > 0 && round4(fraction(old_tokens, tokens)) >= self.thresholds.old
    }

    fn remember(&mut self, seq: u64, root: u64) {
        if self.roots.len() >= ROOTS_HELD {
            self.roots.clear();
        }
        self.roots.insert(seq, root);
    }

    /// The decision for a stored document's view (documents in sequence order keep the
    /// memo warm; any order gives the same answers).
    pub fn decide(&mut self, v: &DocumentView) -> Result<Decision, ViewError> {
        let id = v.id.unwrap_or(0);
        let near = v.near_duplicates.as_deref().unwrap_or_default();
        let old_fraction = round4(fraction(v.old_tokens, v.old_tokens + v.fresh_tokens));
        let link = self.link(near.iter().map(|d| (d.id, d.exact, d.resemblance)));
        let origins = [&v.dominant_origin, &v.most_copied_origin].map(|o| o.as_ref().and_then(|o| o.id));
        let dominant = self.old_origin(id, v.old_tokens, v.old_tokens + v.fresh_tokens, origins);
        let cluster = match (link, dominant) {
            (Some((earlier, _)), _) | (None, Some(earlier)) => self.root(earlier)?,
            (None, None) => id,
        };
        self.remember(id, cluster);
        let exact = exact_copy_of(near);
        let input = |seq: u64| stored_input_id(self.store, seq);
        let (rule, of, resemblance, reason) = if let Some(x) = exact {
            let x = input(x)?;
            let why = format!("exact duplicate of {}", id_text(&x));
            (Some(Reason::ExactDuplicate), Some(x), Some(1.0), Some(why))
        } else if let Some((x, r)) = link {
            let x = input(x)?;
            let why = format!("near-duplicate of {} at resemblance {r:.4}", id_text(&x));
            (Some(Reason::NearDuplicate), Some(x), Some(r), Some(why))
        } else if self.old_enough(v.old_tokens, v.old_tokens + v.fresh_tokens) {
            let why = format!("old fraction {old_fraction:.4} >= {:.4}", self.thresholds.old);
            (Some(Reason::OldFraction), dominant.map(input).transpose()?, None, Some(why))
        } else {
            (None, None, None, None)
        };
        Ok(Decision {
            id: input_id(v),
            seq: id,
            decision: if rule.is_some() { "drop" } else { "keep" },
            rule,
            reason,
            of,
            resemblance,
            old_fraction,
            cluster: if cluster == id { input_id(v) } else { input(cluster)? },
            cluster_seq: cluster,
        })
    }
}

/// The copied blocks of a document as `[start, end, origin id]` in Unicode characters
/// of its stored text: the offsets Dolma's mixer counts (it walks the text's `chars`).
pub fn copied_spans(v: &DocumentView, text: &str) -> Vec<[u64; 3]> {
    let mut blocks: Vec<(usize, usize, u64)> = v
        .copied_blocks
        .iter()
        .map(|b| (b.start_byte as usize, b.end_byte as usize, b.origin.id.unwrap_or(0)))
        .filter(|&(s, e, _)| s < e && e <= text.len())
        .collect();
    blocks.sort_unstable();
    // Byte offsets to character offsets in one pass over the text.
    let mut cuts: Vec<usize> = blocks.iter().flat_map(|&(s, e, _)| [s, e]).collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut chars_at = HashMap::with_capacity(cuts.len());
    let (mut chars, mut from) = (0u64, 0usize);
    for c in cuts {
        chars += text.get(from..c).map_or(0, |t| t.chars().count() as u64);
        chars_at.insert(c, chars);
        from = c;
    }
    blocks.iter().map(|&(s, e, o)| [chars_at[&s], chars_at[&e], o]).collect()
}

/// Names of the document-level attributes of [`attributes_line`].
pub const DOCUMENT_ATTRIBUTES: [&str; 3] = ["textorigin_drop", "textorigin_old_fraction", "textorigin_cluster"];

/// A Dolma attributes line: `{"id": name, "attributes": {attribute: spans, ...}}`: the
/// copied spans under `attribute`, and the document-level attributes a mixer filters
/// on, each one span over the whole text as Dolma writes document-level
/// attributes: `textorigin_drop` (1 when `decision` drops the document, else 0),
/// `textorigin_old_fraction` and `textorigin_cluster` (the cluster's id).
pub fn attributes_line(v: &DocumentView, text: &str, attribute: &str, decision: &Decision) -> Value {
    let mut attributes = Map::new();
    attributes.insert(attribute.to_string(), serde_json::to_value(copied_spans(v, text)).unwrap_or_default());
    let chars = text.chars().count();
    let drop = if decision.decision == "drop" { 1.0 } else { 0.0 };
    let scores = [drop, decision.old_fraction, decision.cluster_seq as f64];
    for (name, score) in DOCUMENT_ATTRIBUTES.iter().zip(scores) {
        attributes.insert(name.to_string(), serde_json::json!([[0, chars, score]]));
    }
    serde_json::json!({"id": input_id(v), "attributes": attributes})
}

/// The attributes line of an input document that failed to be stored (a
/// line for every input document, so that attributes stay in lockstep with the
/// documents file): its id as the input had it (null when it was never read), no
/// copied spans, and `textorigin_failed`, one empty span whose value is the reason.
pub fn failed_attributes_line(id: Option<&str>, reason: &str, attribute: &str) -> Value {
    let id = id.and_then(|id| serde_json::from_str::<Value>(id).ok()).unwrap_or(Value::Null);
    serde_json::json!({"id": id, "attributes": {attribute: [], "textorigin_failed": [[0, 0, reason]]}})
}

/// A document's input id as the input had it: a number when it was one (an integer
/// beyond 64 bits, which JSON readers take apart, stays text), else its name.
pub fn input_id(v: &DocumentView) -> Value {
    input_id_of(&v.name, v.id_number)
}

/// The input id of a document named `name` ([`input_id`]).
fn input_id_of(name: &str, id_number: bool) -> Value {
    let number = id_number.then(|| {
        let n = name;
        n.parse::<u64>().map(Into::into).or_else(|_| n.parse::<i64>().map(Into::into)).ok().or_else(|| {
            let small = !n.trim_start_matches('-').chars().all(|c| c.is_ascii_digit());
            n.parse::<f64>().ok().filter(|_| small).and_then(serde_json::Number::from_f64)
        })
    });
    number.flatten().map_or_else(|| Value::String(name.to_string()), Value::Number)
}

/// A document as a corpus line again: `id` (its name), `text` (without its copied
/// blocks when `remove_copied`), `url`, `published_at` (or `date`, the input's name for
/// it) and its metadata's fields.
pub fn corpus_line(v: &DocumentView, text: &str, remove_copied: bool) -> Value {
    let mut out = Map::new();
    if let Some(Value::Object(meta)) = &v.meta {
        out.extend(meta.clone());
    }
    let text = if remove_copied {
        let mut kept = String::with_capacity(text.len());
        let mut at = 0;
        let mut blocks: Vec<(usize, usize)> =
            v.copied_blocks.iter().map(|b| (b.start_byte as usize, b.end_byte as usize)).collect();
        blocks.sort_unstable();
        for (s, e) in blocks {
            if s > at {
                kept += text.get(at..s).unwrap_or_default();
            }
            at = at.max(e);
        }
        kept += text.get(at.min(text.len())..).unwrap_or_default();
        kept
    } else {
        text.to_string()
    };
    out.insert("id".into(), input_id(v));
    out.insert("text".into(), Value::String(text));
    let date = if v.date_field { "date" } else { "published_at" };
    for (k, x) in [("url", &v.url), (date, &v.published_at)] {
        if let Some(x) = x {
            out.insert(k.into(), Value::String(x.clone()));
        }
    }
    Value::Object(out)
}
