//! Tokenizer: a document's text into alphanumeric terms with byte spans and Rabin
//! fingerprints, in one pass.
//!
//! The origin-detection paper works on "alphanumeric terms" (Section 3.1). A term here
//! is a maximal run of characters for which [`char::is_alphanumeric`] holds (Unicode
//! Alphabetic or Numeric), case-folded with [`char::to_lowercase`]. Everything else
//! (spaces, punctuation, symbols, combining marks) separates terms. The fingerprint of a
//! term is [`Rabin::token`] of its lower-cased UTF-8 bytes, computed while scanning,
//! without building a string. ASCII takes a table-driven fast path.
//!
//! Which characters make a term is the configuration's [`Terms`], carried
//! by the [`Rabin`] tables the text is fingerprinted with: with [`Terms::Words`] (data
//! directories made before schema 11) a run of Chinese or Japanese is one term from
//! punctuation to punctuation, so a k-shingle spans k whole sentences; with
//! [`Terms::Unicode`] (the default) every Han ideograph is a term of its own, as
//! Unicode's word boundaries (UAX #29) make each ideograph a word, a run of hiragana
//! and a run of katakana are a term each (UAX #29 keeps katakana runs whole; hiragana
//! runs are mostly particles and endings, `することができます`, which one term a
//! character would make common phrases of eight terms), and a run ends where the
//! script changes between kana and the rest; Latin, Cyrillic, Greek, Hangul (written
//! with spaces) and the other scripts stay runs. Thai, Lao, Khmer and Burmese, written
//! without spaces between words and with letters (not ideographs) that mean nothing
//! alone, are split into words by dictionary: a run of their characters (combining
//! vowel and tone marks included) is given to ICU4X's word segmenter with its compiled
//! dictionaries ([`icu_segmenter::WordSegmenter::new_dictionary`]), and each word it
//! finds is a term, fingerprinted of its NFKC form. Chinese and Japanese stay one
//! ideograph a term rather than the same segmenter's words: a dictionary word is about
//! two ideographs, so a copied sentence of 25 characters would have half the shingles
//! (docs/EVALUATION.md measures both). A combining mark stays with the term before it
//! (an accent typed apart, a variation selector after an ideograph), and one after a
//! separator is one, so that no term splits a grapheme cluster. Latin text gives the
//! same terms under both rules but for such marks.
//!
//! Invariants: spans are byte offsets into the text given, `start < end`, terms are in
//! text order and do not overlap. Pure: no I/O.

use unicode_normalization::char::is_combining_mark;

use crate::rabin::Rabin;
pub use crate::terms::Terms;

/// Whether `c` is a term of its own under [`Terms::Unicode`]: a Han ideograph (with
/// the iteration marks and Hangzhou numerals).
pub fn stands_alone(c: char) -> bool {
    matches!(c as u32,
        0x3005..=0x3007 // 々 〆 〇
        | 0x3021..=0x3029 // Hangzhou numerals
        | 0x3038..=0x303B
        | 0x3400..=0x4DBF // CJK extension A
        | 0x4E00..=0x9FFF // CJK unified ideographs
        | 0xF900..=0xFAFF // compatibility ideographs
        | 0x20000..=0x3134F // extensions B-H, compatibility supplement
    )
}

/// The script class of a run under [`Terms::Unicode`]: hiragana 1, katakana 2 (full
/// and half width, with the prolonged sound mark), anything else 0. A run ends where
/// the class changes.
pub fn run_class(c: char) -> u8 {
    match c as u32 {
        0x3040..=0x309F => 1,
        0x30A0..=0x30FF | 0x31F0..=0x31FF | 0xFF66..=0xFF9F => 2,
        _ => 0,
    }
}

/// Whether `c` belongs to a script segmented by dictionary under [`Terms::Unicode`]:
/// Thai, Lao, Myanmar (with its extensions) and Khmer (with its symbols).
pub fn by_dictionary(c: char) -> bool {
    matches!(c as u32, 0x0E00..=0x0EFF | 0x1000..=0x109F | 0x1780..=0x17FF | 0x19E0..=0x19FF | 0xA9E0..=0xA9FF | 0xAA60..=0xAA7F)
}

