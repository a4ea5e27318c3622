//! The engine: one document through selection, hashing, estimation and scoring.
//!
//! Ties Sections 2.1-2.3 of the origin-detection paper together and derives the
//! per-document results of Section 3.2: the origin of every selected shingle, copied
//! blocks, fresh/old tokens, novel segments, the most-copied and the dominant origin.
//!
//! Definitions used (the paper's, made exact):
//! - Documents are identified by their sequence number (1, 2, ...), which is also the
//!   origin stored in the table.
//! - A **copied block** is a maximal run of consecutive selected shingles with the same
//!   origin other than the document itself; it spans from the first token of its first
//!   shingle to the last token of its last one.
//! - A token is **old** when a selected shingle covering it has an origin other than the
//!   document itself, else **fresh**. Novel segments are the maximal runs of fresh
//!   tokens.
//! - Origin counts are over selected shingles, the document's own ones included. The
//!   **dominant origin** is the origin with the most shingles when it has at least 10%
//!   more than any other (`10·top ≥ 11·second`); it is the document itself when its
//!   own new shingles dominate; none when no origin has that margin or nothing was
//!   selected. The **most-copied origin** is the other document with the most shingles
//!   (ties: the earlier one).
//! - Lucky scoring (Section 2.2, rules a-e) runs after estimation, once per table entry
//!   the document touched and still holds: +1 for an entry that existed before the
//!   document (entries it inserted start at 1); +⌊√(b−2)⌋ for the first and last
//!   shingle of each copied block of b shingles; +3 for the document's first and last
//!   selected shingle; +1 for every y-th selected shingle (the y-th, 2y-th, ...).
//!   Repeats within a document add their bonuses to the one entry.
//! - Documents with fewer than k tokens have no shingles: all their tokens are fresh.
//!
//! Apply is a pure function of (table, document, sequence number, configuration): no
//! clock, no unseeded randomness, no iteration over hash maps.

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::estimate::{estimate, How};
use crate::rabin::Rabin;
use crate::select::{select, shingle_count, Item, Scratch};
use crate::table::{top_byte, BucketMemory, Eviction, Hit, Position, Table};
use crate::text::{tokenize, Token};

/// How far ahead the hashing loop prefetches buckets.
const PREFETCH_AHEAD: usize = 8;

/// A selected shingle and its estimated origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShingleOrigin {
    pub start_token: u32,
    pub end_token: u32,
    pub origin: u64,
    pub how: How,
}

/// A span of tokens, with its byte span in the stored text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    pub start_token: u32,
    /// Exclusive.
    pub end_token: u32,
    pub start_byte: u32,
    /// Exclusive.
    pub end_byte: u32,
}

/// A copied block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Block {
    pub span: Span,
    pub origin: u64,
    /// Selected shingles in the block.
    pub shingles: u32,
}

/// Everything the engine says about one document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct DocResult {
    pub seq: u64,
    pub tokens: u32,
    pub shingles: u32,
    pub selected: u32,
    pub hits: u32,
    pub fresh_tokens: u32,
    pub old_tokens: u32,
    pub dominant_origin: Option<u64>,
    pub most_copied_origin: Option<u64>,
    /// (origin, selected shingles), most first; the document itself included.
    pub origin_counts: Vec<(u64, u32)>,
    pub copied_blocks: Vec<Block>,
    pub novel_segments: Vec<Span>,
    pub selected_origins: Vec<ShingleOrigin>,
}

/// What the table answered for a document's selected shingles (phase 1 of apply).
#[derive(Debug, Clone, Default)]
pub struct Probe {
    /// What each selected shingle found (None: it was inserted).
    pub hits: Vec<Option<Hit>>,
    /// Where each selected shingle's entry is now.
    pub positions: Vec<Position>,
}

/// Engine state: configuration, fingerprint tables, reusable buffers.
#[derive(Clone)]
pub struct Engine {
    cfg: Config,
    rabin: Rabin,
    tokens: Vec<Token>,
    items: Vec<Item>,
    scratch: Scratch,
}

