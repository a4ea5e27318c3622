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
//! - Every token has an origin: the earliest (smallest) origin among the copied
//!   shingles covering it ([`crate::align`] replaces these by aligned runs), else the
//!   document itself. The **most-copied origin** is the other document with the most
//!   tokens (ties: the earlier one).
//! - Origin counts are over selected shingles, the document's own ones included: a
//!   sample of the oracle's counts over all shingles. The **dominant origin** is their
//!   argmax (the paper's task: the document "where most of the content originated"); a
//!   tie for the top gives the document itself; none for a document without tokens.
//!   The paper's **10% rule** ([`DocResult::dominant_by_rule`], reported beside it):
//!   the origin with the most shingles when it has at least 10% more than any other
//!   (`10·top ≥ 11·second`), else none; the argmax agrees with it wherever it gives
//!   an answer.
//! - **Origin propagation** (an option, on by default; not in the paper): after
//!   estimation, every entry the document inserted for a shingle that estimation
//!   labelled copied is rewritten to carry the estimated origin and offset (the
//!   document's own neighbour bytes stay, as they are the copy's), so that later copies
//!   find the earliest source and Lucky's bonuses protect right entries.
//! - Lucky scoring (Section 2.2, rules a-e) runs after estimation, once per table entry
//!   the document touched and still holds: +1 for an entry that existed before the
//!   document (entries it inserted start at 1); +⌊√(b−2)⌋ for the first and last
//!   shingle of each copied block of b shingles; +3 for the document's first and last
//!   selected shingle; +1 for every y-th selected shingle (the y-th, 2y-th, ...).
//!   Repeats within a document add their bonuses to the one entry.
//! - Documents with fewer than k tokens have no shingles: all their tokens are fresh.
//! - **Selection density** ([`crate::select`]): with an adaptive density a
//!   prepared document holds the policy's shingles and every other one with its rank;
//!   before the table phases it keeps those the table's threshold selects
//!   ([`Prepared::at_density`], done by [`Engine::apply`] and the like), and its result
//!   records that threshold ([`DocResult::density`]) so that it can be analysed again
//!   alike. The "selected shingles" above are these, with one rule the table's guests
//!   need ([`crate::table`], "Extra entries are guests"): the policy's shingles are
//!   estimated alone, as in the paper, and that estimate alone feeds phase 3 (origin
//!   propagation and Lucky's bonuses of their entries); an extra shingle then adds what
//!   it found, and one not found between two policy shingles of one copied origin
//!   takes that origin.
//! - **Dominant origin by blocks** (the default `dominant = blocks`): after
//!   alignment the stored dominant origin is [`DocResult::dominant_by_blocks`]; with
//!   `dominant = table` it stays the argmax of the table's answers.
//!
//! Apply is a pure function of (table, document, sequence number, configuration): no
//! clock, no unseeded randomness, no iteration over hash maps.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::align::{align_with_copiers, Alignment, OriginText};
use crate::config::{Config, Density, Dominant};
use crate::estimate::{estimate_with_offsets, How};
use crate::rabin::Rabin;
use crate::select::{select, shingle_count, with_extras, Item, Scratch, FLOOR, SELECTED};
pub use crate::spans::{by_arrival, Block, ShingleOrigin, Span, When};
use crate::table::{top_byte, BucketMemory, Eviction, Hit, Position, Table, GUEST};
use crate::text::{tokenize, Token};

/// How far ahead the hashing loop prefetches buckets.
const PREFETCH_AHEAD: usize = 8;

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
    /// The density threshold the document was selected at (
    /// [`crate::select::kept`]); `None`: the policy's selection alone. Not in the
    /// serde form: the store keeps it behind the result's value, and a sharded
    /// deployment selects as the paper does.
    #[serde(skip)]
    pub density: Option<u8>,
    /// What [`crate::config::Attribution::Passage`] says beside the copied blocks:
    /// earlier documents holding parts of them, their edited tokens. Not in
    /// the serde form, as `density`: the store keeps it behind the result's value.
    #[serde(skip)]
    pub passages: crate::align::Passages,
    /// Tokens in site template lines ([`template::label`]; 0 in a stored result):
    /// neither old nor fresh.
    #[serde(skip)]
    pub template_tokens: u32,
    /// The template lines a reader sees ([`template::label`]; none in a stored result).
    #[serde(skip)]
    pub templates: Vec<template::Templated>,
}

