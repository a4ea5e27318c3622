//! Compressed input: gzip (one member or several, as `pigz` and bff's inputs are) and
//! Zstandard (one frame or several, skippable frames skipped), decoded as they are read.
//!
//! The kind is told by the magic number; the extension (`.gz`, `.zst`, `.zstd`) only
//! says that the file must be one (a `.gz` that is not gzip is an error, not text).
//! Decoders: flate2 (the rust-lang crate, pure-Rust backend) and ruzstd (pure Rust: the
//! `zstd` crate would rebuild the zstd-sys that RocksDB links with other features,
//! and with it RocksDB's C++).
//!
//! Decoding stops with an error at the [`Limits`]: past `decoded_bytes` in all, or past
//! `ratio` decoded bytes per compressed byte read (beyond [`RATIO_FLOOR`]): an 11 KB
//! zstd file of two million JSON lines is a compression bomb, not a corpus.

use std::io::{BufRead, BufReader, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::{Limits, RATIO_FLOOR};

use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};

/// A compression format of the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    Gzip,
    Zstd,
}

impl Compression {
    /// The format whose magic number `head` starts with (a Zstandard stream may start
    /// with a skippable frame).
    pub fn of(head: &[u8]) -> Option<Compression> {
        match head {
            [0x1f, 0x8b, ..] => Some(Compression::Gzip),
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Some(Compression::Zstd),
            [b, 0x2a, 0x4d, 0x18, ..] if b & 0xf0 == 0x50 => Some(Compression::Zstd),
            _ => None,
        }
    }

    /// The format a file extension names (lower case, without the dot).
    pub fn named(ext: &str) -> Option<Compression> {
        match ext {
            "gz" | "gzip" => Some(Compression::Gzip),
            "zst" | "zstd" => Some(Compression::Zstd),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
        }
    }

    /// The decoded bytes of `reader`, within `limits`; a stream that ends inside a
    /// member or frame reads as an error that says so.
    pub fn decoder<R: Read + Send + 'static>(self, reader: R, limits: Limits) -> Box<dyn Read + Send> {
        let read = Arc::new(AtomicU64::new(0));
        let reader = Counted { inner: reader, read: read.clone() };
        let inner: Box<dyn Read + Send> = match self {
            Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(BufReader::with_capacity(1 << 16, reader))),
            Compression::Zstd => Box::new(ZstdFrames::new(reader)),
        };
        Box::new(Bounded { inner: Clear { inner, kind: self }, kind: self, read, decoded: 0, limits })
    }
}

/// Counts the bytes read through it.
struct Counted<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Stops decoding at the limits (see the module docs).
struct Bounded {
    inner: Clear,
    kind: Compression,
    /// Compressed bytes read so far.
    read: Arc<AtomicU64>,
    decoded: u64,
    limits: Limits,
}

impl Read for Bounded {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.decoded += n as u64;
        let (kind, decoded, limits) = (self.kind.name(), self.decoded, self.limits);
        if limits.decoded_bytes > 0 && decoded > limits.decoded_bytes {
            return Err(std::io::Error::other(format!(
                "the {kind} data decodes to more than {} bytes, over the limit (--max-decoded-bytes); stopped there",
                limits.decoded_bytes
            )));
        }
        let read = self.read.load(Ordering::Relaxed);
        if limits.ratio > 0 && decoded > RATIO_FLOOR.saturating_add(read.saturating_mul(limits.ratio)) {
            return Err(std::io::Error::other(format!(
                "the {kind} data decodes to over {} times its size ({decoded} bytes from {read}: a compression bomb?), over the limit (--max-ratio); stopped there",
                limits.ratio
            )));
        }
        Ok(n)
    }
}

/// Gives the decoders' errors a message a user can act on.
struct Clear {
    inner: Box<dyn Read + Send>,
    kind: Compression,
}

impl Read for Clear {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf).map_err(|e| {
            let what = match e.kind() {
                std::io::ErrorKind::UnexpectedEof => "ends early (a truncated file?)".to_string(),
                _ => format!("is corrupt: {e}"),
            };
            std::io::Error::new(e.kind(), format!("the {} data {what}", self.kind.name()))
        })
    }
}

/// Every frame of a Zstandard stream in turn (ruzstd's streaming decoder reads one).
struct ZstdFrames<R> {
    source: BufReader<R>,
    frame: FrameDecoder,
    /// A frame is being decoded (its header was read).
    in_frame: bool,
}