/// The word boundaries of the run `text[start..end]` of [`by_dictionary`] characters,
/// as byte offsets into `text` in order, the last `end`: those that are grapheme
/// cluster boundaries too, the first the first cluster boundary at or after `start`
/// (a vowel sign after a space or a digit belongs to their cluster, and the segmenter
/// would split it off).
fn dictionary_words(text: &str, start: usize, end: usize) -> Vec<usize> {
    use icu_segmenter::{options::WordBreakInvariantOptions, GraphemeClusterSegmenter, WordSegmenter};
    // Clusters from the character before the run, which a leading sign may join.
    let from = text[..start].char_indices().next_back().map_or(start, |(i, _)| i);
    let mut graphemes = GraphemeClusterSegmenter::new()
        .segment_str(&text[from..end])
        .map(|g| from + g)
        .filter(|&g| g >= start)
        .peekable();
    let Some(&first) = graphemes.peek() else { return vec![end] };
    let words = WordSegmenter::new_dictionary(WordBreakInvariantOptions::default()).segment_str(&text[start..end]);
    let mut bounds = vec![first];
    for b in words.map(|w| start + w).filter(|&b| b > first) {
        while graphemes.next_if(|&g| g < b).is_some() {}
        if graphemes.peek() == Some(&b) {
            bounds.push(b);
        }
    }
    bounds
}

/// One term of a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// Byte offset of the first byte of the term.
    pub start: u32,
    /// Byte offset one past the last byte (exclusive).
    pub end: u32,
    /// [`Rabin::token`] of the case-folded term.
    pub fp: u64,
}

/// For ASCII bytes: 0 for a separator, else the lower-cased byte.
const ASCII_TERM: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        t[b] = if c.is_ascii_digit() || c.is_ascii_lowercase() {
            c
        } else if c.is_ascii_uppercase() {
            c + 32
        } else {
            0
        };
        b += 1;
    }
    t
};

/// Splits `text` into terms. Texts longer than `u32::MAX` bytes are rejected by the
/// caller (input limits are far below that).
pub fn tokenize(text: &str, rabin: &Rabin, out: &mut Vec<Token>) {
    out.clear();
    let bytes = text.as_bytes();
    debug_assert!(u32::try_from(bytes.len()).is_ok());
    let unicode = rabin.terms() == Terms::Unicode;
    // The term being read: its start, fingerprint so far, whether it holds a character
    // that is not ASCII (under `Unicode` its fingerprint is then taken of its NFKC
    // form), and its script class (`run_class`, 3 for an ideograph; always 0 under
    // `Words`).
    let mut term: Option<(usize, u64, bool, u8)> = None;
    let finish = |term: Option<(usize, u64, bool, u8)>, end: usize, out: &mut Vec<Token>| {
        if let Some((start, f, wide, _)) = term {
            let fp = if unicode && wide { folded_fp(&text[start..end], rabin) } else { rabin.token_finish(f) };
            out.push(Token { start: start as u32, end: end as u32, fp });
        }
    };
    let mut utf8 = [0u8; 4];
    let mut i = 0usize;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 128 {
            let lower = ASCII_TERM[b as usize];
            if lower == 0 {
                finish(term.take(), i, out);
            } else {
                if term.is_some_and(|t| t.3 != 0) {
                    // A kana run ends where Latin begins.
                    finish(term.take(), i, out);
                }
                let t = term.get_or_insert((i, rabin.token_start(), false, 0));
                t.1 = rabin.token_push(t.1, lower);
            }
            i += 1;
            continue;
        }
        // Non-ASCII: decode one character (i is on a char boundary).
        let c = text[i..].chars().next().expect("char boundary");
        let end = i + c.len_utf8();
        if unicode && is_combining_mark(c) {
            // A mark stays with the term it follows (an accent typed apart, a variation
            // selector after an ideograph), and one after a separator is one: a term
            // never splits a grapheme cluster.
            if let Some(t) = term.as_mut() {
                t.2 = true;
            }
            i = end;
            continue;
        }
        if unicode && by_dictionary(c) {
            // A run of Thai, Lao, Khmer or Burmese: its dictionary words are the terms.
            finish(term.take(), i, out);
            let run_end =
                text[i..].find(|c: char| !by_dictionary(c) && !is_combining_mark(c)).map_or(bytes.len(), |n| i + n);
            let bounds = dictionary_words(text, i, run_end);
            // Signs before the first cluster boundary join the term just before them.
            if let Some(last) = out.last_mut().filter(|t| t.end as usize == i && bounds[0] > i) {
                last.end = bounds[0] as u32;
                last.fp = folded_fp(&text[last.start as usize..bounds[0]], rabin);
            }
            for w in bounds.windows(2) {
                let word = &text[w[0]..w[1]];
                if word.chars().any(char::is_alphanumeric) {
                    out.push(Token { start: w[0] as u32, end: w[1] as u32, fp: folded_fp(word, rabin) });
                }
            }
            i = run_end;
            continue;
        }
        if !c.is_alphanumeric() {
            finish(term.take(), i, out);
        } else if unicode && stands_alone(c) {
            // A term of its own (class 3: whatever follows ends it, but a mark): the run
            // before it ends here. An ideograph is its own NFKC form but for the
            // compatibility ones.
            finish(term.take(), i, out);
            let compatibility = matches!(c as u32, 0xF900..=0xFAFF | 0x2F800..=0x2FA1F);
            let f = c.encode_utf8(&mut utf8).bytes().fold(rabin.token_start(), |f, b| rabin.token_push(f, b));
            term = Some((i, f, compatibility, 3));
        } else {
            let class = if unicode { run_class(c) } else { 0 };
            if term.is_some_and(|t| t.3 != class) {
                finish(term.take(), i, out);
            }
            let t = term.get_or_insert((i, rabin.token_start(), true, class));
            t.2 = true;
            // (Under `Unicode` such a term is fingerprinted of its NFKC form when it
            // ends: nothing to roll here.)
            if !unicode {
                for lc in c.to_lowercase() {
                    for &ub in lc.encode_utf8(&mut utf8).as_bytes() {
                        t.1 = rabin.token_push(t.1, ub);
                    }
                }
            }
        }
        i = end;
    }
    finish(term.take(), bytes.len(), out);
}

