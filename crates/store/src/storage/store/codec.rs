//! The one codec of the store: every value is a version byte followed by postcard
//! (bincode is unmaintained, RUSTSEC-2025-0141); keys that hold sequence numbers are
//! big-endian so that RocksDB's byte order is sequence order; counters are little-endian.

use serde::de::DeserializeOwned;
use serde::Serialize;
use textorigin_core::engine::DocResult;

/// Version byte in front of every value.
pub(super) const VALUE_VERSION: u8 = 1;

/// A value: the version byte, then postcard.
pub(crate) fn encode<T: Serialize>(v: &T) -> Vec<u8> {
    let mut out = vec![VALUE_VERSION];
    out.extend(postcard::to_allocvec(v).expect("postcard encoding of owned data cannot fail"));
    out
}

/// Decodes a value written by [`encode`]; the error says why it is corrupt.
pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    match bytes.split_first() {
        Some((&VALUE_VERSION, rest)) => postcard::from_bytes(rest).map_err(|e| e.to_string()),
        Some((v, _)) => Err(format!("unknown value version {v}")),
        None => Err("empty value".into()),
    }
}

/// Decodes the start of a value written by [`encode`] followed by more bytes; returns
/// the value and those bytes.
pub(super) fn decode_with_tail<T: DeserializeOwned>(bytes: &[u8]) -> Result<(T, &[u8]), String> {
    match bytes.split_first() {
        Some((&VALUE_VERSION, rest)) => postcard::take_from_bytes(rest).map_err(|e| e.to_string()),
        Some((v, _)) => Err(format!("unknown value version {v}")),
        None => Err("empty value".into()),
    }
}

/// A document's result: [`encode`], then, when it was selected at a density threshold
/// (schema 17), that threshold as one byte. A value without it (every
/// result stored before, and those selected as the paper does) reads as none: earlier
/// builds read the value and ignore the byte (postcard reads what it needs). When the
/// result says something beside its blocks (the passages, schema 20), the tail
/// is [`PASSAGES`], the threshold byte or [`NO_DENSITY`], then the passages (postcard):
/// a tail of one byte is a threshold alone, as before.
pub(super) fn encode_result(r: &DocResult) -> Vec<u8> {
    let mut v = encode(r);
    push_result_tail(&mut v, r);
    v
}

/// What a result keeps behind its value ([`encode_result`]; a revision's result before
/// behind the revision).
pub(super) fn push_result_tail(v: &mut Vec<u8>, r: &DocResult) {
    if r.passages.is_empty() {
        v.extend(r.density);
    } else {
        v.push(PASSAGES);
        v.push(r.density.unwrap_or(NO_DENSITY));
        v.extend(postcard::to_allocvec(&r.passages).expect("passages encode"));
    }
}

/// Reads what [`push_result_tail`] wrote into `r`.
pub(super) fn read_result_tail(r: &mut DocResult, tail: &[u8]) -> Result<(), String> {
    match tail {
        [PASSAGES, density, rest @ ..] => {
            r.density = (*density != NO_DENSITY).then_some(*density);
            r.passages = postcard::from_bytes(rest).map_err(|e| format!("the result's passages: {e}"))?;
        }
        _ => r.density = density_byte(tail)?,
    }
    Ok(())
}

/// The first byte of a result's tail that holds passages ([`encode_result`]): no
/// density threshold is this large.
const PASSAGES: u8 = 0xFE;
/// No density threshold, in a tail with passages.
const NO_DENSITY: u8 = 0xFF;

/// Decodes a value written by [`encode_result`].
pub(super) fn decode_result(bytes: &[u8]) -> Result<DocResult, String> {
    let (mut r, tail) = decode_with_tail::<DocResult>(bytes)?;
    read_result_tail(&mut r, tail)?;
    Ok(r)
}

/// The density threshold behind a result ([`encode_result`]): none for no byte.
fn density_byte(tail: &[u8]) -> Result<Option<u8>, String> {
    match tail {
        [] => Ok(None),
        [t] if *t < textorigin_core::select::FLOOR => Ok(Some(*t)),
        _ => Err(format!("{} bytes after the result, not a density threshold", tail.len())),
    }
}

/// The revisions a cause made, as a partition records them (each revised document with
/// its result after and before, each whole as [`encode_result`] writes it: the serde
/// form leaves out the density threshold and the passages; read by [`decode_made`]).
pub(super) fn encode_made(made: &[(u64, &DocResult, &DocResult)]) -> Vec<u8> {
    let whole: Vec<(u64, Vec<u8>, Vec<u8>)> =
        made.iter().map(|&(seq, after, before)| (seq, encode_result(after), encode_result(before))).collect();
    encode(&whole)
}

/// Reads what [`encode_made`] wrote.
pub(super) fn decode_made(bytes: &[u8]) -> Result<Vec<(u64, DocResult, DocResult)>, String> {
    let whole: Vec<(u64, Vec<u8>, Vec<u8>)> = decode(bytes)?;
    whole.into_iter().map(|(seq, after, before)| Ok((seq, decode_result(&after)?, decode_result(&before)?))).collect()
}

