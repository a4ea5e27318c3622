//! Sentence splitting (the rules are in the module documentation of [`super`]).

use crate::text::{Terms, Token};

use super::Sentence;

const ABBREVIATIONS: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "eg", "ie", "inc", "ltd", "co",
    "corp", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "no", "nos", "fig",
    "al", "approx", "dept", "est", "gov", "gen", "col", "lt", "sgt", "rep", "sen", "rev", "u.s", "u.k", "a.m", "p.m",
    "vol", "pp", "ca",
];

fn is_closer(c: char) -> bool {
    matches!(c, '"' | '\'' | '”' | '’' | ')' | ']' | '»')
}

/// A full stop that ends a sentence wherever it stands, under [`Terms::Unicode`]: the
/// ideographic ones (Chinese and Japanese write no space after them, and no capital
/// follows), the Devanagari dandas, the Arabic question mark and the Urdu full stop,
/// the Armenian full stop, the Ethiopic full stop and question marks, the Khmer khan
/// and bariyoosan and the Burmese section mark (the full stops of UAX #29's sentence
/// rules that need no space after them).
fn is_hard_end(c: char) -> bool {
    matches!(c, '。' | '！' | '？' | '｡' | '।' | '॥' | '؟' | '۔' | '։' | '።' | '፧' | '፨' | '។' | '៕' | '။')
}

/// A character a line may end with inside a sentence or at its end: a line ending with
/// none of these, shorter than the next, is a headline, a title or a list item.
fn continues_or_ends(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | ',' | ';' | ':' | '-' | '–' | '—' | '，' | '、' | '；' | '：' | '…' | '(' | '[')
        || is_hard_end(c)
        || is_hard_closer(c)
}

/// Whether the text's first line break, at byte `nl`, ends a sentence under
/// [`Terms::Unicode`] though no punctuation does (a news article's headline
/// and its first sentence were one "sentence"): the first line ends with none of
/// [`continues_or_ends`], the next line starts as a sentence does (a capital, a digit,
/// an opening quote, or a letter of a script without case) and is longer by a quarter
/// at least. Hard-wrapped prose keeps its sentences whole: its lines are about as long
/// as the next, or end with punctuation, or the next starts in lower case.
fn headline_ends_at(text: &str, nl: usize) -> bool {
    let line = text[..nl].trim();
    let next = text[nl + 1..].split('\n').next().unwrap_or("").trim();
    let (Some(last), Some(first)) = (line.chars().next_back(), next.chars().next()) else { return false };
    let starts = first.is_uppercase()
        || first.is_numeric()
        || is_opener(first)
        || (first.is_alphabetic() && !first.is_lowercase() && !first.is_uppercase());
    starts && !continues_or_ends(last) && line.chars().count() * 5 <= next.chars().count() * 4
}

/// Whether the space at byte `i` ends a Thai sentence under [`Terms::Unicode`]: Thai
/// has no full stop and writes a space between sentences (and clauses), none between
/// words.
fn thai_space_at(text: &str, i: usize) -> bool {
    let thai = |c: char| matches!(c as u32, 0x0E01..=0x0E5B);
    text[..i].chars().next_back().is_some_and(thai) && text[i + 1..].chars().next().is_some_and(thai)
}

/// A closing bracket or quotation mark that stays with the sentence it ends (the
/// ideographic ones too).
fn is_hard_closer(c: char) -> bool {
    is_closer(c) || matches!(c, '」' | '』' | '）' | '】' | '〉' | '》' | '〕' | '］' | '｣')
}

fn is_opener(c: char) -> bool {
    matches!(c, '"' | '\'' | '“' | '‘' | '(' | '[' | '«')
}

/// Whether the line starting at byte `i` begins a list item.
fn list_item_at(text: &str, i: usize) -> bool {
    let line = text[i..].trim_start_matches([' ', '\t']);
    let mut chars = line.chars();
    match chars.next() {
        Some('-' | '*' | '•' | '–') => chars.next().is_some_and(char::is_whitespace),
        Some(c) if c.is_ascii_digit() => {
            let rest = line.trim_start_matches(|c: char| c.is_ascii_digit());
            let mut r = rest.chars();
            matches!(r.next(), Some('.' | ')')) && r.next().is_some_and(char::is_whitespace)
        }
        _ => false,
    }
}