/// The fingerprint of a term under [`Terms::Unicode`]: of its NFKC form, lower-cased,
/// so that the same text typed two ways (full- and half-width forms, compatibility
/// ideographs, ligatures) is the same term. A pure-ASCII term is its own NFKC form, and
/// takes the fast path instead.
fn folded_fp(term: &str, rabin: &Rabin) -> u64 {
    use unicode_normalization::UnicodeNormalization;
    let mut utf8 = [0u8; 4];
    let mut f = rabin.token_start();
    for c in term.nfkc().flat_map(char::to_lowercase) {
        for &b in c.encode_utf8(&mut utf8).as_bytes() {
            f = rabin.token_push(f, b);
        }
    }
    rabin.token_finish(f)
}

/// The xxh3-128 of `tokens`' fingerprints, in order: the same for two texts whose
/// terms are the same, whatever their case, punctuation and spacing. What an exact
/// copy of an earlier document is found by (the store's `exact` records).
pub fn tokens_hash(tokens: &[Token]) -> u128 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for t in tokens {
        h.update(&t.fp.to_le_bytes());
    }
    h.digest128()
}

/// Whether [`tokenize`] finds a term in `text` under `terms`, without keeping them: an
/// ASCII letter or digit always makes one; otherwise the text is tokenized (a lone
/// combining mark, a sign of Thai, makes none under `Unicode`).
pub fn has_terms(text: &str, terms: Terms) -> bool {
    if text.bytes().any(|b| b.is_ascii_alphanumeric()) {
        return true;
    }
    let mut out = Vec::new();
    tokenize(text, &Rabin::new(1).with_terms(terms), &mut out);
    !out.is_empty()
}