/// A text value: the version byte, then UTF-8.
pub(super) fn encode_text(text: &str) -> Vec<u8> {
    let mut t = Vec::with_capacity(text.len() + 1);
    t.push(VALUE_VERSION);
    t.extend_from_slice(text.as_bytes());
    t
}

/// Decodes a value written by [`encode_text`].
pub(super) fn decode_text(bytes: &[u8]) -> Result<String, String> {
    match bytes.split_first() {
        Some((&VALUE_VERSION, rest)) => String::from_utf8(rest.to_vec()).map_err(|e| e.to_string()),
        _ => Err("bad version byte".into()),
    }
}

/// The key of a sequence number.
pub(crate) fn seq_key(seq: u64) -> [u8; 8] {
    seq.to_be_bytes()
}

/// A little-endian u64 value (counters), if it is one.
pub(super) fn le_u64(v: &[u8]) -> Option<u64> {
    v.try_into().ok().map(u64::from_le_bytes)
}

/// A big-endian u64 at `at` of a key.
pub(crate) fn be_u64(k: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(k[at..at + 8].try_into().expect("key layout"))
}

/// The key of a pair of documents: both sequence numbers, big-endian (a prefix scan on
/// the first finds its pairs, by the second: [`super::Store::pairs`]).
pub(super) fn pair_key(a: u64, b: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&seq_key(a));
    k[8..].copy_from_slice(&seq_key(b));
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_carry_their_version() {
        let v = encode(&(7u32, "x".to_string()));
        assert_eq!(v[0], VALUE_VERSION);
        assert_eq!(decode::<(u32, String)>(&v).unwrap(), (7, "x".to_string()));
        assert!(decode::<u32>(&[9, 1]).unwrap_err().contains("unknown value version 9"));
        assert!(decode::<u32>(&[]).is_err());
        assert_eq!(decode_text(&encode_text("héllo")).unwrap(), "héllo");
        assert!(decode_text(&[2, b'a']).is_err());
    }

    #[test]
    fn a_results_density_rides_behind_it_and_the_papers_results_are_as_before() {
        let paper = DocResult { seq: 3, tokens: 9, ..DocResult::default() };
        assert_eq!(encode_result(&paper), encode(&paper), "no byte for the selection alone");
        assert_eq!(decode_result(&encode(&paper)).unwrap(), paper, "a result stored before reads as none");
        let dense = DocResult { density: Some(2), ..paper.clone() };
        assert_eq!(decode_result(&encode_result(&dense)).unwrap(), dense);
        let mut bad = encode(&paper);
        bad.push(textorigin_core::select::FLOOR);
        assert!(decode_result(&bad).is_err());
        bad.push(0);
        assert!(decode_result(&bad).is_err());
    }

    /// The revisions a cause made, as a partition records them for its outcome's resending,
    /// keep each result whole: the density threshold and the passages (their "also earlier"
    /// sources), which the serde form leaves out and the plain encoding lost (a partition
    /// restarted after storing a cause sent its revisions without them: seen as a revised
    /// document without its threshold or `also_earlier` in the chaos test).
    #[test]
    fn the_revisions_a_cause_made_keep_their_results_whole() {
        use textorigin_core::align::{AlsoEarlier, Passages};
        let passages =
            Passages { also_earlier: vec![AlsoEarlier { origin: 4, start_token: 3, end_token: 11 }], edits: vec![] };
        let after = DocResult { seq: 9, tokens: 20, density: Some(2), passages, ..DocResult::default() };
        let before = DocResult { seq: 9, tokens: 20, density: Some(2), ..DocResult::default() };
        let plain = DocResult { seq: 5, ..DocResult::default() };
        let made = [(9, &after, &before), (5, &plain, &plain)];
        let back = decode_made(&encode_made(&made)).unwrap();
        let want: Vec<(u64, DocResult, DocResult)> = made.iter().map(|&(s, a, b)| (s, a.clone(), b.clone())).collect();
        assert_eq!(back, want);
    }

    /// Issue 54: passages ride behind the result, with or without a density threshold;
    /// a result without them is written as before.
    #[test]
    fn a_results_passages_ride_behind_it() {
        use textorigin_core::align::{AlsoEarlier, Passages};
        let passages = Passages {
            also_earlier: vec![AlsoEarlier { origin: 4, start_token: 3, end_token: 11 }],
            edits: vec![5, 13],
        };
        for density in [None, Some(2)] {
            let r = DocResult { seq: 9, tokens: 20, density, passages: passages.clone(), ..DocResult::default() };
            assert_eq!(decode_result(&encode_result(&r)).unwrap(), r);
            let plain = DocResult { passages: Passages::default(), ..r };
            assert_eq!(encode_result(&plain).len(), encode(&plain).len() + usize::from(density.is_some()));
        }
    }
}
