//! What one `eval` run counts over its query documents and replies (`crate::origin`):
//! dominant origins (the engine's argmax, the paper's 10% rule, by copied blocks),
//! token labels, per-token origins and the replies' quoted tokens, against the oracle's
//! truth ([`DocTruth`], [`Reply`]).

use textorigin_core::engine::DocResult;

/// The truth about one document.
#[derive(Debug, Clone)]
pub struct DocTruth {
    pub fresh: Vec<bool>,
    pub dominant: Option<u64>,
    /// Origin (earliest source) of every shingle.
    pub origins: Vec<u32>,
}

/// A reply whose earlier ancestors (parent and references) are in the corpus.
#[derive(Debug, Clone)]
pub struct Reply {
    /// Index of the reply in the corpus.
    pub doc: usize,
    /// Sequence numbers of its ancestors present earlier in the corpus.
    pub ancestors: Vec<u64>,
    /// Token ranges of its quoted (`>`) lines.
    pub quoted: Vec<(u32, u32)>,
}

/// What one run counts, document by document.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// Shingle length.
    pub(crate) k: usize,
    pub(crate) do_ok: u64,
    pub(crate) do_rule_ok: u64,
    pub(crate) do_blocks_ok: u64,
    pub(crate) do_n: u64,
    /// Copied query tokens: with a right origin, with wrong ones only, in no block.
    pub(crate) origin: [u64; 3],
    pub(crate) tf_ok: u64,
    pub(crate) tf_n: u64,
    pub(crate) selected: u64,
    pub(crate) all: u64,
    pub(crate) reply_ok: u64,
    pub(crate) reply_n: u64,
}

impl Tally {
    /// Counts one document's result: its quoted tokens when it is a reply, its
    /// dominant origin and token labels when it is a query.
    pub(crate) fn add(&mut self, r: &DocResult, reply: Option<&Reply>, truth: Option<&DocTruth>) {
        if let Some(reply) = reply {
            for &(a, b) in &reply.quoted {
                for t in a..b {
                    self.reply_n += 1;
                    self.reply_ok += u64::from(r.copied_blocks.iter().any(|blk| {
                        blk.span.start_token <= t && t < blk.span.end_token && reply.ancestors.contains(&blk.origin)
                    }));
                }
            }
        }
        self.selected += u64::from(r.selected);
        self.all += u64::from(r.shingles);
        if let Some(truth) = truth {
            self.do_n += 1;
            self.do_ok += u64::from(r.dominant_by_table() == truth.dominant);
            self.do_rule_ok += u64::from(r.dominant_by_rule() == truth.dominant);
            self.do_blocks_ok += u64::from(r.dominant_by_blocks() == truth.dominant);
            self.add_origins(r, truth);
            let mut fresh = vec![false; r.tokens as usize];
            for s in &r.novel_segments {
                fresh[s.start_token as usize..s.end_token as usize].iter_mut().for_each(|f| *f = true);
            }
            self.tf_n += fresh.len() as u64;
            self.tf_ok += fresh.iter().zip(&truth.fresh).filter(|(a, b)| a == b).count() as u64;
        }
    }
}

impl Tally {
    /// Per-token origin accuracy of one query document: a copied token is right when a
    /// block covering it has the earliest source of one of the k-shingles covering it.
    fn add_origins(&mut self, r: &DocResult, truth: &DocTruth) {
        let (k, n, seq) = (self.k, truth.fresh.len(), r.seq);
        // 0: in no block; 1: only in blocks of other origins; 2: in a block of a right origin.
        let mut got = vec![0u8; n];
        for b in &r.copied_blocks {
            let (a, z) = (b.span.start_token as usize, (b.span.end_token as usize).min(n));
            for (t, g) in got.iter_mut().enumerate().take(z).skip(a) {
                let covering = &truth.origins
                    [(t + 1).saturating_sub(k).min(truth.origins.len())..(t + 1).min(truth.origins.len())];
                let right = covering.iter().any(|&o| u64::from(o) != seq && u64::from(o) == b.origin);
                *g = (*g).max(if right { 2 } else { 1 });
            }
        }
        for (t, &g) in got.iter().enumerate() {
            if !truth.fresh[t] {
                self.origin[2 - usize::from(g)] += 1;
            }
        }
    }
}
