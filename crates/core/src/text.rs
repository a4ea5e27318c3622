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
//! Invariants: spans are byte offsets into the text given, `start < end`, terms are in
//! text order and do not overlap. Pure: no I/O.

use crate::rabin::Rabin;

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
    let mut i = 0usize;
    let mut start = 0usize;
    let mut f = 0u64;
    let mut in_term = false;
    let mut utf8 = [0u8; 4];
    while i < bytes.len() {
        let b = bytes[i];
        if b < 128 {
            let lower = ASCII_TERM[b as usize];
            if lower != 0 {
                if !in_term {
                    in_term = true;
                    start = i;
                    f = rabin.token_start();
                }
                f = rabin.token_push(f, lower);
            } else if in_term {
                in_term = false;
                out.push(Token { start: start as u32, end: i as u32, fp: rabin.token_finish(f) });
            }
            i += 1;
            continue;
        }
        // Non-ASCII: decode one character (i is on a char boundary).
        let c = text[i..].chars().next().expect("char boundary");
        if c.is_alphanumeric() {
            if !in_term {
                in_term = true;
                start = i;
                f = rabin.token_start();
            }
            for lc in c.to_lowercase() {
                for &ub in lc.encode_utf8(&mut utf8).as_bytes() {
                    f = rabin.token_push(f, ub);
                }
            }
        } else if in_term {
            in_term = false;
            out.push(Token { start: start as u32, end: i as u32, fp: rabin.token_finish(f) });
        }
        i += c.len_utf8();
    }
    if in_term {
        out.push(Token { start: start as u32, end: bytes.len() as u32, fp: rabin.token_finish(f) });
    }
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
