//! Tests of quotation search: signatures, radius, index probes, `find` against scoring
//! every candidate.

use super::*;
use proptest::prelude::*;

/// In-memory documents' sentences and the derived indexes over them.
struct Memory {
    idx: crate::index::Indexes<Vec<u8>>,
    sentences: std::collections::HashMap<u64, DocSentences>,
}

impl Memory {
    /// The sentence index [`find`] reads: candidates and frequencies from the whole
    /// index.
    fn index(&self) -> Through<'_> {
        Through { mem: self, lookup: &self.idx }
    }

    fn add(&mut self, cfg: &QuoteConfig, seq: u64, sentences: Vec<Sentence>) -> QuoteFind {
        let q = find(&self.index(), cfg, seq, sentences, |_| false).unwrap();
        self.sentences.insert(seq, q.sentences.clone());
        self.idx.add(cfg, seq, &crate::index::IndexAdd::found(Some(&q), Vec::new()));
        q
    }
}

/// [`Memory`]'s sentences with the candidates and frequencies of `lookup` (the whole
/// index, or a document's answers from index parts).
struct Through<'a> {
    mem: &'a Memory,
    lookup: &'a dyn crate::index::IndexLookup,
}

impl SentenceIndex for Through<'_> {
    type Error = crate::index::Unanswered;
    fn documents(&self) -> Result<u64, Self::Error> {
        Ok(self.lookup.documents())
    }
    fn df(&self, word: u64) -> Result<u64, Self::Error> {
        Ok(self.lookup.df(word))
    }
    fn candidates(&self, cfg: &QuoteConfig, sig: u64, d: u32) -> Result<(Vec<(u64, u32, u32)>, u64), Self::Error> {
        self.lookup.quote_candidates(cfg, sig, d)
    }
    fn sentence(&self, seq: u64, idx: u32) -> Result<Option<SharedSentence>, Self::Error> {
        Ok(self.mem.sentences.get(&seq).and_then(|all| all.get(idx)))
    }
}

/// What [`find`] must give for one sentence: the first `max_candidates` candidates
/// in rank order (with pairs by parts matched, then age; else by age) all scored, those at the threshold
/// sorted best first and cut at `max_sources`.
fn found_by_scoring_all(mem: &Memory, cfg: &QuoteConfig, seq: u64, s: &Sentence) -> Vec<QuoteSource> {
    let n_docs = mem.idx.documents();
    let idf = |w: u64| (n_docs as f64 / mem.idx.df(w).max(1) as f64).ln().max(0.0);
    let parted = !part_signatures(cfg, &s.words).is_empty();
    let d = if parted { 0 } else { radius(cfg, s.words.len() as u32) };
    let mut cands: Vec<(u64, u32)> = signatures(cfg, std::slice::from_ref(s))
        .into_iter()
        .flat_map(|(_, sig)| mem.idx.quote_candidates(cfg, sig, d).0)
        .map(|(cseq, cidx, _)| (cseq, cidx))
        .filter(|&(cseq, _)| cseq < seq)
        .collect();
    // Brute force: count each candidate's signatures by scanning, then order.
    let mut distinct = cands.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let count = |c: &(u64, u32)| if cfg.pairs { cands.iter().filter(|x| *x == c).count() } else { 0 };
    distinct.sort_by(|a, b| count(b).cmp(&count(a)).then(a.cmp(b)));
    distinct.truncate(cfg.max_candidates as usize);
    cands = distinct;
    let full = signature(cfg, &s.words);
    let mut out: Vec<QuoteSource> = cands
        .into_iter()
        .filter_map(|(cseq, cidx)| {
            let other = mem.sentences[&cseq].get(cidx).expect("a candidate is indexed");
            let sc = score(&s.words, other.words(), idf);
            let distance = (full ^ signature(cfg, other.words())).count_ones();
            (sc >= cfg.threshold).then_some(QuoteSource { seq: cseq, sentence: cidx, distance, score: sc })
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.seq.cmp(&b.seq)).then(a.sentence.cmp(&b.sentence)));
    out.truncate(cfg.max_sources as usize);
    out
}