/// The case-folded form of a term, as fingerprinted (for display and tests).
pub fn fold(term: &str) -> String {
    term.chars().flat_map(char::to_lowercase).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn terms(text: &str) -> Vec<&str> {
        let r = Rabin::new(8);
        let mut t = Vec::new();
        tokenize(text, &r, &mut t);
        t.iter().map(|t| &text[t.start as usize..t.end as usize]).collect()
    }

    fn unicode_terms(text: &str) -> Vec<&str> {
        let r = Rabin::new(8).with_terms(Terms::Unicode);
        let mut t = Vec::new();
        tokenize(text, &r, &mut t);
        t.iter().map(|t| &text[t.start as usize..t.end as usize]).collect()
    }

    /// Issue 33: a Chinese or Japanese sentence was one term; each ideograph and kana is
    /// one now, beside Latin words and numbers, and Korean keeps its words.
    #[test]
    fn each_ideograph_and_kana_is_a_term() {
        assert_eq!(
            unicode_terms("旧港大桥周一重新通车。"),
            ["旧", "港", "大", "桥", "周", "一", "重", "新", "通", "车"]
        );
        assert_eq!(terms("旧港大桥周一重新通车。"), ["旧港大桥周一重新通车"], "the rule before");
        assert_eq!(
            unicode_terms("設定ファイルでTableSizeを64MiBにする"),
            ["設", "定", "ファイル", "で", "TableSize", "を", "64MiB", "にする"]
        );
        assert_eq!(unicode_terms("することができます"), ["することができます"], "one hiragana run");
        assert_eq!(unicode_terms("항구 다리가 월요일에 다시 열렸다"), ["항구", "다리가", "월요일에", "다시", "열렸다"]);
        assert_eq!(unicode_terms("ｶﾀｶﾅ と ＡＢＣ"), ["ｶﾀｶﾅ", "と", "ＡＢＣ"]);
        assert_eq!(unicode_terms("データベースdatabaseのテーブル"), ["データベース", "database", "の", "テーブル"]);
        // Latin, Cyrillic, Greek and Arabic text: the same terms and fingerprints under
        // both rules.
        for text in ["The old harbour bridge, 2026.", "Старый мост открыт", "Η γέφυρα", "الجسر القديم"]
        {
            let (a, b) = (Rabin::new(8), Rabin::new(8).with_terms(Terms::Unicode));
            let (mut x, mut y) = (Vec::new(), Vec::new());
            tokenize(text, &a, &mut x);
            tokenize(text, &b, &mut y);
            assert_eq!(x, y, "{text}");
        }
    }

    /// Issue 33: Thai, Lao, Khmer and Burmese are split into dictionary words (their
    /// tone and vowel marks inside the words), beside Latin; under the rule before a
    /// Thai tone mark (not a letter) cut a word in two and a phrase was otherwise one term.
    #[test]
    fn thai_lao_khmer_and_burmese_are_split_by_dictionary() {
        assert_eq!(unicode_terms("ภาษาไทยภาษาไทย"), ["ภาษา", "ไทย", "ภาษา", "ไทย"]);
        assert_eq!(unicode_terms("ทุกสองสัปดาห์ version 2"), ["ทุก", "สอง", "สัปดาห์", "version", "2"]);
        assert_eq!(terms("ทุกสองสัปดาห์"), ["ทุกสองสัปดาห"], "the rule before: the last mark is no letter");
        for text in ["ຂ້ອຍມັກອ່ານປຶ້ມ", "ខ្ញុំចូលចិត្តអានសៀវភៅ", "ကျွန်တော်စာအုပ်ဖတ်ရတာကြိုက်တယ်"]
        {
            let words = unicode_terms(text);
            assert!(words.len() >= 2, "{text}: {words:?}");
            assert_eq!(words.concat(), text);
        }
        // Their digits and punctuation: a number is a term, a sign alone is none.
        assert_eq!(unicode_terms("ราคา ๑๒๐ ฿"), ["ราคา", "๑๒๐"]);
    }

    /// Issue 33: the same text typed two ways is the same term under the Unicode rule:
    /// full-width Latin and digits, half-width katakana (its voiced mark composed),
    /// compatibility ideographs, ligatures; the rule before keeps them apart.
    #[test]
    fn nfkc_forms_are_the_same_terms_under_the_unicode_rule() {
        let fps = |text: &str, terms: Terms| {
            let r = Rabin::new(8).with_terms(terms);
            let mut t = Vec::new();
            tokenize(text, &r, &mut t);
            t.iter().map(|t| t.fp).collect::<Vec<u64>>()
        };
        for (typed, plain) in
            [("ＴａｂｌｅＳｉｚｅ ６４", "tablesize 64"), ("ｶﾞｲﾄﾞ", "ガイド"), ("\u{f900}", "\u{8c48}"), ("ﬁle", "file")]
        {
            assert_eq!(fps(typed, Terms::Unicode), fps(plain, Terms::Unicode), "{typed}");
            assert_ne!(fps(typed, Terms::Words), fps(plain, Terms::Words), "{typed}: the rule before");
        }
    }

    proptest! {
        /// Tokenizing the NFKC form of a text gives the fingerprints of the original,
        /// for texts of letters, digits and the forms NFKC folds.
        #[test]
        fn the_nfkc_form_gives_the_same_fingerprints(text in "[a-zA-Z0-9 \u{ff21}-\u{ff3a}\u{ff10}-\u{ff19}\u{ff66}-\u{ff9d}\u{30a2}-\u{30f3}\u{4e00}-\u{4e20}\u{f900}-\u{f910}]{0,30}") {
            use unicode_normalization::UnicodeNormalization;
            let r = Rabin::new(8).with_terms(Terms::Unicode);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            tokenize(&text, &r, &mut a);
            let normal: String = text.nfkc().collect();
            tokenize(&normal, &r, &mut b);
            prop_assert_eq!(a.iter().map(|t| t.fp).collect::<Vec<_>>(), b.iter().map(|t| t.fp).collect::<Vec<_>>());
        }

        /// Terms under the Unicode rule cover exactly the alphanumeric characters (with
        /// the marks that follow them), on character boundaries, in order, each
        /// standing-alone character alone.
        #[test]
        fn unicode_terms_are_char_spans_of_the_alphanumerics(text in "[a-zA-Z0-9 .,、。\u{4e00}-\u{4e20}\u{3041}-\u{3050}\u{30a1}-\u{30b0}\u{ac00}-\u{ac10}\u{0301}]{0,40}") {
            let r = Rabin::new(8).with_terms(Terms::Unicode);
            let mut t = Vec::new();
            tokenize(&text, &r, &mut t);
            let mut covered = 0;
            let mut last = 0;
            for tok in &t {
                let (s, e) = (tok.start as usize, tok.end as usize);
                prop_assert!(s >= last && s < e && text.is_char_boundary(s) && text.is_char_boundary(e));
                let term = &text[s..e];
                prop_assert!(term.chars().all(|c| c.is_alphanumeric() || is_combining_mark(c)));
                prop_assert!(!is_combining_mark(term.chars().next().unwrap()));
                let letters: Vec<char> = term.chars().filter(|c| !is_combining_mark(*c)).collect();
                prop_assert!(letters.len() == 1 || !letters.iter().copied().any(stands_alone), "{term}");
                prop_assert!(letters.iter().all(|&c| run_class(c) == run_class(letters[0])), "one script class: {term}");
                covered += letters.len();
                last = e;
            }
            prop_assert_eq!(covered, text.chars().filter(|c| c.is_alphanumeric()).count());
        }
    }

    proptest! {
        /// `has_terms` says what tokenizing says, under both rules, of text mixing
        /// Latin, accents, lone combining marks, Thai and its signs, ideographs and
        /// separators.
        #[test]
        fn has_terms_is_whether_tokenize_finds_one(text in "([a-z0-9]|[\u{0300}-\u{036f}]|[\u{0e01}-\u{0e5b}]|[\u{4e00}-\u{4e10}]|[\u{00e0}-\u{00ff}]|[ .,!\u{00a0}-\u{00bf}]){0,12}") {
            for terms in [Terms::Words, Terms::Unicode] {
                let mut t = Vec::new();
                tokenize(&text, &Rabin::new(1).with_terms(terms), &mut t);
                prop_assert_eq!(has_terms(&text, terms), !t.is_empty(), "{:?} under {:?}", text, terms);
            }
        }
    }

    proptest! {
        /// Terms of text mixing Thai and Latin: on grapheme cluster boundaries (a tone
        /// mark stays with its letter), in order, each with a letter or digit, and every
        /// grapheme cluster that begins with a letter or digit (not a lone mark) in a
        /// term. (Thai marks follow Thai letters, or stand anywhere, as text typed wrong
        /// has them.)
        #[test]
        fn dictionary_terms_keep_grapheme_clusters_whole(text in "([a-z0-9]{1,5} ?|[\u{0e01}-\u{0e2e}\u{0e40}-\u{0e44}][\u{0e30}-\u{0e3a}\u{0e47}-\u{0e4e}]{0,2}|[\u{0e30}-\u{0e3a}\u{0e47}-\u{0e59}]|[ .]){0,30}") {
            use icu_segmenter::GraphemeClusterSegmenter;
            let starts_word = |rest: &str| rest.chars().next().is_some_and(|c| c.is_alphanumeric() && !is_combining_mark(c));
            let graphemes: Vec<usize> = GraphemeClusterSegmenter::new().segment_str(&text).collect();
            let r = Rabin::new(8).with_terms(Terms::Unicode);
            let mut t = Vec::new();
            tokenize(&text, &r, &mut t);
            let mut last = 0;
            let mut covered = 0;
            for tok in &t {
                let (s, e) = (tok.start as usize, tok.end as usize);
                prop_assert!(s >= last && s < e);
                prop_assert!(graphemes.contains(&s) && graphemes.contains(&e), "{:?} splits a cluster", &text[s..e]);
                prop_assert!(text[s..e].chars().any(char::is_alphanumeric));
                covered += graphemes.iter().filter(|&&g| g >= s && g < e && starts_word(&text[g..])).count();
                last = e;
            }
            prop_assert_eq!(covered, graphemes.iter().filter(|&&g| starts_word(&text[g..])).count());
        }
    }

    #[test]
    fn splits_on_non_alphanumerics() {
        assert_eq!(terms("Hello, world! It's 2026-11-25."), ["Hello", "world", "It", "s", "2026", "11", "25"]);
        assert_eq!(terms(""), Vec::<&str>::new());
        assert_eq!(terms("  ...  "), Vec::<&str>::new());
    }

    #[test]
    fn unicode_letters_and_case_folding() {
        assert_eq!(terms("Zürich ΣΟΦΙΑ 東京タワー x²"), ["Zürich", "ΣΟΦΙΑ", "東京タワー", "x²"]);
        let r = Rabin::new(8);
        let mut a = Vec::new();
        let mut b = Vec::new();
        tokenize("ZÜRICH Straße", &r, &mut a);
        tokenize("zürich STRASSE", &r, &mut b);
        assert_eq!(a[0].fp, b[0].fp, "Ü folds to ü");
        assert_ne!(a[1].fp, b[1].fp, "to_lowercase keeps ß distinct from ss");
    }

    #[test]
    fn fingerprint_is_token_of_folded_term() {
        let r = Rabin::new(8);
        let mut t = Vec::new();
        tokenize("The QUICK Äpfel", &r, &mut t);
        for (tok, word) in t.iter().zip(["the", "quick", "äpfel"]) {
            assert_eq!(tok.fp, r.token(word.as_bytes()));
        }
    }

    proptest! {
        #[test]
        fn spans_cover_exactly_the_alphanumerics(text in "\\PC{0,80}") {
            let r = Rabin::new(8);
            let mut toks = Vec::new();
            tokenize(&text, &r, &mut toks);
            let mut expected = Vec::new();
            let mut cur: Option<(usize, String)> = None;
            for (i, c) in text.char_indices() {
                if c.is_alphanumeric() {
                    cur.get_or_insert((i, String::new())).1.push(c);
                } else if let Some((s, w)) = cur.take() {
                    expected.push((s, i, fold(&w)));
                }
            }
            if let Some((s, w)) = cur.take() { expected.push((s, text.len(), fold(&w))); }
            prop_assert_eq!(toks.len(), expected.len());
            for (t, (s, e, w)) in toks.iter().zip(expected) {
                prop_assert_eq!((t.start as usize, t.end as usize), (s, e));
                prop_assert_eq!(t.fp, r.token(w.as_bytes()));
            }
        }
    }
}
