//! Formats told by their first bytes that are never read as text (a file
//! that is a WARC, Parquet or other binary format is read or refused with the reason,
//! never taken for text). WARC, gzip and Zstandard are read ([`super::warc`],
//! [`super::compressed`]), Parquet from a file ([`super::parquet`]); these are refused
//! in a stream, named.

/// Magic numbers of the formats refused, and what to do instead.
const REFUSED: &[(&[u8], &str)] = &[
    (
        b"PAR1",
        "a Parquet file, which is read from its end: give it as a file path (not standard input, not compressed)",
    ),
    (b"%PDF-", "a PDF document: extract its text first (pdftotext)"),
    (b"PK\x03\x04", "a ZIP archive (or an Office document): unpack it first"),
    (b"BZh", "a bzip2-compressed file: decompress it, or compress it with gzip or zstd"),
    (b"\xfd7zXZ\x00", "an xz-compressed file: decompress it, or compress it with gzip or zstd"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive: unpack it first"),
    (b"\x04\x22\x4d\x18", "an LZ4 frame: decompress it, or compress it with gzip or zstd"),
    (b"ORC", "an ORC file: export its text column as JSON lines or Parquet"),
    (b"Obj\x01", "an Avro file: export its text column as JSON lines or Parquet"),
    (b"ARROW1", "an Arrow IPC file: export its text column as JSON lines or Parquet"),
    (b"\x89PNG", "a PNG image (not text)"),
    (b"\xff\xd8\xff", "a JPEG image (not text)"),
    (b"GIF8", "a GIF image (not text)"),
    (b"SQLite format 3\x00", "an SQLite database: export its texts as JSON lines"),
];

/// Why the bytes starting `head` are not read, when their magic number names a format
/// refused.
pub fn refused(head: &[u8]) -> Option<&'static str> {
    REFUSED.iter().find(|(m, _)| head.starts_with(m)).map(|(_, why)| *why)
}

/// Whether `head` starts a Parquet file.
pub fn is_parquet(head: &[u8]) -> bool {
    head.starts_with(b"PAR1")
}