impl Engine {
    /// An engine for `cfg` (validated by the caller).
    pub fn new(cfg: Config) -> Engine {
        let rabin = Rabin::new(cfg.k as usize);
        Engine { cfg, rabin, tokens: Vec::new(), items: Vec::new(), scratch: Scratch::default() }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Tokenizes and selects; returns (tokens, selected items) of `text`.
    pub fn prepare(&mut self, text: &str) -> (&[Token], &[Item]) {
        tokenize(text, &self.rabin, &mut self.tokens);
        select(self.cfg.selection, &self.tokens, &self.rabin, &mut self.scratch, &mut self.items);
        (&self.tokens, &self.items)
    }

    /// Takes tokens and selected items prepared elsewhere (by another engine with the
    /// same configuration, on another thread) as the current document.
    pub fn load_prepared(&mut self, tokens: Vec<Token>, items: Vec<Item>) {
        self.tokens = tokens;
        self.items = items;
    }

    /// Applies document `seq` to the table (lookups, insertions, scores, counters) and
    /// returns its results. `seq` must exceed every origin already in the table.
    pub fn apply<M: BucketMemory>(&mut self, table: &mut Table<M>, seq: u64, text: &str) -> DocResult {
        self.prepare(text);
        self.apply_prepared(table, seq)
    }

    /// [`Engine::apply`] for the document last given to [`Engine::prepare`]: the three
    /// phases [`Engine::probe`], [`Engine::estimate`] and [`Engine::score`] in turn.
    pub fn apply_prepared<M: BucketMemory>(&mut self, table: &mut Table<M>, seq: u64) -> DocResult {
        let probe = self.probe(table, seq);
        let result = self.estimate(seq, &probe);
        self.score(table, seq, &probe, &result);
        result
    }

    /// Phase 1 (Section 2.2): every selected fingerprint of the prepared document looked
    /// up in its bucket and inserted when absent, in order, with prefetching.
    pub fn probe<M: BucketMemory>(&self, table: &mut Table<M>, seq: u64) -> Probe {
        let items = &self.items;
        let n = items.len();
        let mut hits = Vec::with_capacity(n);
        let mut positions = Vec::with_capacity(n);
        for item in items.iter().take(PREFETCH_AHEAD) {
            table.prefetch(item.fp);
        }
        for (i, item) in items.iter().enumerate() {
            if i + PREFETCH_AHEAD < n {
                table.prefetch(items[i + PREFETCH_AHEAD].fp);
            }
            let new = Hit {
                origin: seq,
                offset: i as u8,
                prev: if i > 0 { top_byte(items[i - 1].fp) } else { 0 },
                next: if i + 1 < n { top_byte(items[i + 1].fp) } else { 0 },
            };
            let (hit, pos) = table.process(item.fp, new, seq << 24 ^ i as u64);
            hits.push(hit);
            positions.push(pos);
        }
        Probe { hits, positions }
    }

    /// Phase 2 (Section 2.3): estimation and the document's result from the probe.
    pub fn estimate(&self, seq: u64, probe: &Probe) -> DocResult {
        self.finish(seq, &probe.hits)
    }

    /// Phase 3: Lucky scoring (rules a-e) and the table's per-document counters.
    pub fn score<M: BucketMemory>(&self, table: &mut Table<M>, seq: u64, probe: &Probe, result: &DocResult) {
        if table.eviction() == Eviction::Lucky {
            lucky_scores(table, &self.cfg, seq, &self.items, &probe.hits, &probe.positions, result);
        }
        let stats = table.stats_mut();
        stats.documents += 1;
        stats.last_seq = seq;
        stats.shingles += u64::from(result.shingles);
    }

    /// Analyses `text` as document `seq` against the table without changing anything.
    pub fn query<M: BucketMemory>(&mut self, table: &Table<M>, seq: u64, text: &str) -> DocResult {
        self.prepare(text);
        self.query_prepared(table, seq)
    }

    /// [`Engine::query`] for the document last prepared or loaded.
    pub fn query_prepared<M: BucketMemory>(&self, table: &Table<M>, seq: u64) -> DocResult {
        let hits: Vec<Option<Hit>> = self.items.iter().map(|it| table.lookup(it.fp).map(|(_, h)| h)).collect();
        self.finish(seq, &hits)
    }

    /// Estimation and result building, given the hits of the prepared document.
    fn finish(&self, seq: u64, hits: &[Option<Hit>]) -> DocResult {
        let tops: Vec<u8> = self.items.iter().map(|it| top_byte(it.fp)).collect();
        let origins = estimate(self.cfg.estimation, self.cfg.bridge_limit as usize, seq, &tops, hits);
        build_result(seq, &self.tokens, &self.items, hits, &origins, self.cfg.k as usize)
    }
}

/// Derives blocks, labels and origins from the estimated origins.
pub fn build_result(
    seq: u64,
    tokens: &[Token],
    items: &[Item],
    hits: &[Option<Hit>],
    origins: &[(u64, How)],
    k: usize,
) -> DocResult {
    let span = |start: u32, end: u32| Span {
        start_token: start,
        end_token: end,
        start_byte: tokens[start as usize].start,
        end_byte: tokens[end as usize - 1].end,
    };
    let blocks = copied_blocks(seq, items, origins, span);
    let (old, novel) = old_tokens_and_novel_segments(seq, tokens.len(), items, origins, span);
    let counts = origin_counts(origins);
    let dominant_origin = counts.first().and_then(|&(o, top)| {
        let second = counts.get(1).map_or(0, |x| x.1);
        (10 * u64::from(top) >= 11 * u64::from(second)).then_some(o)
    });
    let most_copied_origin = counts.iter().find(|x| x.0 != seq).map(|x| x.0);
    DocResult {
        seq,
        tokens: tokens.len() as u32,
        shingles: shingle_count(tokens.len(), k) as u32,
        selected: items.len() as u32,
        hits: hits.iter().filter(|h| h.is_some()).count() as u32,
        fresh_tokens: tokens.len() as u32 - old,
        old_tokens: old,
        dominant_origin,
        most_copied_origin,
        origin_counts: counts,
        copied_blocks: blocks,
        novel_segments: novel,
        selected_origins: items
            .iter()
            .zip(origins)
            .map(|(it, &(origin, how))| ShingleOrigin { start_token: it.start, end_token: it.end, origin, how })
            .collect(),
    }
}

/// Maximal runs of selected shingles with the same origin other than `seq`.
fn copied_blocks(seq: u64, items: &[Item], origins: &[(u64, How)], span: impl Fn(u32, u32) -> Span) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < items.len() {
        let o = origins[i].0;
        let mut j = i + 1;
        while j < items.len() && origins[j].0 == o {
            j += 1;
        }
        if o != seq {
            blocks.push(Block { span: span(items[i].start, items[j - 1].end), origin: o, shingles: (j - i) as u32 });
        }
        i = j;
    }
    blocks
}

