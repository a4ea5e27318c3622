use std::io::Write;

use super::*;
use crate::input::read_file;

/// 41 rows from pages of Python's documentation (`tests/fixtures/README.md`): 40 with
/// `text`, one with `html` instead; Snappy, row groups of 16.
fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/parquet").join(name)
}

#[test]
fn rows_become_documents_with_their_columns() {
    let docs: Vec<InputDoc> =
        read_file(&fixture("pydocs.parquet"), Limits::from(1 << 20)).unwrap().into_iter().map(Result::unwrap).collect();
    assert_eq!(docs.len(), 41);
    let d = &docs[0];
    assert_eq!((d.name.as_str(), d.id_number), ("1000", true));
    assert!(d.source.ends_with("pydocs.parquet:1"), "{}", d.source);
    assert_eq!(d.url.as_deref(), Some("https://docs.python.org/3.11/library/2to3.html"));
    assert_eq!(d.published_at.as_deref(), Some("1675857600.000000"), "a timestamp as Unix seconds");
    assert_eq!(d.meta.as_deref(), Some(r#"{"score":0.0,"title":"2to3"}"#));
    assert!(d.text.starts_with("2to3"), "{}", &d.text[..80]);
    assert_eq!(docs[17].source.rsplit(':').next(), Some("18"), "row numbers run on across row groups");
    assert_eq!(docs[40].text, "Some html text here.", "the html column, read as HTML");
}

#[test]
fn columns_are_chosen_by_name() {
    let limits = Limits { text_column: "title", id_column: "url", ..Limits::from(1 << 20) };
    let docs = read_file(&fixture("pydocs.parquet"), limits).unwrap();
    let d = docs[0].as_ref().unwrap();
    assert_eq!((d.name.as_str(), d.text.as_str()), ("https://docs.python.org/3.11/library/2to3.html", "2to3"));
    // A file with neither the text column nor `html`.
    let err = read_file(&fixture("pydocs-zstd.parquet"), Limits { text_column: "body", ..Limits::from(1 << 20) });
    let err = err.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("no column `body`") && err.contains("text, url"), "{err}");
}

#[test]
fn zstd_truncated_and_piped_parquet_fail_with_the_reason() {
    let docs = read_file(&fixture("pydocs-zstd.parquet"), Limits::from(1 << 20)).unwrap();
    let err = docs[0].as_ref().unwrap_err().to_string();
    assert!(err.to_ascii_lowercase().contains("zstd"), "{err}");
    // Cut off: the footer is gone.
    let bytes = std::fs::read(fixture("pydocs.parquet")).unwrap();
    let mut cut = tempfile::NamedTempFile::new().unwrap();
    cut.write_all(&bytes[..bytes.len() / 2]).unwrap();
    let err = read_file(cut.path(), Limits::from(1 << 20)).err().unwrap().to_string();
    assert!(err.contains("a Parquet file that cannot be read"), "{err}");
    // As a stream (standard input, a compressed file) it cannot be read: said so.
    let err = crate::input::parse_bytes(bytes, "parquet", "x", "x", Limits::from(1 << 20)).unwrap_err().to_string();
    assert!(err.contains("Parquet") && err.contains("file path"), "{err}");
}