impl<R: Read> ZstdFrames<R> {
    fn new(reader: R) -> ZstdFrames<R> {
        ZstdFrames { source: BufReader::with_capacity(1 << 16, reader), frame: FrameDecoder::new(), in_frame: false }
    }

    /// Starts the next frame; false at the end of the stream.
    fn next_frame(&mut self) -> std::io::Result<bool> {
        loop {
            if self.source.fill_buf()?.is_empty() {
                return Ok(false);
            }
            match self.frame.reset(&mut self.source) {
                Ok(()) => return Ok(true),
                Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame { length, .. })) => {
                    let skipped = std::io::copy(&mut (&mut self.source).take(u64::from(length)), &mut std::io::sink())?;
                    if skipped < u64::from(length) {
                        return Err(std::io::ErrorKind::UnexpectedEof.into());
                    }
                }
                Err(e) => return Err(frame_error(e)),
            }
        }
    }
}

/// A decoder error as an I/O error: `UnexpectedEof` where the input ended inside a frame
/// (ruzstd wraps that error a few levels deep, not always as a `source`).
fn frame_error(e: FrameDecoderError) -> std::io::Error {
    let mut eof = format!("{e:?}").contains("UnexpectedEof");
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(c) = cause {
        eof |= c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::UnexpectedEof);
        cause = c.source();
    }
    match eof {
        true => std::io::ErrorKind::UnexpectedEof.into(),
        false => std::io::Error::other(e),
    }
}