proptest::proptest! {
    /// A document's search through the answers of index parts, asked its
    /// [`searches`] ahead and merged (shard workers hold the parts), finds
    /// what it finds through the whole index: quotations both ways (a candidate may be
    /// published later), candidates scored and left out; in a region that evicts and
    /// one that does not, with the per-probe cap low.
    #[test]
    fn find_through_the_parts_answers_equals_find_through_the_whole(seed in proptest::prelude::any::<u64>(), docs in 2u64..30, shards in 1u32..=4, variant in 0usize..3, small in proptest::prelude::any::<bool>()) {
        use crate::index::{Answered, IndexAnswers, IndexPart, IndexQueries, Indexes};
        let cfg = match variant {
            0 => QuoteConfig { max_per_probe: 3, ..QuoteConfig::default() },
            1 => QuoteConfig { max_per_probe: 3, splits: 3, pairs: false, split_words: 8, ..QuoteConfig::default() },
            _ => QuoteConfig { max_per_probe: 3, splits: 0, pairs: false, ..QuoteConfig::default() },
        };
        let nd = crate::neardup::NearDupConfig::default();
        let bytes = if small { crate::index::MIN_INDEX_BYTES } else { 4 << 20 };
        let mut mem = Memory { idx: Indexes::in_memory(bytes, &cfg).unwrap(), sentences: Default::default() };
        let parts: Vec<IndexPart> = (0..shards).map(|shard| IndexPart { shard, shards }).collect();
        let mut held: Vec<_> = parts.iter().map(|_| Indexes::spanning(bytes, &cfg).unwrap()).collect();
        let mut rng = seed;
        let mut next = move |n: u64| { rng = mix(rng.wrapping_add(1)); rng % n };
        let base: Vec<Vec<u64>> = (0..8).map(|_| (0..5 + next(12)).map(|_| next(40)).collect()).collect();
        let later = |c: u64| c.is_multiple_of(3);
        for seq in 1..=docs {
            let ss: Vec<Sentence> = (0..1 + next(4))
                .map(|k| {
                    let mut w = base[next(8) as usize].clone();
                    if next(3) == 0 {
                        w[0] = next(40);
                    }
                    w.sort_unstable();
                    w.dedup();
                    Sentence { start: k as u32, end: k as u32 + 1, words: w, clauses: Vec::new() }
                })
                .collect();
            let queries = IndexQueries::of(&cfg, &nd, &ss, None);
            let answers = IndexAnswers::merge(parts.iter().zip(&held).map(|(part, idx)| idx.answer_part((&cfg, &nd), seq, &queries, *part)));
            let answered = Answered { frequencies: &mem.idx, answers: &answers };
            let got = find(&Through { mem: &mem, lookup: &answered }, &cfg, seq, ss.clone(), later).unwrap();
            let want = find(&mem.index(), &cfg, seq, ss, later).unwrap();
            proptest::prop_assert_eq!(&got.found, &want.found);
            proptest::prop_assert_eq!(&got.late, &want.late);
            proptest::prop_assert_eq!((got.candidates, got.capped), (want.candidates, want.capped));
            mem.sentences.insert(seq, want.sentences.clone());
            let add = crate::index::IndexAdd::found(Some(&want), Vec::new());
            mem.idx.add(&cfg, seq, &add);
            for (part, idx) in parts.iter().zip(&mut held) {
                idx.add_part(&cfg, seq, &add, *part);
            }
        }
    }

    /// Documents of sentences drawn from a few, so that many repeat exactly (more
    /// often than `max_sources`) and others overlap: what `find` reports for each
    /// sentence equals scoring every candidate the cap lets in (it stops early once
    /// it holds `max_sources` perfect scores), with part signatures of pairs, of
    /// single groups, and full signatures.
    #[test]
    fn find_equals_scoring_every_candidate(seed in proptest::prelude::any::<u64>(), docs in 2u64..40, max_sources in 1u32..6, variant in 0usize..3, max_candidates in 1u32..40) {
        let cfg = match variant {
            0 => QuoteConfig { max_sources, max_candidates, ..QuoteConfig::default() },
            1 => QuoteConfig { max_sources, max_candidates, splits: 3, pairs: false, split_words: 8, ..QuoteConfig::default() },
            _ => QuoteConfig { max_sources, max_candidates, splits: 0, pairs: false, ..QuoteConfig::default() },
        };
        let mut mem = Memory { idx: crate::index::Indexes::in_memory(16 << 20, &cfg).unwrap(), sentences: Default::default() };
        let mut rng = seed;
        let mut next = move |n: u64| { rng = mix(rng.wrapping_add(1)); rng % n };
        // Eight base sentences of 5-12 words from a vocabulary of 40.
        let base: Vec<Vec<u64>> = (0..8).map(|_| (0..5 + next(8)).map(|_| next(40)).collect()).collect();
        for seq in 1..=docs {
            let ss: Vec<Sentence> = (0..1 + next(4))
                .map(|k| {
                    let mut w = base[next(8) as usize].clone();
                    if next(3) == 0 {
                        w[0] = next(40); // an edited copy
                    }
                    w.sort_unstable();
                    w.dedup();
                    Sentence { start: k as u32, end: k as u32 + 1, words: w, clauses: Vec::new() }
                })
                .collect();
            let want: Vec<(u32, Vec<QuoteSource>)> = ss
                .iter()
                .enumerate()
                .filter(|(_, s)| s.words.len() as u32 >= cfg.min_words && mem.idx.documents() > 0)
                .map(|(i, s)| (i as u32, found_by_scoring_all(&mem, &cfg, seq, s)))
                .filter(|(_, f)| !f.is_empty())
                .collect();
            let q = mem.add(&cfg, seq, ss);
            let got: Vec<(u32, Vec<QuoteSource>)> = q.found.into_iter().map(|f| (f.sentence, f.sources)).collect();
            proptest::prop_assert_eq!(got, want);
        }
    }

    /// The copy bound: an index that adds a signature to a bucket only
    /// while fewer than `max_sources` entries there hold it reports what an index of
    /// every copy reports, as long as no other bound is reached (the per-probe and per-sentence
    /// caps are off here) and every entry left out is of the same words as those
    /// holding its signature: its score is theirs and it came later, so it is never
    /// among the best `max_sources`. A part signature shared with sentences of other
    /// words may crowd a sentence out; from then on the searches may differ and are
    /// not compared. Nor are they once either index has evicted: a piece value that
    /// more than a bucket's worth of different signatures share (edited copies of one
    /// sentence, each a signature of its own, as this test's edits make them) fills its
    /// bucket, the index of every copy first, and the two indexes then forget
    /// different entries. Arrival order (a copy published earlier than those indexed is
    /// told of them only, as the per-sentence cap did before).
    #[test]
    fn the_copy_bound_reports_what_an_index_of_every_copy_reports(seed in proptest::prelude::any::<u64>(), docs in 2u64..60, max_sources in 1u32..5, variant in 0usize..3, edited in proptest::prelude::any::<bool>()) {
        let cfg = match variant {
            0 => QuoteConfig::default(),
            1 => QuoteConfig { splits: 3, pairs: false, split_words: 8, ..QuoteConfig::default() },
            _ => QuoteConfig { splits: 0, pairs: false, ..QuoteConfig::default() },
        };
        let cfg = QuoteConfig { max_sources, max_candidates: u32::MAX, max_per_probe: u32::MAX, ..cfg };
        let every = QuoteConfig { max_sources: u32::MAX, ..cfg.clone() };
        let memory = || Memory { idx: crate::index::Indexes::in_memory(16 << 20, &cfg).unwrap(), sentences: Default::default() };
        let (mut bounded, mut all) = (memory(), memory());
        let mut rng = seed;
        let mut next = move |n: u64| { rng = mix(rng.wrapping_add(1)); rng % n };
        // Four base sentences of 5-12 words, copied exactly (or seven times in eight,
        // an edited copy sharing most parts with its base).
        let base: Vec<Vec<u64>> = (0..4).map(|_| (0..5 + next(8)).map(|_| next(200)).collect()).collect();
        // Each signature's first `max_sources` entries (the bounded index holds at
        // least these), with their words.
        type Held = Vec<((u64, u32), Vec<u64>)>;
        let mut held: std::collections::HashMap<u64, Held> = Default::default();
        let (mut crowded, mut left_out, mut compared) = (false, 0u64, 0u64);
        for seq in 1..=docs {
            let ss: Vec<Sentence> = (0..1 + next(4))
                .map(|k| {
                    let mut w = base[next(4) as usize].clone();
                    if edited && next(8) == 0 {
                        w[0] = next(200);
                    }
                    w.sort_unstable();
                    w.dedup();
                    Sentence { start: k as u32, end: k as u32 + 1, words: w, clauses: Vec::new() }
                })
                .collect();
            let got = find(&bounded.index(), &cfg, seq, ss.clone(), |_| false).unwrap();
            let want = find(&all.index(), &cfg, seq, ss.clone(), |_| false).unwrap();
            if !crowded {
                proptest::prop_assert_eq!(&got.found, &want.found);
                compared += 1;
            }
            for &(i, sig) in &got.signatures {
                // (Two parts of a sentence may have one signature: held once.)
                let words = &ss[i as usize].words;
                let h = held.entry(sig).or_default();
                if h.len() < max_sources as usize {
                    if !h.iter().any(|e| e.0 == (seq, i)) {
                        h.push(((seq, i), words.clone()));
                    }
                } else {
                    left_out += 1;
                    crowded |= h.iter().any(|e| e.1 != *words);
                }
            }
            bounded.sentences.insert(seq, got.sentences.clone());
            bounded.idx.add(&cfg, seq, &crate::index::IndexAdd::found(Some(&got), Vec::new()));
            all.sentences.insert(seq, want.sentences.clone());
            all.idx.add(&every, seq, &crate::index::IndexAdd::found(Some(&want), Vec::new()));
            crowded |= bounded.idx.stats().sig_evictions + all.idx.stats().sig_evictions > 0;
        }
        // The index leaves a copy out of a bucket holding `max_sources` of it, so at
        // most what a chain holding that many leaves out (here: the entries counted),
        // each piece's chain apart.
        let st = bounded.idx.stats();
        proptest::prop_assert!(st.sig_copies <= left_out * u64::from(cfg.pieces));
        proptest::prop_assert!(compared >= 1);
    }

    /// A sentence with one word changed, among other documents' sentences: always
    /// found through a part signature when none of its groups is empty: with the
    /// defaults (pairs of 4 groups, from 5 words) one pair is unchanged; with 3
    /// single groups (schema 7's parts, from 18 words) one group is.
    #[test]
    fn an_edited_sentence_is_found_through_a_part_signature(seed in proptest::prelude::any::<u64>(), n in 5usize..=40, at in 0usize..40, pairs in proptest::prelude::any::<bool>()) {
        let mut g = crate::testdata::XorShift::new(seed | 1);
        let mut next = move || g.next_u64();
        let sentence = |words: Vec<u64>, start: u32| { let mut w = words; w.sort_unstable(); w.dedup(); Sentence { start, end: start + 1, words: w, clauses: Vec::new() } };
        {
            let cfg = match pairs {
                true => QuoteConfig::default(),
                false => QuoteConfig { splits: 3, pairs: false, split_words: 18, ..QuoteConfig::default() },
            };
            proptest::prop_assume!(n as u32 >= cfg.split_words);
            let parts = if pairs { 6 } else { 3 };
            let mut mem = Memory { idx: crate::index::Indexes::in_memory(16 << 20, &cfg).unwrap(), sentences: Default::default() };
            let mut rng = next();
            let mut word = move || { rng = mix(rng); rng };
            let original: Vec<u64> = (0..n).map(|_| word()).collect();
            // A sentence with an empty group has only two parts, and an edit can
            // change both (see `part_signatures`).
            let mut sorted = original.clone();
            sorted.sort_unstable();
            proptest::prop_assume!(part_signatures(&cfg, &sorted).len() == parts);
            for seq in 1..=20u64 {
                let mut ss: Vec<Sentence> = (0..5).map(|k| sentence((0..20).map(|_| word()).collect(), k)).collect();
                if seq == 7 {
                    ss.push(sentence(original.clone(), 9));
                }
                mem.add(&cfg, seq, ss);
            }
            let mut edited = original.clone();
            edited[at % n] = word();
            let q = mem.add(&cfg, 21, vec![sentence(edited, 0)]);
            proptest::prop_assert!(q.found.iter().any(|f| f.sources.iter().any(|s| s.seq == 7 && s.sentence == 5)));
        }
    }

    /// Issue 34: a sentence that repeats one clause of a longer earlier sentence (all
    /// its words in it: a score of 1) is always found by its clause's signatures, among
    /// other documents' sentences; with `clauses` off (schema 11) it is not, whenever its
    /// clause shares no pair signature with the whole.
    #[test]
    fn a_sentence_repeating_a_clause_of_a_longer_one_is_found(seed in proptest::prelude::any::<u64>(), n in 5usize..=15, before in 3usize..=20, after in 0usize..=20) {
        let mut g = crate::testdata::XorShift::new(seed | 1);
        let mut word = move || g.next_u64();
        let sorted = |mut w: Vec<u64>| { w.sort_unstable(); w.dedup(); w };
        let clause: Vec<u64> = (0..n).map(|_| word()).collect();
        let (head, tail): (Vec<u64>, Vec<u64>) = ((0..before).map(|_| word()).collect(), (0..after).map(|_| word()).collect());
        let mut clauses = vec![sorted(head.clone()), sorted(clause.clone())];
        if after > 0 {
            clauses.push(sorted(tail.clone()));
        }
        let whole = Sentence { start: 9, end: 10, words: sorted([head, clause.clone(), tail].concat()), clauses };
        let found = |cfg: &QuoteConfig, noise: &mut dyn FnMut() -> u64| {
            let mut mem = Memory { idx: crate::index::Indexes::in_memory(16 << 20, cfg).unwrap(), sentences: Default::default() };
            for seq in 1..=10u64 {
                let mut ss: Vec<Sentence> = (0..5).map(|k| Sentence { start: k, end: k + 1, words: sorted((0..12).map(|_| noise()).collect()), clauses: Vec::new() }).collect();
                if seq == 4 {
                    ss.push(whole.clone());
                }
                mem.add(cfg, seq, ss);
            }
            let q = mem.add(cfg, 11, vec![Sentence { start: 0, end: 1, words: sorted(clause.clone()), clauses: Vec::new() }]);
            q.found.iter().any(|f| f.sources.iter().any(|s| s.seq == 4 && s.sentence == 5 && s.score == 1.0))
        };
        let mut rng = word();
        let mut noise = move || { rng = mix(rng); rng };
        prop_assert!(found(&QuoteConfig::default(), &mut noise));
        let off = QuoteConfig { clauses: false, ..QuoteConfig::default() };
        let shared = part_signatures(&off, &sorted(clause.clone())).iter().any(|p| part_signatures(&off, &whole.words).contains(p));
        if !shared {
            prop_assert!(!found(&off, &mut noise));
        }
    }
}

