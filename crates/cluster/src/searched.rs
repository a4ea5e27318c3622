//! The signature and near-duplicate sections of the derived indexes on the shard
//! workers (`docs/SCALE-OUT.md`, "The derived indexes in the workers"): each
//! worker holds its part of them ([`IndexPart`]) in a region of the deployment's size
//! (untouched pages cost nothing), answers each document's searches as of the
//! document before, then adds the document's keys; the partitions merge the S answers
//! into what their searches read and count only the words themselves.
//!
//! The near-duplicate and quotation parameters are the defaults: a deployment's
//! partitions refuse a data directory with others ([`Searched::searches_with`]).

use textorigin_core::config::Config;
use textorigin_core::engine::template::TemplateRun;
use textorigin_core::index::{IndexAnswers, IndexPart, IndexShape, IndexTooSmall, IndexWork, Indexes};
use textorigin_core::neardup::NearDupConfig;
use textorigin_core::quote::QuoteConfig;
use textorigin_core::text::Token;
use textorigin_store::storage::datadir::{sketch_and_sentences, Searches};
use textorigin_store::storage::recompute::Recomputer;

/// What a document asks of and adds to the searched sections, computed from its text
/// as a partition's analysis computes it.
pub struct Searched {
    /// The default near-duplicate and quotation parameters, sketching as a partition's
    /// analysis does.
    recompute: Recomputer,
    on: Searches,
    index_bytes: u64,
}

impl Searched {
    pub fn new(config: &Config) -> Searched {
        let recompute = Recomputer::new(config.terms, NearDupConfig::default(), QuoteConfig::default());
        Searched { recompute, on: Searches::of(config), index_bytes: config.index_bytes }
    }

    /// Whether a data directory's near-duplicate and quotation parameters are the ones
    /// the workers search with.
    pub fn searches_with(&self, nd: &NearDupConfig, q: &QuoteConfig) -> bool {
        nd == self.recompute.neardup() && q == self.recompute.quote()
    }

    /// The work of a document of `text`, whose tokens are `tokens` (`Engine::prepare`),
    /// outside its own site template lines `runs`: its sentences' searches and
    /// signatures where quotation search is on, its near-duplicate keys where detection
    /// is.
    pub fn work(&self, (text, tokens): (&str, &[Token]), runs: &[TemplateRun]) -> IndexWork {
        let (sketch, sentences) = sketch_and_sentences(self.on, &self.recompute, (text, tokens), runs);
        let (q, nd) = (self.recompute.quote(), self.recompute.neardup());
        IndexWork::of(q, nd, sentences.as_deref().unwrap_or_default(), sketch.as_ref())
    }

    /// The shape of the deployment's index region.
    pub fn shape(&self) -> Result<IndexShape, IndexTooSmall> {
        IndexShape::new(self.index_bytes, self.recompute.quote())
    }

    /// What shard `shard` of `shards` answers and adds of `work` in a region of `shape`
    /// ([`Searched::shape`], [`IndexWork::part`]): what `cluster submit --prepared`
    /// sends it.
    pub fn part_of(&self, work: &IndexWork, shape: &IndexShape, shard: u32, shards: u32) -> IndexWork {
        work.part(self.recompute.quote(), shape, IndexPart { shard, shards })
    }
}

/// A shard worker's part of the searched sections.
pub struct HeldPart {
    q: QuoteConfig,
    nd: NearDupConfig,
    index: Indexes<Vec<u8>>,
    part: IndexPart,
}

impl HeldPart {
    /// Shard `shard` of `shards`' part, empty, of a region of the deployment's index
    /// size, searched with `searched`'s parameters.
    pub fn new(searched: &Searched, shard: u32, shards: u32) -> Result<HeldPart, IndexTooSmall> {
        let (q, nd) = (searched.recompute.quote().clone(), searched.recompute.neardup().clone());
        // A part's region spans its sections: a bucket in use of a growing one would
        // hold other parts' buckets.
        let index = Indexes::spanning(searched.index_bytes, &q)?;
        Ok(HeldPart { q, nd, index, part: IndexPart { shard, shards } })
    }

    /// Answers document `seq`'s searches (as of the documents before it), then adds
    /// its keys.
    pub fn answer_and_add(&mut self, seq: u64, work: &IndexWork) -> IndexAnswers {
        let answers = self.index.answer_part((&self.q, &self.nd), seq, &work.queries, self.part);
        self.index.add_part(&self.q, seq, &work.add, self.part);
        answers
    }

    /// The bytes of the part (the counters page, its signature chains, its key
    /// buckets), as a checkpoint slot keeps them.
    pub fn image(&self) -> [&[u8]; 3] {
        let bytes = self.index.region();
        self.ranges().map(|r| &bytes[r])
    }

    /// Puts back the bytes [`HeldPart::image`] gave, concatenated; false when they are
    /// not of this part's size.
    pub fn restore(&mut self, mut bytes: &[u8]) -> bool {
        let ranges = self.ranges();
        if bytes.len() != ranges.iter().map(|r| r.len()).sum::<usize>() {
            return false;
        }
        let region = self.index.region_mut();
        for r in ranges {
            let (head, rest) = bytes.split_at(r.len());
            region[r].copy_from_slice(head);
            bytes = rest;
        }
        true
    }

    fn ranges(&self) -> [std::ops::Range<usize>; 3] {
        let shape: IndexShape = self.index.shape();
        self.part.searched_ranges(&shape)
    }
}

#[cfg(test)]
mod tests {
    use textorigin_core::index::{IndexAdd, IndexQueries};

    use super::*;

    /// A document's work: signatures and keys drawn from few values, so that they repeat.
    fn work(n: u64) -> IndexWork {
        let sigs: Vec<(u32, u64)> = (0..4).map(|i| (i, (n * 7 + u64::from(i)) % 23 * 0x0101_0101)).collect();
        let keys: Vec<u64> = (0..3).map(|i| (n + i) % 11).collect();
        let queries = IndexQueries { quotes: sigs.iter().map(|&(_, s)| (s, 2)).collect(), nd_keys: keys.clone() };
        IndexWork { queries, add: IndexAdd { words: Vec::new(), signatures: sigs, nd_keys: keys } }
    }

    /// A part restored from its image answers as the part it was taken of, for every
    /// shard of 3; an image of another size is refused.
    #[test]
    fn a_restored_part_answers_as_the_original() {
        let searched = Searched::new(&Config { index_bytes: 2 << 20, ..Config::default() });
        for shard in 0..3 {
            let mut held = HeldPart::new(&searched, shard, 3).unwrap();
            for n in 1..=200 {
                held.answer_and_add(n, &work(n));
            }
            let image: Vec<u8> = held.image().concat();
            let mut restored = HeldPart::new(&searched, shard, 3).unwrap();
            assert!(!restored.restore(&image[1..]));
            assert!(restored.restore(&image));
            for n in 201..=260 {
                assert_eq!(
                    restored.answer_and_add(n, &work(n)),
                    held.answer_and_add(n, &work(n)),
                    "shard {shard} #{n}"
                );
            }
            assert!(held.image().concat().len() < (2 << 20) / 2, "a part, not the region");
        }
    }
}