impl DocResult {
    /// The tokens counted old or fresh: all but the template ones (what old% is of).
    pub fn counted_tokens(&self) -> u32 {
        self.tokens - self.template_tokens
    }

    /// The paper's dominant origin (Section 3.2): the origin with the most selected
    /// shingles when it has at least 10% more than any other, else none.
    pub fn dominant_by_rule(&self) -> Option<u64> {
        let (o, top) = *self.origin_counts.first()?;
        let second = self.origin_counts.get(1).map_or(0, |x| x.1);
        (10 * u64::from(top) >= 11 * u64::from(second)).then_some(o)
    }

    /// The dominant origin by the table's answers: the argmax of
    /// [`DocResult::origin_counts`] (what [`DocResult::dominant_origin`] holds with
    /// `dominant = table`).
    pub fn dominant_by_table(&self) -> Option<u64> {
        dominant_of(&self.origin_counts, self.seq, self.tokens as usize)
    }

    /// The dominant origin by the copied blocks: the argmax of the selected
    /// shingles' counts, as [`DocResult::dominant_origin`], with each selected shingle
    /// inside a copied block (its tokens all in one block, a run of the origin's text)
    /// counted for the block's origin instead of the table's answer (a tie: the
    /// document itself; none without tokens). After alignment the blocks name the
    /// earliest source the stored results know, whatever the table still holds; a
    /// shingle across two blocks' seam keeps the table's origin (the document holding
    /// both runs together).
    pub fn dominant_by_blocks(&self) -> Option<u64> {
        let mut b = 0;
        let origins = self.selected_origins.iter().map(|s| {
            // Blocks are in token order and do not overlap: the first one not ending
            // before the shingle is the only one that can hold it.
            while b < self.copied_blocks.len() && self.copied_blocks[b].span.end_token < s.end_token {
                b += 1;
            }
            match self.copied_blocks.get(b) {
                Some(blk) if blk.span.start_token <= s.start_token => blk.origin,
                _ => s.origin,
            }
        });
        dominant_of(&origin_counts(origins, &by_arrival), self.seq, self.tokens as usize)
    }

    /// The copied blocks as a reader wants them: adjacent blocks of one origin (two
    /// runs of the same origin's text that meet, as alignment leaves them: each stored
    /// block is one run) joined into one, their shingles added up. The stored result
    /// keeps the runs, so that results replay exactly.
    ///
    /// A block can still be shorter than k tokens: where a later origin's run goes a
    /// few tokens past the end (or starts a few before the start) of the earliest
    /// origin's run, those tokens are copied from the later origin alone.
    pub fn joined_blocks(&self) -> Vec<Block> {
        let mut out: Vec<Block> = Vec::with_capacity(self.copied_blocks.len());
        for b in &self.copied_blocks {
            match out.last_mut() {
                Some(last) if last.origin == b.origin && last.span.end_token == b.span.start_token => {
                    last.span.end_token = b.span.end_token;
                    last.span.end_byte = b.span.end_byte;
                    last.shingles += b.shingles;
                }
                _ => out.push(*b),
            }
        }
        out
    }
}

/// Phase 2's answer: the result, and the offsets estimation placed each selected
/// shingle at (for origin propagation in phase 3).
#[derive(Debug, Clone)]
pub struct Estimate {
    pub result: DocResult,
    offsets: Vec<u8>,
}

/// What a table answered for the selected shingles of a document it holds (phase 1 of
/// apply): all of them on one node, those of its bucket range on a shard
/// ([`crate::shard`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Probe {
    /// Indexes of the probed selected shingles among the document's, ascending.
    pub items: Vec<u32>,
    /// Their fingerprints.
    pub fps: Vec<u64>,
    /// What each found (None: it was inserted).
    pub hits: Vec<Option<Hit>>,
    /// Where each one's entry is now.
    pub positions: Vec<Position>,
    /// The origins whose entries the document took over, published after it (issue
    /// 25): ascending, each once. Empty without dates.
    pub taken: Vec<u64>,
    /// Which of them are extra shingles ([`crate::select::with_extras`]), whose entries
    /// are guests ([`crate::table`]); empty where none is.
    pub extra: Vec<bool>,
}