#[test]
fn signature_sets_l_bits_per_word() {
    let cfg = QuoteConfig::default();
    for w in 0..1000u64 {
        assert_eq!(word_signature(&cfg, w).count_ones(), 2);
        assert!(word_signature(&cfg, w) < 1 << 32);
    }
}

#[test]
fn score_matches_a_hand_computed_example() {
    // Q = {a, b, c, d}, R = {a, b, x}; N = 100, df: a 50, b 10, c 1, d 4.
    let idf = |w: u64| (100.0f64 / [50.0, 10.0, 1.0, 4.0, 7.0][w as usize]).ln();
    let s = score(&[0, 1, 2, 3], &[0, 1, 4], idf);
    // (2/4) · (ln 2 + ln 10) / (ln 2 + ln 10 + ln 100 + ln 25)
    //   = 0.5 · (0.6931 + 2.3026) / (0.6931 + 2.3026 + 4.6052 + 3.2189) = 0.5 · 0.27688
    let want = 0.5 * (2f64.ln() + 10f64.ln()) / (2f64.ln() + 10f64.ln() + 100f64.ln() + 25f64.ln());
    assert!((s - want).abs() < 1e-12, "{s} {want}");
    assert!((s - 0.13844).abs() < 1e-4, "{s}");
    assert_eq!(score(&[0, 1], &[0, 1, 2], idf), 1.0);
}