/// The word (letters and periods) just before byte `end`, lower-cased.
fn word_before(text: &str, end: usize) -> String {
    let start = text[..end]
        .rfind(|c: char| !(c.is_alphanumeric() || c == '.'))
        .map_or(0, |i| i + text[i..].chars().next().map_or(1, char::len_utf8));
    text[start..end].trim_start_matches('.').to_lowercase()
}

/// Sentence boundaries of `text` as byte spans (trimmed, non-empty); under
/// [`Terms::Unicode`] `。！？` and their kin end a sentence too (`is_hard_end`), as do
/// the line break after a headline or title on the first line (`headline_ends_at`)
/// and a space between Thai sentences.
pub fn sentence_spans(text: &str, terms: Terms) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = 0usize;
    let push = |s: usize, e: usize, spans: &mut Vec<(usize, usize)>| {
        let seg = &text[s..e];
        let lead = seg.len() - seg.trim_start().len();
        let trimmed = seg.trim();
        if !trimmed.is_empty() {
            spans.push((s + lead, s + lead + trimmed.len()));
        }
    };
    // A forward cursor over byte offsets (no per-character array: a 40 MiB text must
    // not take 16 bytes a character).
    let at = |b: usize| text[b..].chars().next();
    let unicode = terms == Terms::Unicode;
    let mut i = 0usize;
    let mut first_line = true;
    while let Some(c) = at(i) {
        if c == '\n' {
            // Blank line or a list item on the next line ends the sentence, and under
            // the Unicode rule a first line that is a headline or a title (a line inside
            // the text that ends without punctuation is mostly a mail header, an
            // address, a signature: hard-wrapped text keeps them as before).
            let next_line = i + 1;
            let blank =
                text[next_line..].split('\n').next().is_some_and(|l| l.trim().is_empty()) && next_line < text.len();
            if blank
                || (next_line < text.len() && list_item_at(text, next_line))
                || (unicode && first_line && headline_ends_at(text, i))
            {
                push(start, i, &mut spans);
                start = next_line;
            }
            first_line = false;
            i += 1;
            continue;
        }
        if unicode && c == ' ' && thai_space_at(text, i) {
            push(start, i, &mut spans);
            start = i + 1;
            i += 1;
            continue;
        }
        if unicode && is_hard_end(c) {
            let mut j = i + c.len_utf8();
            while let Some(d) = at(j).filter(|&d| is_hard_end(d) || is_hard_closer(d)) {
                j += d.len_utf8();
            }
            push(start, j, &mut spans);
            start = j;
            i = j;
            continue;
        }
        if matches!(c, '.' | '!' | '?') {
            // Run of terminal punctuation and closers.
            let mut j = i + c.len_utf8();
            while let Some(d) = at(j).filter(|&d| matches!(d, '.' | '!' | '?') || is_closer(d)) {
                j += d.len_utf8();
            }
            let end = j;
            let followed_by_space = at(j).is_none_or(char::is_whitespace);
            if !followed_by_space {
                i = j;
                continue;
            }
            let mut n = j;
            while let Some(d) = at(n).filter(|&d| d.is_whitespace() && d != '\n') {
                n += d.len_utf8();
            }
            let next = at(n);
            let starts_sentence =
                next.is_none_or(|x| x.is_uppercase() || x.is_ascii_digit() || is_opener(x) || x == '\n');
            let abbreviation = c == '.' && j == i + 1 && {
                let w = word_before(text, i);
                ABBREVIATIONS.contains(&w.as_str()) || (w.chars().count() == 1 && w.chars().all(char::is_alphabetic))
            };
            if starts_sentence && !abbreviation {
                push(start, end, &mut spans);
                start = end;
            }
            i = j;
            continue;
        }
        i += c.len_utf8();
    }
    push(start, text.len(), &mut spans);
    spans
}

/// Whether `c` between two terms ends a clause: a comma, colon, semicolon, dash,
/// bracket, quotation mark, a stop that ends no sentence (`said.-`, `."?`) or a line
/// break, and the ideographic ones.
fn is_clause_break(c: char) -> bool {
    matches!(
        c,
        ',' | ';'
            | ':'
            | '('
            | ')'
            | '['
            | ']'
            | '"'
            | '“'
            | '”'
            | '«'
            | '»'
            | '—'
            | '–'
            | '-'
            | '.'
            | '!'
            | '?'
            | '\n'
            | '，'
            | '、'
            | '；'
            | '：'
            | '「'
            | '」'
            | '『'
            | '』'
            | '（'
            | '）'
    )
}