/// A selected shingle as phase 1 needs it, without the document: its index among the
/// document's selected shingles, its fingerprint and its neighbours' top bytes (what
/// a shard worker that does not prepare documents receives, [`crate::shard::split`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardItem {
    pub index: u32,
    pub fp: u64,
    pub prev: u8,
    pub next: u8,
    /// The shingle's rank ([`Item::rank`]); not sent: a worker gets the ranks beside
    /// (`crate::shard::part_at_density`).
    #[serde(skip, default = "selected_rank")]
    pub rank: u8,
    /// Its place among the document's shingles as its entry keeps it (its offset) and
    /// Random eviction's salt, where that is not `index`: a policy shingle's among the
    /// policy's (`prev` and `next` are then those neighbours'), so that the entry is the
    /// paper's table's ([`crate::table`], "Extra entries are guests"). Not sent, as
    /// `rank`.
    #[serde(skip)]
    pub place: Option<u32>,
}

fn selected_rank() -> u8 {
    SELECTED
}

impl ShardItem {
    /// Every selected shingle of `items`, in order: an extra shingle's offset and
    /// neighbours among all of them, a policy shingle's among the policy's (the same
    /// without extra shingles).
    pub fn all_of(items: &[Item]) -> Vec<ShardItem> {
        let (ranks, tops): (Vec<u8>, Vec<u8>) = items.iter().map(|it| (it.rank, top_byte(it.fp))).unzip();
        let kept: Vec<usize> = (0..items.len()).collect();
        places(&kept, (&ranks, &tops))
            .into_iter()
            .zip(items)
            .enumerate()
            .map(|(i, ((place, prev, next), it))| ShardItem {
                index: i as u32,
                fp: it.fp,
                prev,
                next,
                rank: it.rank,
                place,
            })
            .collect()
    }
}

/// Phase 3's input, the same for every shard: what estimation decided about document
/// `seq`, per selected shingle, for origin propagation and Lucky's bonuses.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Feedback {
    pub seq: u64,
    /// k-shingles of the document (the table's ssr counter).
    pub shingles: u32,
    /// Estimated origin and offset of every selected shingle (empty without propagation).
    pub origins: Vec<(u64, u8)>,
    /// Lucky rules (b)-(d) of every selected shingle (empty without Lucky eviction).
    pub bonus: Vec<u32>,
    /// The documents the document's take-overs revise, ascending, each with
    /// the fingerprints of its selected shingles, for a table that is elsewhere (a
    /// sharded deployment's workers look them up right after phase 3, before any later
    /// document: `docs/SCALE-OUT.md`, "Dates and revisions"). Empty on one node, which
    /// looks them up itself.
    pub revise: Vec<(u64, Vec<u64>)>,
    /// The asks for a raise of the density threshold the document's probes made in
    /// every shard's buckets ([`Table::asks_of_document`]), for a table that is elsewhere
    /// (a deployment's partition adds up its workers'); `None` on one node, whose table
    /// counted them itself.
    pub asks: Option<u64>,
}

/// Engine state: configuration, fingerprint tables, reusable buffers. It holds no
/// document: every phase takes the document it works on ([`Prepared`]).
#[derive(Clone)]
pub struct Engine {
    cfg: Config,
    rabin: Rabin,
    scratch: Scratch,
}