#[test]
fn probes_are_few_for_small_radii() {
    let cfg = QuoteConfig { exact_index: false, ..QuoteConfig::default() }; // 2 pieces of 16 bits
    let n: Vec<usize> = (0..=3).map(|d| probes(&cfg, 0xdead_beef, d).len()).collect();
    assert_eq!(n, [1, 2, 18, 34]);
    // Laid out for exact searches (the default): one probe, where the signature is indexed.
    let exact = QuoteConfig::default();
    assert_eq!(probes(&exact, 0xdead_beef, 0), entries(&exact, 0xdead_beef));
    assert_eq!(probes(&exact, 0xdead_beef, 0).len(), 1);
}

#[test]
fn radius_follows_the_formula() {
    let cfg = QuoteConfig::default();
    // Short sentences get a wider radius than long ones (their signatures are sparser).
    let radii: Vec<u32> = [5, 9, 10, 12, 13, 17, 18, 40].iter().map(|&n| radius(&cfg, n)).collect();
    assert_eq!(radii, [3, 3, 2, 2, 1, 1, 0, 0]);
    for n in 5..40 {
        let d = radius(&cfg, n);
        let k = cfg.k_flex + 1;
        assert!(d == 0 || p_max_bit_diff(32, 2, n, k, d) <= 0.1);
        assert!(d == cfg.d_max || p_max_bit_diff(32, 2, n, k, d + 1) > 0.1);
    }
    assert_eq!(radius(&QuoteConfig { radius: Some(4), ..cfg }, 40), 4);
}