impl<R: Read> Read for ZstdFrames<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if !self.in_frame {
                if !self.next_frame()? {
                    return Ok(0);
                }
                self.in_frame = true;
            }
            if self.frame.can_collect() > 0 {
                return self.frame.read(buf);
            }
            if self.frame.is_finished() {
                self.in_frame = false;
                continue;
            }
            if self.source.fill_buf()?.is_empty() {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            self.frame
                .decode_blocks(&mut self.source, BlockDecodingStrategy::UptoBytes(buf.len()))
                .map_err(frame_error)?;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::io::Write;

    use proptest::prelude::*;

    use super::super::{parse_bytes, InputError, Limits};
    use super::Compression;

    /// `parts` as the members of one gzip stream.
    pub(crate) fn gzip(parts: &[&[u8]]) -> Vec<u8> {
        parts.iter().fold(Vec::new(), |mut out, part| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(part).unwrap();
            out.extend(e.finish().unwrap());
            out
        })
    }

    /// `parts` as the frames of one Zstandard stream, a skippable frame first.
    pub(crate) fn zstd(parts: &[&[u8]]) -> Vec<u8> {
        let mut out = vec![0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3];
        for part in parts {
            out.extend(ruzstd::encoding::compress_to_vec(*part, ruzstd::encoding::CompressionLevel::Fastest));
        }
        out
    }

    proptest! {
        #[test]
        fn compressed_input_reads_as_its_plain_bytes(bytes in super::super::tests::fragments(), cut in any::<prop::sample::Index>(), ext in prop::sample::select(vec!["jsonl", "txt", "json"])) {
            prop_assume!(Compression::of(&bytes).is_none());
            let plain = parse_bytes(bytes.clone(), ext, "f", "src", 1 << 20);
            let (a, b) = bytes.split_at(cut.index(bytes.len() + 1));
            for packed in [gzip(&[a, b]), zstd(&[a, b])] {
                let named = format!("f.{ext}");
                prop_assert_eq!(&parse_bytes(packed.clone(), "gz", &named, "src", 1 << 20).map_err(|e| e.to_string()), &plain.clone().map_err(|e| e.to_string()));
                // Told by the magic number alone, under the inner name.
                prop_assert_eq!(&parse_bytes(packed, ext, "f", "src", 1 << 20), &plain);
            }
        }
    }

    #[test]
    fn a_truncated_stream_keeps_the_documents_before_it_and_says_so() {
        let lines: String =
            (0..5000).map(|i| format!("{{\"id\": \"d{i}\", \"text\": \"document number {i} has words\"}}\n")).collect();
        for (packed, kind) in [(gzip(&[lines.as_bytes()]), "gzip"), (zstd(&[lines.as_bytes()]), "zstd")] {
            let cut = &packed[..packed.len() - 12];
            let docs = parse_bytes(cut.to_vec(), "gz", "c.jsonl", "c.jsonl.gz", 1 << 20).unwrap();
            let (last, before) = docs.split_last().unwrap();
            assert!(before.iter().all(Result::is_ok), "{kind}: {before:?}");
            assert!(before.len() >= 1000, "{kind}: the documents before the cut are read ({})", before.len());
            match last {
                Err(InputError::Unreadable { file, reason }) => {
                    assert!(file.starts_with("c.jsonl.gz:"), "{file}");
                    assert!(reason.contains(&format!("the {kind} data ends early")), "{reason}");
                }
                other => panic!("{kind}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_name_that_promises_compression_is_checked() {
        let err = parse_bytes(b"{\"text\": \"a b c\"}\n".to_vec(), "gz", "x.jsonl", "x.jsonl.gz", 1000).unwrap_err();
        assert_eq!(err.to_string(), "x.jsonl.gz: cannot read: named .gz but not gzip data");
        // A compressed text with no format named under `.zst`: one text document, or
        // JSON lines when it starts with `{`.
        let docs = parse_bytes(zstd(&[b"plain words here"]), "zst", "notes", "notes.zst", 1000).unwrap();
        assert_eq!(docs[0].as_ref().unwrap().text, "plain words here");
        let docs = parse_bytes(gzip(&[b" {\"text\": \"a\"}\n{\"text\": \"b\"}"]), "gz", "c", "c.gz", 1000).unwrap();
        assert_eq!(docs.len(), 2);
        // A text over the limit is measured decoded, and decoded no further.
        let err = parse_bytes(gzip(&[&[b'a'; 5000]]), "gz", "big.txt", "big.txt.gz", 1000).unwrap_err();
        assert_eq!(err, InputError::OverLimit { file: "big.txt.gz".into(), limit: 1000 });
    }

    /// A reader that fails once more than `left` bytes were read from it.
    struct Tripwire<R>(R, u64);

    impl<R: std::io::Read> std::io::Read for Tripwire<R> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.read(buf)?;
            self.1 = self.1.checked_sub(n as u64).ok_or_else(|| std::io::Error::other("read past the limit"))?;
            Ok(n)
        }
    }

    /// Regression: a compressed text over the document limit was
    /// decoded to its end just to say how large it was (100 GiB: 20 s of `ingest`).
    #[test]
    fn a_compressed_text_over_the_limit_is_not_decoded_to_its_end() {
        let packed = gzip(&[&vec![b'a'; 8 << 20]]);
        // The decoder reads ahead 64 KiB at a time: far less than the 8 MiB's stream.
        let reader = Tripwire(std::io::Cursor::new(packed), 64 << 10);
        let err = super::super::stream_docs(reader, Some("gz"), "big.txt", "big.txt.gz", 1000, None).err().unwrap();
        assert_eq!(err, InputError::OverLimit { file: "big.txt.gz".into(), limit: 1000 });
    }

    /// Issue 32, item 1: decoding stops at the decoded size and at the ratio, with an
    /// error for the file after the documents before it.
    #[test]
    fn decoding_stops_at_the_decoded_size_and_the_ratio() {
        let line = "{\"text\": \"alpha beta gamma delta epsilon zeta eta theta iota kappa\"}\n";
        let lines = line.repeat(100_000); // 6.6 MB, a few KB compressed
        for packed in [gzip(&[lines.as_bytes()]), zstd(&[lines.as_bytes()])] {
            let ratio = lines.len() as u64 / packed.len() as u64;
            assert!(ratio > 100, "a bomb: {ratio}");
            let read = |limits: Limits| parse_bytes(packed.clone(), "jsonl", "b", "b.jsonl.zst", limits).unwrap();
            let docs = read(Limits { doc_bytes: 1000, decoded_bytes: 0, ratio: 0, ..Limits::from(0) });
            assert!(docs.iter().all(Result::is_ok) && docs.len() == 100_000, "no limit: every document");
            let docs = read(Limits { doc_bytes: 1000, decoded_bytes: 2 << 20, ratio: 0, ..Limits::from(0) });
            let (last, before) = docs.split_last().unwrap();
            assert!(before.iter().all(Result::is_ok) && (before.len() as u64) <= (2 << 20) / line.len() as u64);
            assert!(
                last.as_ref().unwrap_err().to_string().contains("over the limit (--max-decoded-bytes)"),
                "{last:?}"
            );
            let docs = read(Limits { doc_bytes: 1000, decoded_bytes: 0, ratio: 50, ..Limits::from(0) });
            let (last, before) = docs.split_last().unwrap();
            let most = (super::RATIO_FLOOR + 50 * packed.len() as u64) / line.len() as u64;
            assert!(before.iter().all(Result::is_ok) && before.len() as u64 <= most, "{} > {most}", before.len());
            assert!(last.as_ref().unwrap_err().to_string().contains("a compression bomb?"), "{last:?}");
        }
    }
}