impl Engine {
    /// An engine for `cfg` (validated by the caller).
    pub fn new(cfg: Config) -> Engine {
        let rabin = Rabin::new(cfg.k as usize).with_terms(cfg.terms);
        Engine { cfg, rabin, scratch: Scratch::default() }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Its fingerprint tables (what its tokens are made with).
    pub fn rabin(&self) -> &Rabin {
        &self.rabin
    }

    /// Tokenizes and selects `text`: with an adaptive density, the extra shingles too,
    /// for [`Prepared::at_density`] to filter. With origins off no shingle is selected.
    pub fn prepare(&mut self, text: &str) -> Prepared {
        let mut tokens = Vec::new();
        let mut items = Vec::new();
        tokenize(text, &self.rabin, &mut tokens);
        if !self.cfg.origins {
            return Prepared::new(tokens, items, FLOOR, Vec::new());
        }
        select(self.cfg.selection, &tokens, &self.rabin, &mut self.scratch, &mut items);
        if self.cfg.density == Density::Adaptive {
            with_extras(self.cfg.selection, self.cfg.k as usize, &self.scratch, &mut items);
        }
        Prepared::new(tokens, items, self.unfiltered(), self.scratch.shingles().to_vec())
    }

    /// The threshold of a document just prepared: 0 (every extra shingle) with an
    /// adaptive density, else [`FLOOR`].
    fn unfiltered(&self) -> u8 {
        if self.cfg.density == Density::Adaptive {
            0
        } else {
            FLOOR
        }
    }

    /// Applies document `seq` to the table (lookups, insertions, scores, counters) and
    /// returns its results. `seq` must exceed every origin already in the table.
    pub fn apply<M: BucketMemory>(&mut self, table: &mut Table<M>, seq: u64, text: &str) -> DocResult {
        let mut doc = self.prepare(text);
        self.apply_prepared(table, &mut doc, seq, &by_arrival).0
    }

    /// [`Engine::apply`] of a prepared document, kept at the table's threshold, in
    /// publication order (`when`; [`by_arrival`]: arrival order): the three phases
    /// [`Engine::probe`], [`Engine::estimate`] and [`Engine::score`] in turn. A document
    /// that may be older than what the table holds takes over an entry whose origin
    /// `when` puts after it. Returns its result and the origins it took shingles from
    /// ([`Probe::taken`]), whose documents, and those that copied from them,
    /// [`Engine::reanalyse`] revises.
    pub fn apply_prepared<M: BucketMemory>(
        &self,
        table: &mut Table<M>,
        doc: &mut Prepared,
        seq: u64,
        when: When<'_>,
    ) -> (DocResult, Vec<u64>) {
        doc.at_density(table.density());
        let probe = self.probe(table, doc, seq, when);
        let estimate = self.estimate(doc, seq, &probe.hits, when);
        self.score(table, &probe, &self.feedback(doc, &estimate));
        (estimate.result, probe.taken)
    }

    /// Phase 1 (Section 2.2): every selected fingerprint of the document looked up in
    /// its bucket and inserted when absent, in order, with prefetching; an entry whose
    /// origin `when` puts after the document is taken over ([`probe_items_dated`]).
    pub fn probe<M: BucketMemory>(&self, table: &mut Table<M>, doc: &Prepared, seq: u64, when: When<'_>) -> Probe {
        let mine = doc.items_where(table.buckets(), |_| true);
        probe_items_dated(table, seq, &mine, |o| when(o) > when(seq))
    }

    /// [`Engine::probe`] for the selected shingles whose bucket `owns` accepts (a shard's
    /// range), each entry made exactly as on one node.
    pub fn probe_where<M: BucketMemory>(
        &self,
        table: &mut Table<M>,
        doc: &Prepared,
        seq: u64,
        owns: impl Fn(u64) -> bool,
    ) -> Probe {
        let mine = doc.items_where(table.buckets(), owns);
        probe_items(table, seq, &mine)
    }

    /// Phase 2 (Section 2.3): estimation and the document's result from what all its
    /// selected shingles found, in order, "earlier" by `when`.
    pub fn estimate(&self, doc: &Prepared, seq: u64, hits: &[Option<Hit>], when: When<'_>) -> Estimate {
        self.finish(doc, seq, hits, when)
    }

    /// What phase 3 needs of an estimate of the document.
    pub fn feedback(&self, doc: &Prepared, estimate: &Estimate) -> Feedback {
        let result = &estimate.result;
        let origins = if self.cfg.propagate {
            result.selected_origins.iter().zip(&estimate.offsets).map(|(s, &o)| (s.origin, o)).collect()
        } else {
            Vec::new()
        };
        let bonus = match self.cfg.eviction {
            Eviction::Lucky => policy_bonus(doc.items(), result, self.cfg.lucky_y),
            _ => Vec::new(),
        };
        Feedback { seq: result.seq, shingles: result.shingles, origins, bonus, revise: Vec::new(), asks: None }
    }

    /// Phase 3: origin propagation (when configured), Lucky scoring (rules a-e) and the
    /// table's per-document counters, for the entries `probe` made or found.
    pub fn score<M: BucketMemory>(&self, table: &mut Table<M>, probe: &Probe, fb: &Feedback) {
        if self.cfg.propagate {
            propagate(table, probe, fb);
        }
        if table.eviction() == Eviction::Lucky {
            lucky_scores(table, probe, fb);
        }
        let stats = table.stats_mut();
        stats.documents += 1;
        stats.last_seq = fb.seq;
        stats.shingles += u64::from(fb.shingles);
        table.end_document_asked(fb.asks.unwrap_or(table.asks_of_document()));
    }

    /// The result of stored document `seq`, prepared again, as the table now
    /// says: what it finds of origins published before it (by `when`);
    /// origins published after it count as not found, and so does the first occurrence
    /// of each of its own shingles (a repeat finds the first, as when it was applied).
    /// `density` is the threshold it was selected at ([`DocResult::density`]): the
    /// same shingles are looked up. Changes nothing in the table.
    pub fn reanalyse<M: BucketMemory>(
        &self,
        table: &Table<M>,
        doc: &mut Prepared,
        seq: u64,
        density: Option<u8>,
        when: When<'_>,
    ) -> DocResult {
        doc.at_density(density.unwrap_or(FLOOR));
        let found: Vec<Option<Hit>> = doc.items().iter().map(|it| table.lookup(it.fp).map(|(_, h)| h)).collect();
        self.reanalyse_found(doc, seq, &found, when)
    }

    /// [`Engine::reanalyse`] of a document kept at the threshold it was selected at,
    /// given what each of its selected shingles finds in the table now (`found`: plain
    /// lookups, in order; a sharded deployment's come from the shard workers).
    pub fn reanalyse_found(&self, doc: &Prepared, seq: u64, found: &[Option<Hit>], when: When<'_>) -> DocResult {
        debug_assert_eq!(found.len(), doc.items().len());
        // A repeat finds the first occurrence's entry, as when it was applied; a policy
        // shingle only a policy one's (the one an extra shingle inserted was an extra
        // entry, which a policy shingle makes anew: [`Table::process`]).
        let (mut seen, mut seen_by_policy) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
        let hits: Vec<Option<Hit>> = doc
            .items()
            .iter()
            .zip(found)
            .map(|(it, &h)| {
                let h = h?;
                if h.origin != seq {
                    return (when(h.origin) < when(seq)).then_some(h);
                }
                let repeat = match it.rank == SELECTED {
                    true => !seen_by_policy.insert(it.fp),
                    false => seen.contains(&it.fp),
                };
                seen.insert(it.fp);
                repeat.then_some(h)
            })
            .collect();
        self.finish(doc, seq, &hits, when).result
    }

    /// Analyses `text` as document `seq` against the table without changing anything.
    pub fn query<M: BucketMemory>(&mut self, table: &Table<M>, seq: u64, text: &str) -> DocResult {
        let mut doc = self.prepare(text);
        doc.at_density(table.density());
        self.query_prepared(table, &doc, seq)
    }

    /// [`Engine::query`] of a prepared document (kept at the table's threshold).
    pub fn query_prepared<M: BucketMemory>(&self, table: &Table<M>, doc: &Prepared, seq: u64) -> DocResult {
        let hits: Vec<Option<Hit>> = doc.items().iter().map(|it| table.lookup(it.fp).map(|(_, h)| h)).collect();
        self.finish(doc, seq, &hits, &by_arrival).result
    }

    /// The result of document `seq`, `doc` (kept at the table's threshold), whose tokens
    /// are those of the earlier document `of`: an exact copy, answered without the
    /// table. Every selected shingle is found with origin `of`, as a table holding each
    /// shingle `of` selected answers; [`Engine::align`] then credits its tokens as for
    /// any copy of `of` (`of` itself, or, by its stored blocks, its own earlier sources
    /// as the attribution says).
    pub fn exact_copy(&self, doc: &Prepared, seq: u64, of: u64, when: When<'_>) -> DocResult {
        let hits: Vec<Option<Hit>> =
            (0..doc.items().len()).map(|i| Some(Hit { origin: of, offset: i as u8, prev: 0, next: 0 })).collect();
        self.finish(doc, seq, &hits, when).result
    }

    /// Estimation and result building, given the hits of the document's selected
    /// shingles. With extra shingles, the policy's are estimated alone, as the paper's table
    /// keeps them (offsets and neighbours among the policy's shingles): what phase 3 is
    /// fed ([`Engine::feedback`]); [`with_extra_shingles`] adds the others.
    fn finish(&self, doc: &Prepared, seq: u64, hits: &[Option<Hit>], when: When<'_>) -> Estimate {
        if !self.cfg.origins {
            return Estimate { result: self.without_origins(doc, seq), offsets: Vec::new() };
        }
        let items = doc.items();
        let estimate = |tops: &[u8], hits: &[Option<Hit>]| {
            estimate_with_offsets(self.cfg.estimation, self.cfg.bridge_limit as usize, seq, tops, hits)
        };
        let (origins, offsets) = if items.iter().all(|it| it.rank == SELECTED) {
            estimate(&items.iter().map(|it| top_byte(it.fp)).collect::<Vec<_>>(), hits)
        } else {
            let policy: Vec<usize> = (0..items.len()).filter(|&i| items[i].rank == SELECTED).collect();
            let tops: Vec<u8> = policy.iter().map(|&i| top_byte(items[i].fp)).collect();
            let of_policy = estimate(&tops, &policy.iter().map(|&i| hits[i]).collect::<Vec<_>>());
            with_extra_shingles(seq, &policy, of_policy, hits)
        };
        let mut result = build_result(seq, doc.tokens(), items, hits, &origins, self.cfg.k as usize, when);
        result.density = (doc.density() < FLOOR).then_some(doc.density());
        Estimate { result, offsets }
    }

    /// When the configuration aligns (the default): replaces the copied blocks of
    /// `result`, document `doc`'s, by blocks aligned against their origins' texts
    /// ([`crate::align`]), and derives the token labels, novel segments and the
    /// most-copied origin from them; with `dominant = blocks` the dominant origin is
    /// then counted by the blocks ([`DocResult::dominant_by_blocks`]), else it stays the
    /// argmax of the table's answers. `origin_text(o)` gives document `o`'s text and
    /// stored blocks (None: not stored; its blocks stay as estimated); `copiers(o)` the
    /// documents whose stored results named `o`, ascending, the newest
    /// [`crate::align::MAX_COPIERS`] at least (later versions of an origin a block
    /// differs from, [`crate::align::align_with_copiers`]). "Earlier" is by `when`.
    pub fn align(
        &self,
        doc: &Prepared,
        result: &mut DocResult,
        origin_text: impl FnMut(u64) -> Option<Arc<OriginText>>,
        copiers: impl FnMut(u64) -> Vec<u64>,
        when: When<'_>,
    ) {
        if !self.cfg.origins {
            return;
        }
        if self.cfg.align && !result.copied_blocks.is_empty() {
            let alignment = Alignment {
                seq: result.seq,
                tokens: doc.tokens(),
                shingles: doc.shingles(),
                selected: &result.selected_origins,
                rabin: &self.rabin,
                when,
                attribution: self.cfg.attribution,
            };
            let (blocks, labels, passages) = align_with_copiers(&alignment, origin_text, copiers);
            result.copied_blocks = blocks;
            result.passages = passages;
            label_tokens(result, doc.tokens(), &labels, when);
        }
        if self.cfg.dominant == Dominant::Blocks {
            result.dominant_origin = result.dominant_by_blocks();
        }
    }

    /// The result of document `doc`, `seq`, with origins off: its counts alone; no token
    /// is labelled old or fresh, and it has no copied block and no dominant origin.
    fn without_origins(&self, doc: &Prepared, seq: u64) -> DocResult {
        let tokens = doc.tokens().len();
        DocResult {
            seq,
            tokens: tokens as u32,
            shingles: shingle_count(tokens, self.cfg.k as usize) as u32,
            ..DocResult::default()
        }
    }

    /// An earlier document as [`Engine::align`] reads it: its text and the copied
    /// blocks of its stored result.
    pub fn origin_text(&self, text: &str, blocks: &[Block]) -> OriginText {
        OriginText::new(text, &self.rabin, blocks)
    }

    /// [`Engine::origin_text`] of a text whose token fingerprints are `tokens`.
    pub fn origin_text_of_tokens(&self, tokens: Vec<u64>, blocks: &[Block]) -> OriginText {
        OriginText::of_tokens(tokens, &self.rabin, blocks)
    }
}

/// Phase 1 for the selected shingles `items` of document `seq` (ascending indexes; all
/// of them, or a shard's), each looked up in its bucket and inserted when absent, in
/// order, with prefetching.
pub fn probe_items<M: BucketMemory>(table: &mut Table<M>, seq: u64, items: &[ShardItem]) -> Probe {
    probe_items_dated(table, seq, items, |_| false)
}

/// [`probe_items`] for a document that may be older than what the table holds (issue
/// 25): an entry whose origin `later` says was published after the document is taken
/// over (the document becomes its origin, [`Table::take_over`]) and counts as not found,
/// as if the document had come first; the owners it took from are in [`Probe::taken`].
pub fn probe_items_dated<M: BucketMemory>(
    table: &mut Table<M>,
    seq: u64,
    items: &[ShardItem],
    later: impl Fn(u64) -> bool,
) -> Probe {
    let mut probe = Probe {
        items: items.iter().map(|it| it.index).collect(),
        fps: items.iter().map(|it| it.fp).collect(),
        hits: Vec::with_capacity(items.len()),
        positions: Vec::with_capacity(items.len()),
        taken: Vec::new(),
        extra: match items.iter().any(|it| it.rank != SELECTED) {
            true => items.iter().map(|it| it.rank != SELECTED).collect(),
            false => Vec::new(),
        },
    };
    for &fp in probe.fps.iter().take(PREFETCH_AHEAD) {
        table.prefetch(fp);
    }
    for (k, it) in items.iter().enumerate() {
        if let Some(&fp) = probe.fps.get(k + PREFETCH_AHEAD) {
            table.prefetch(fp);
        }
        let place = it.place.unwrap_or(it.index);
        let new = Hit { origin: seq, offset: place as u8, prev: it.prev, next: it.next };
        let (mut hit, pos, guest) = table.process_noting(it.fp, new, seq << 24 ^ u64::from(place), it.rank);
        if let Some(g) = guest.filter(|g| g.origin != seq && later(g.origin)) {
            // An extra entry of a document published after this one, which an extra
            // shingle of it inserted: that one would have found this policy entry.
            probe.taken.push(g.origin);
        }
        if let Some(h) = hit.filter(|h| h.origin != seq && later(h.origin)) {
            // An extra shingle takes over an extra entry only: the paper's table never
            // sees it ([`crate::table`], "Extra entries are guests").
            if it.rank == SELECTED || pos.slot == GUEST {
                table.take_over(pos, it.fp, new);
                probe.taken.push(h.origin);
            }
            hit = None;
        }
        probe.hits.push(hit);
        probe.positions.push(pos);
    }
    probe.taken.sort_unstable();
    probe.taken.dedup();
    probe
}

/// Derives blocks, labels and origins from the estimated origins.
pub fn build_result(
    seq: u64,
    tokens: &[Token],
    items: &[Item],
    hits: &[Option<Hit>],
    origins: &[(u64, How)],
    k: usize,
    when: When<'_>,
) -> DocResult {
    let span = |start: u32, end: u32| Span {
        start_token: start,
        end_token: end,
        start_byte: tokens[start as usize].start,
        end_byte: tokens[end as usize - 1].end,
    };
    let blocks = copied_blocks(seq, items, origins, span);
    let counts = origin_counts(origins.iter().map(|x| x.0), when);
    let mut result = DocResult {
        seq,
        tokens: tokens.len() as u32,
        shingles: shingle_count(tokens.len(), k) as u32,
        selected: items.len() as u32,
        hits: hits.iter().filter(|h| h.is_some()).count() as u32,
        dominant_origin: dominant_of(&counts, seq, tokens.len()),
        origin_counts: counts,
        copied_blocks: blocks,
        selected_origins: items
            .iter()
            .zip(origins)
            .map(|(it, &(origin, how))| ShingleOrigin { start_token: it.start, end_token: it.end, origin, how })
            .collect(),
        ..DocResult::default()
    };
    let labels = shingle_labels(&result, when);
    label_tokens(&mut result, tokens, &labels, when);
    result
}

/// The argmax of the origin counts; a tie for the top, or nothing selected: the
/// document itself; none for a document without tokens.
fn dominant_of(counts: &[(u64, u32)], seq: u64, tokens: usize) -> Option<u64> {
    match counts {
        _ if tokens == 0 => None,
        [(o, top), rest @ ..] if rest.first().is_none_or(|second| *top > second.1) => Some(*o),
        _ => Some(seq),
    }
}

/// The origin of every token by the selected shingles: the earliest origin among the
/// copied shingles covering it, 0 for none.
fn shingle_labels(result: &DocResult, when: When<'_>) -> Vec<u64> {
    // Each token's label with its order, each shingle's origin's order asked once.
    let mut labels = vec![(0u64, (i64::MAX, u64::MAX)); result.tokens as usize];
    // Shingles come in runs of one origin (a copy's every shingle names its source).
    let mut last: Option<(u64, (i64, u64))> = None;
    for s in result.selected_origins.iter().filter(|s| s.origin != result.seq) {
        let order = match last {
            Some((o, order)) if o == s.origin => order,
            _ => last.insert((s.origin, when(s.origin))).1,
        };
        for l in &mut labels[s.start_token as usize..s.end_token as usize] {
            if l.0 == 0 || order < l.1 {
                *l = (s.origin, order);
            }
        }
    }
    labels.into_iter().map(|l| l.0).collect()
}

impl DocResult {
    /// Re-derives the dominant origin (argmax) and the most-copied origin (by tokens)
    /// of a result stored before schema 7 (10% rule, by selected shingles) from what it
    /// holds: its counts and the origins of its selected shingles.
    pub fn rederive_schema_6(&mut self) {
        self.dominant_origin = dominant_of(&self.origin_counts, self.seq, self.tokens as usize);
        self.most_copied_origin = most_copied_of(&shingle_labels(self, &by_arrival), &by_arrival);
    }
}

/// The other document with the most tokens in `labels` (ties: the earlier).
fn most_copied_of(labels: &[u64], when: When<'_>) -> Option<u64> {
    // A label comes in runs of equal ones: each run's length added to its origin's.
    let mut runs: Vec<(u64, usize)> =
        labels.chunk_by(|a, b| a == b).filter(|run| run[0] != 0).map(|run| (run[0], run.len())).collect();
    runs.sort_unstable();
    let totals = runs.chunk_by(|a, b| a.0 == b.0).map(|c| (c[0].0, c.iter().map(|x| x.1).sum::<usize>()));
    // Every origin's order differs: the earlier of two with as many tokens is the greater.
    totals.map(|(o, n)| (n, std::cmp::Reverse(when(o)), o)).max().map(|best| best.2)
}

/// Sets what follows from the origin of every token (`labels[t]`, 0: the document
/// itself): old and fresh tokens, novel segments and the most-copied origin.
fn label_tokens(result: &mut DocResult, tokens: &[Token], labels: &[u64], when: When<'_>) {
    let mut novel = Vec::new();
    let mut run_start: Option<usize> = None;
    for (t, &l) in labels.iter().chain([&1]).enumerate() {
        if l == 0 {
            run_start.get_or_insert(t);
        } else if let Some(s) = run_start.take() {
            novel.push(Span {
                start_token: s as u32,
                end_token: t as u32,
                start_byte: tokens[s].start,
                end_byte: tokens[t - 1].end,
            });
        }
    }
    let old = labels.iter().filter(|&&l| l != 0).count() as u32;
    result.old_tokens = old;
    result.fresh_tokens = labels.len() as u32 - old;
    result.novel_segments = novel;
    result.most_copied_origin = most_copied_of(labels, when);
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

/// (origin, selected shingles), most first (ties: the earlier origin).
fn origin_counts(origins: impl IntoIterator<Item = u64>, when: When<'_>) -> Vec<(u64, u32)> {
    let mut sorted: Vec<u64> = origins.into_iter().collect();
    sorted.sort_unstable();
    let mut counts: Vec<(u64, u32)> = sorted.chunk_by(|a, b| a == b).map(|run| (run[0], run.len() as u32)).collect();
    // Every origin's order differs: the order of the counts is total.
    counts.sort_by_cached_key(|&(o, n)| (std::cmp::Reverse(n), when(o)));
    counts
}

pub mod template;

mod score;
use score::{lucky_bonus, lucky_scores, propagate};

mod guests;
pub(crate) use guests::places;
use guests::{policy_bonus, with_extra_shingles};

mod prepared;
pub use prepared::Prepared;

#[cfg(test)]
pub(crate) mod tests;