proptest! {
    #[test]
    fn probes_reach_every_signature_within_d(
        sig in 0u64..(1 << 32),
        flips in proptest::collection::vec(0u64..32, 0..8),
        pieces in 1u32..5,
        d_max in 0u32..7,
    ) {
        let cfg = QuoteConfig { pieces, d_max, exact_index: false, ..QuoteConfig::default() };
        let mut other = sig;
        for f in flips { other ^= 1 << f; }
        let dist = (sig ^ other).count_ones();
        for d in dist..=d_max {
            let probes = probes(&cfg, sig, d);
            prop_assert!((0..cfg.pieces).any(|p| probes.contains(&(p, piece(&cfg, other, p)))), "d={} dist={}", d, dist);
        }
    }
}

/// Issue 25: a candidate published after the searching document is the quoting one,
/// scored from its side. A short sentence contained in a longer one quotes it (all its
/// words reappear: 1); the longer one does not quote the short one (a word is missing).
#[test]
fn a_later_published_candidate_quotes_the_searching_document() {
    let cfg = QuoteConfig { radius: Some(3), ..QuoteConfig::default() };
    let short: Vec<u64> = (1..=6).map(|w| w * 1_000_003).collect();
    let mut long = short.clone();
    long.push(99_999_989);
    long.sort_unstable();
    let sent = |words: &[u64]| Sentence { start: 0, end: 10, words: words.to_vec(), clauses: Vec::new() };
    for later in [false, true] {
        let mut mem =
            Memory { idx: crate::index::Indexes::in_memory(16 << 20, &cfg).unwrap(), sentences: Default::default() };
        mem.add(&cfg, 1, vec![sent(&short)]);
        let q = find(&mem.index(), &cfg, 2, vec![sent(&long)], |c| later && c == 1).unwrap();
        assert!(q.found.is_empty(), "the long sentence quotes nothing: {:?}", q.found);
        if later {
            assert_eq!(q.late.len(), 1, "{:?}", q.late);
            let (doc, quotes) = &q.late[0];
            assert_eq!((*doc, quotes.len(), quotes[0].sentence), (1, 1, 0));
            let s = quotes[0].sources[0];
            assert_eq!((s.seq, s.sentence, s.score), (2, 0, 1.0));
        } else {
            assert!(q.late.is_empty());
        }
    }
}