/// Sentences of a tokenized text with their distinct words (`terms`: the rule the text
/// was tokenized by).
pub fn sentences(text: &str, tokens: &[Token], terms: Terms) -> Vec<Sentence> {
    split(text, tokens, terms, true)
}

/// [`sentences`] without their clauses (what a search reads of an earlier document's
/// sentences: its clauses were indexed when it came), at less cost.
pub fn sentences_without_clauses(text: &str, tokens: &[Token], terms: Terms) -> Vec<Sentence> {
    split(text, tokens, terms, false)
}

fn split(text: &str, tokens: &[Token], terms: Terms, with_clauses: bool) -> Vec<Sentence> {
    let mut out = Vec::new();
    let mut t = 0;
    for (s, e) in sentence_spans(text, terms) {
        while t < tokens.len() && (tokens[t].start as usize) < s {
            t += 1;
        }
        let mut words = Vec::new();
        let mut clauses: Vec<Vec<u64>> = if with_clauses { vec![Vec::new()] } else { Vec::new() };
        let mut last_end = s;
        while t < tokens.len() && (tokens[t].end as usize) <= e {
            if !with_clauses {
                words.push(tokens[t].fp);
                t += 1;
                continue;
            }
            let gap = &text[last_end..tokens[t].start as usize];
            // (A hyphen or a point inside a word or number, `US-led`, `3.14`, is none.)
            let breaks = gap.contains(is_clause_break) && !matches!(gap, "-" | "." | "'" | "’");
            if breaks && !clauses.last().is_some_and(Vec::is_empty) {
                clauses.push(Vec::new());
            }
            clauses.last_mut().expect("a clause").push(tokens[t].fp);
            words.push(tokens[t].fp);
            last_end = tokens[t].end as usize;
            t += 1;
        }
        words.sort_unstable();
        words.dedup();
        if clauses.len() < 2 {
            clauses.clear();
        }
        for c in &mut clauses {
            c.sort_unstable();
            c.dedup();
        }
        out.push(Sentence { start: s as u32, end: e as u32, words, clauses });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rabin::Rabin;
    use crate::text::tokenize;
    use proptest::prelude::*;

    /// The splitter before it walked a cursor (a `Vec` of every character).
    fn old_sentence_spans(text: &str) -> Vec<(usize, usize)> {
        let mut spans = Vec::new();
        let mut start = 0usize;
        let push = |s: usize, e: usize, spans: &mut Vec<(usize, usize)>| {
            let seg = &text[s..e];
            let lead = seg.len() - seg.trim_start().len();
            let trimmed = seg.trim();
            if !trimmed.is_empty() {
                spans.push((s + lead, s + lead + trimmed.len()));
            }
        };
        let chars: Vec<(usize, char)> = text.char_indices().collect();
        let mut i = 0;
        while i < chars.len() {
            let (at, c) = chars[i];
            if c == '\n' {
                // Blank line or a list item on the next line ends the sentence.
                let next_line = at + 1;
                let blank =
                    text[next_line..].split('\n').next().is_some_and(|l| l.trim().is_empty()) && next_line < text.len();
                if blank || (next_line < text.len() && list_item_at(text, next_line)) {
                    push(start, at, &mut spans);
                    start = next_line;
                }
                i += 1;
                continue;
            }
            if matches!(c, '.' | '!' | '?') {
                // Run of terminal punctuation and closers.
                let mut j = i + 1;
                while j < chars.len() && (matches!(chars[j].1, '.' | '!' | '?') || is_closer(chars[j].1)) {
                    j += 1;
                }
                let end = if j < chars.len() { chars[j].0 } else { text.len() };
                let followed_by_space = j >= chars.len() || chars[j].1.is_whitespace();
                if !followed_by_space {
                    i = j;
                    continue;
                }
                let mut n = j;
                while n < chars.len() && chars[n].1.is_whitespace() && chars[n].1 != '\n' {
                    n += 1;
                }
                let next = chars.get(n).map(|x| x.1);
                let starts_sentence =
                    next.is_none_or(|x| x.is_uppercase() || x.is_ascii_digit() || is_opener(x) || x == '\n');
                let abbreviation = c == '.' && j == i + 1 && {
                    let w = word_before(text, at);
                    ABBREVIATIONS.contains(&w.as_str())
                        || (w.chars().count() == 1 && w.chars().all(char::is_alphabetic))
                };
                if starts_sentence && !abbreviation {
                    push(start, end, &mut spans);
                    start = end;
                }
                i = j;
                continue;
            }
            i += 1;
        }
        push(start, text.len(), &mut spans);
        spans
    }
    fn split(text: &str) -> Vec<&str> {
        sentence_spans(text, Terms::Words).into_iter().map(|(s, e)| &text[s..e]).collect()
    }

    #[test]
    fn splits_sentences_around_abbreviations_decimals_quotes_and_lists() {
        assert_eq!(
            split("Mr. Smith paid $3.50 for it. \"Too much!\" he said. Then he left."),
            ["Mr. Smith paid $3.50 for it.", "\"Too much!\" he said.", "Then he left."]
        );
        assert_eq!(
            split("See J. R. R. Tolkien, e.g. his books. Visit example.com today."),
            ["See J. R. R. Tolkien, e.g. his books.", "Visit example.com today."]
        );
        assert_eq!(split("He asked: \"Why?\" Nobody knew."), ["He asked: \"Why?\"", "Nobody knew."]);
        assert_eq!(
            split("Shopping list:\n- eggs\n- milk and bread\n1. first\n2) second"),
            ["Shopping list:", "- eggs", "- milk and bread", "1. first", "2) second"]
        );
        assert_eq!(
            split("A heading\n\nThe body starts here. It ends here"),
            ["A heading", "The body starts here.", "It ends here"]
        );
        assert_eq!(
            split("The U.S. economy grew. Prices rose 2.5 percent in Jan. and Feb. alone."),
            ["The U.S. economy grew.", "Prices rose 2.5 percent in Jan. and Feb. alone."]
        );
    }

    /// Issue 33: `。！？` ended no sentence, so a Chinese or Japanese paragraph was one
    /// "sentence"; under the Unicode rule they end one wherever they stand, with their
    /// closing brackets, as the dandas and the Arabic question mark do.
    #[test]
    fn ideographic_full_stops_end_sentences_under_the_unicode_rule() {
        let text = "旧港大桥周一重新通车。工程师更换了全部钢缆！「真的吗？」他问道。\n下一段";
        let spans = |terms| sentence_spans(text, terms).into_iter().map(|(s, e)| &text[s..e]).collect::<Vec<_>>();
        assert_eq!(
            spans(Terms::Unicode),
            ["旧港大桥周一重新通车。", "工程师更换了全部钢缆！", "「真的吗？」", "他问道。", "下一段"]
        );
        assert_eq!(spans(Terms::Words), [text], "the rule before: one sentence");
        let hindi = "पुल फिर खुला। लोग खुश हैं।";
        assert_eq!(sentence_spans(hindi, Terms::Unicode).len(), 2);
        // Latin text splits as before.
        let latin = "The bridge reopened. Engineers replaced the cables! Why? Nobody knows.";
        assert_eq!(sentence_spans(latin, Terms::Unicode), sentence_spans(latin, Terms::Words));
        for two in ["ស្ពានបើកវិញ។ មនុស្សសប្បាយចិត្ត។", "Կամուրջը բացվեց։ Մարդիկ ուրախ են։", "ድልድዩ ተከፈተ። ሰዎች ደስ ብሏቸዋል።"]
        {
            assert_eq!(sentence_spans(two, Terms::Unicode).len(), 2, "{two}");
        }
        let thai = "สะพานเปิดแล้ว ผู้คนดีใจมาก";
        assert_eq!(sentence_spans(thai, Terms::Unicode).len(), 2, "a space between Thai sentences");
    }

    /// Issue 34: a sentence's clauses are its words between commas, colons, dashes,
    /// brackets, quotation marks, stops that end no sentence and line breaks; a hyphen or
    /// point inside a word or number splits none, and a sentence of one clause has none.
    #[test]
    fn clauses_split_at_punctuation_inside_a_sentence() {
        let r = Rabin::new(8);
        let clauses = |text: &str| {
            let mut toks = Vec::new();
            tokenize(text, &r, &mut toks);
            let fp = |w: &str| {
                let mut t = Vec::new();
                tokenize(w, &r, &mut t);
                t[0].fp
            };
            let s = sentences(text, &toks, Terms::Words);
            assert_eq!(s.len(), 1, "{text}");
            let want = move |c: &[&str]| {
                let mut w: Vec<u64> = c.iter().map(|w| fp(w)).collect();
                w.sort_unstable();
                w
            };
            (s[0].clauses.clone(), want)
        };
        let (got, want) =
            clauses("\"We are pleased with the US-led results,\" said John Smith (chief of Acme): 3.5 percent.");
        assert_eq!(
            got,
            [
                want(&["we", "are", "pleased", "with", "the", "us", "led", "results"]),
                want(&["said", "john", "smith"]),
                want(&["chief", "of", "acme"]),
                want(&["3", "5", "percent"]),
            ]
        );
        let (got, _) = clauses("A sentence of one clause only.");
        assert!(got.is_empty());
    }

    /// Issue 33: a headline's line break ends a sentence under the Unicode rule, in every
    /// script, so that a later article quoting the first sentence alone finds it; hard-
    /// wrapped prose keeps its sentences (lines as long as the next, or ending with
    /// punctuation, or followed by lower case), and lines after the first are as before.
    #[test]
    fn a_headline_line_ends_a_sentence_under_the_unicode_rule() {
        let split = |text: &str, terms| {
            sentence_spans(text, terms).into_iter().map(|(s, e)| text[s..e].to_string()).collect::<Vec<_>>()
        };
        let news = "Harbour bridge reopens\nThe old harbour bridge reopened on Monday after two years of repairs.";
        assert_eq!(
            split(news, Terms::Unicode),
            ["Harbour bridge reopens", "The old harbour bridge reopened on Monday after two years of repairs."]
        );
        assert_eq!(split(news, Terms::Words).len(), 1, "the rule before");
        let zh = "旧港大桥重新通车\n旧港大桥在经过两年的维修之后于周一重新通车了，市民们都很高兴。";
        assert_eq!(split(zh, Terms::Unicode).len(), 2);
        for wrapped in [
            "The engineers replaced every cable of the bridge, and the city\nCouncil paid for the work out of its reserves.",
            "The engineers replaced every cable of the bridge and the city\ncouncil paid for it.",
            "旧港大桥在经过两年的维修之后于周一重新通车了市民们\n都很高兴工程师更换了全部钢缆。",
            "* tree.c (build_call): Fix the\n\tLeaked reference.",
            "The bridge reopened.\nChris Garrigues\nHarbour Street 200, Austin, TX 78701, USA",
        ] {
            assert_eq!(split(wrapped, Terms::Unicode), split(wrapped, Terms::Words), "{wrapped}");
        }
    }

    proptest! {
        /// The cursor over byte offsets splits exactly as the character array it
        /// replaced (kept below as the reference).
        #[test]
        fn sentence_spans_equal_the_character_array_version(text in "([A-Za-zé€0-9]{1,8}|[ .!?\n\"')(\\[\\]»«“”’‘]|Mr\\.|e\\.g\\.|U\\.S\\.|3\\.14|- |1\\. |\n\n){0,60}") {
            prop_assert_eq!(sentence_spans(&text, Terms::Words), old_sentence_spans(&text));
        }

        #[test]
        fn sentences_partition_the_words(text in "([A-Za-z]{1,8}[ .!?\\n]{1,3}){0,40}") {
            let r = Rabin::new(8);
            let mut toks = Vec::new();
            tokenize(&text, &r, &mut toks);
            let sents = sentences(&text, &toks, Terms::Words);
            let spans = sentence_spans(&text, Terms::Words);
            for w in spans.windows(2) { prop_assert!(w[0].1 <= w[1].0); }
            // Every token lies in exactly one sentence.
            for t in &toks {
                let inside = spans.iter().filter(|(s, e)| *s <= t.start as usize && t.end as usize <= *e).count();
                prop_assert_eq!(inside, 1);
            }
            let total: usize = sents.iter().map(|s| s.words.len()).sum();
            prop_assert!(total <= toks.len());
        }

        /// What a search recomputes of an earlier document (schema 16) is what was
        /// indexed, clauses aside.
        #[test]
        fn sentences_without_clauses_are_the_sentences(text in "([A-Za-z]{1,8}[ .,;:!?\n()\"-]{1,3}){0,40}") {
            let r = Rabin::new(8);
            let mut toks = Vec::new();
            tokenize(&text, &r, &mut toks);
            let want: Vec<Sentence> =
                sentences(&text, &toks, Terms::Words).into_iter().map(|s| Sentence { clauses: Vec::new(), ..s }).collect();
            prop_assert_eq!(sentences_without_clauses(&text, &toks, Terms::Words), want);
        }
    }
}