/// The number of old tokens (covered by a shingle from another document) and the
/// maximal runs of fresh ones.
fn old_tokens_and_novel_segments(
    seq: u64,
    n_tokens: usize,
    items: &[Item],
    origins: &[(u64, How)],
    span: impl Fn(u32, u32) -> Span,
) -> (u32, Vec<Span>) {
    let mut delta = vec![0i32; n_tokens + 1];
    for (it, &(o, _)) in items.iter().zip(origins) {
        if o != seq {
            delta[it.start as usize] += 1;
            delta[it.end as usize] -= 1;
        }
    }
    let mut novel = Vec::new();
    let mut depth = 0;
    let mut run_start: Option<u32> = None;
    let mut old = 0u32;
    for (t, d) in delta.iter().take(n_tokens).enumerate() {
        depth += d;
        if depth > 0 {
            old += 1;
            if let Some(s) = run_start.take() {
                novel.push(span(s, t as u32));
            }
        } else if run_start.is_none() {
            run_start = Some(t as u32);
        }
    }
    if let Some(s) = run_start {
        novel.push(span(s, n_tokens as u32));
    }
    (old, novel)
}

/// (origin, selected shingles), most first (ties: the earlier origin).
fn origin_counts(origins: &[(u64, How)]) -> Vec<(u64, u32)> {
    let mut sorted: Vec<u64> = origins.iter().map(|x| x.0).collect();
    sorted.sort_unstable();
    let mut counts: Vec<(u64, u32)> = Vec::new();
    for o in sorted {
        match counts.last_mut() {
            Some((last, c)) if *last == o => *c += 1,
            _ => counts.push((o, 1)),
        }
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    counts
}

/// Lucky rules (a)-(d) for one document, then (e) through [`Table::add_scores`].
fn lucky_scores<M: BucketMemory>(
    table: &mut Table<M>,
    cfg: &Config,
    seq: u64,
    items: &[Item],
    hits: &[Option<Hit>],
    positions: &[Position],
    result: &DocResult,
) {
    let n = items.len();
    if n == 0 {
        return;
    }
    let mut bonus = vec![0u32; n];
    let mut at = 0usize;
    for b in &result.copied_blocks {
        // Blocks are in item order; find the block's first item.
        while items[at].start != b.span.start_token {
            at += 1;
        }
        let size = b.shingles as usize;
        let add = if size >= 2 { ((size - 2) as f64).sqrt().floor() as u32 } else { 0 };
        bonus[at] += add;
        bonus[at + size - 1] += add;
        at += size;
    }
    bonus[0] += 3;
    bonus[n - 1] += 3;
    let y = cfg.lucky_y as usize;
    for (i, b) in bonus.iter_mut().enumerate() {
        if (i + 1) % y == 0 {
            *b += 1;
        }
    }
    // (position, base, bonus), merged per entry.
    let mut per_entry: Vec<(Position, u32, u32, u64)> = (0..n)
        .map(|i| {
            let base = u32::from(hits[i].is_some_and(|h| h.origin != seq));
            (positions[i], base, bonus[i], items[i].fp)
        })
        .collect();
    per_entry.sort_by_key(|e| e.0);
    let mut updates: Vec<(Position, u32)> = Vec::with_capacity(n);
    for (pos, base, add, fp) in per_entry {
        if !table.holds(pos, fp) {
            continue; // evicted later in the same document
        }
        match updates.last_mut() {
            Some((p, total)) if *p == pos => *total += add, // base counts once
            _ => updates.push((pos, base + add)),
        }
    }
    table.add_scores(&updates);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::Reference;
    use proptest::prelude::*;

    fn table(cfg: &Config) -> Table<Vec<u8>> {
        Table::in_memory(&cfg.table_params()).unwrap()
    }

    fn exact_config() -> Config {
        Config {
            selection: crate::select::Selection::All,
            estimation: crate::estimate::Estimation::Nb,
            table_bytes: 64 << 20,
            ..Config::default()
        }
    }

    /// Generated corpus: documents that copy runs of words from earlier ones.
    fn corpus(seed: u64, docs: usize) -> Vec<String> {
        let mut x = seed | 1;
        let mut next = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let mut out: Vec<Vec<String>> = Vec::new();
        for _ in 0..docs {
            let mut words = Vec::new();
            let parts = 1 + next(4);
            for _ in 0..parts {
                if !out.is_empty() && next(2) == 0 {
                    let src = &out[next(out.len() as u64) as usize];
                    let a = next(src.len() as u64) as usize;
                    let len = (5 + next(30) as usize).min(src.len() - a);
                    words.extend_from_slice(&src[a..a + len]);
                } else {
                    for _ in 0..(3 + next(40)) {
                        words.push(format!("w{}", next(500)));
                    }
                }
            }
            out.push(words);
        }
        out.into_iter().map(|w| w.join(" ")).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn all_nb_large_table_equals_brute_force(seed in any::<u64>(), docs in 1usize..25) {
            let cfg = exact_config();
            let mut t = table(&cfg);
            let mut e = Engine::new(cfg.clone());
            let mut reference = Reference::new(cfg.k as usize);
            for (i, text) in corpus(seed, docs).iter().enumerate() {
                let seq = i as u64 + 1;
                let got = e.apply(&mut t, seq, text);
                let want = reference.apply(seq, text);
                let got_origins: Vec<u64> = got.selected_origins.iter().map(|s| s.origin).collect();
                prop_assert_eq!(&got_origins, &want.origins, "doc {}", seq);
                prop_assert_eq!(got.fresh_tokens, want.fresh_tokens);
                prop_assert_eq!(got.dominant_origin, want.dominant_origin);
            }
            prop_assert_eq!(t.stats().evictions, 0);
        }
    }

    #[test]
    fn apply_is_deterministic_across_tables() {
        let texts = corpus(42, 60);
        let mut digests = Vec::new();
        for _ in 0..2 {
            let cfg = Config { table_bytes: 4096 + 16 * 64 * 4, ..Config::default() }; // tiny: evictions
            let mut t = table(&cfg);
            let mut e = Engine::new(cfg);
            let results: Vec<DocResult> =
                texts.iter().enumerate().map(|(i, s)| e.apply(&mut t, i as u64 + 1, s)).collect();
            assert!(t.stats().evictions > 0);
            digests.push((t.digest(), results, t.stats(), t.memory().clone()));
        }
        assert!(digests[0] == digests[1]);
    }

    #[test]
    fn query_changes_nothing() {
        let cfg = Config { table_bytes: 1 << 20, ..Config::default() };
        let mut t = table(&cfg);
        let mut e = Engine::new(cfg);
        let texts = corpus(5, 10);
        for (i, s) in texts.iter().enumerate() {
            e.apply(&mut t, i as u64 + 1, s);
        }
        let before = (t.digest(), t.stats());
        let q = e.query(&t, 11, &texts[3]);
        assert_eq!((t.digest(), t.stats()), before);
        assert_eq!(q.dominant_origin, Some(4), "a copy of doc 4 is dominated by it");
    }

    #[test]
    fn blocks_and_labels() {
        let mut t = table(&exact_config());
        let mut e = Engine::new(exact_config());
        let a = "one two three four five six seven eight nine ten eleven twelve";
        e.apply(&mut t, 1, a);
        let b = "fresh words here then one two three four five six seven eight nine and more";
        let r = e.apply(&mut t, 2, b);
        assert_eq!(r.copied_blocks.len(), 1);
        let blk = r.copied_blocks[0];
        assert_eq!(blk.origin, 1);
        assert_eq!(&b[blk.span.start_byte as usize..blk.span.end_byte as usize], "one two three four five six seven eight nine");
        assert_eq!(r.old_tokens, 9);
        assert_eq!(r.fresh_tokens, 6);
        let novel: Vec<&str> = r.novel_segments.iter().map(|s| &b[s.start_byte as usize..s.end_byte as usize]).collect();
        assert_eq!(novel, ["fresh words here then", "and more"]);
        assert_eq!(r.most_copied_origin, Some(1));
    }
}