/// Both kinds of terms of `text`, with its tokens under each.
fn tokens_of(text: &str) -> Vec<(crate::text::Terms, Vec<crate::text::Token>)> {
    [crate::text::Terms::Words, crate::text::Terms::Unicode]
        .into_iter()
        .map(|terms| {
            let rabin = crate::rabin::Rabin::new(1).with_terms(terms);
            let mut tokens = Vec::new();
            crate::text::tokenize(text, &rabin, &mut tokens);
            (terms, tokens)
        })
        .collect()
}

/// `words_of_terms` against the words of the split sentences, with and without clauses.
fn same_words(text: &str) -> Result<(), TestCaseError> {
    for (terms, tokens) in tokens_of(text) {
        let want = words(&sentences_without_clauses(text, &tokens, terms));
        prop_assert_eq!(&words_of_terms(&tokens), &want, "{:?} {:?}", terms, text);
        prop_assert_eq!(&words(&sentences(text, &tokens, terms)), &want);
    }
    Ok(())
}

proptest! {
    /// Every term is in a sentence, whole, whatever cuts the sentences: stops followed by
    /// spaces or capitals, abbreviations, closers, blank lines, list items, a headline,
    /// ideographic stops, Thai spaces, combining marks.
    #[test]
    fn the_words_of_the_terms_are_those_of_the_sentences(
        text in r#"([a-zA-Z0-9]{1,6}|[ \n.!?,;:'"()\[\]»”’「」。！？।-]|Dr\.|e\.g\.|\n- |\n1\. |一|あ|ア|กข|\u{0301}|Ａ){0,60}"#
    ) {
        same_words(&text)?;
    }
}

proptest! {
    /// A document's packed sentences read back as they were given: each by its index
    /// (none for an index not among them), in order, words and spans.
    #[test]
    fn packed_sentences_read_back_as_given(
        given in proptest::collection::vec((0u32..4, 0u32..1000, 0u32..1000, proptest::collection::vec(any::<u64>(), 0..12)), 0..20)
    ) {
        let mut idx = 0u32;
        let mut want = Vec::new();
        for (gap, start, len, mut words) in given {
            idx += gap + u32::from(!want.is_empty());
            words.sort_unstable();
            words.dedup();
            want.push((idx, Sentence { start, end: start + len, words, clauses: Vec::new() }));
        }
        let packed = DocSentences::new(want.iter().map(|(i, s)| (*i, s)));
        prop_assert_eq!(packed.len(), want.len());
        prop_assert_eq!(packed.iter().collect::<Vec<_>>(), want.clone());
        for (i, s) in &want {
            let got = packed.get(*i).expect("a given index");
            prop_assert_eq!((got.index(), got.start(), got.end(), got.words()), (*i, s.start, s.end, &s.words[..]));
        }
        for absent in 0..=idx + 1 {
            prop_assert_eq!(packed.get(absent).is_some(), want.iter().any(|(i, _)| *i == absent));
        }
    }
}
