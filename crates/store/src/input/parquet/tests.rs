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
fn zstd_is_read_and_truncated_and_piped_parquet_fail_with_the_reason() {
    // Issue 79, item 8: polars writes zstd by default; it was refused ("Disabled feature
    // at compile time: zstd").
    let zstd: Vec<InputDoc> = read_file(&fixture("pydocs-zstd.parquet"), Limits::from(1 << 20))
        .unwrap()
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let snappy: Vec<InputDoc> =
        read_file(&fixture("pydocs.parquet"), Limits::from(1 << 20)).unwrap().into_iter().map(Result::unwrap).collect();
    assert!(!zstd.is_empty() && zstd.iter().all(|d| snappy.iter().any(|s| s.text == d.text)), "the same pages");
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

/// Issue 79, item 11: a footer of 100,000 nested groups (an 800 KB file) overflowed the
/// stack of the thread that read it, aborting the process; it is refused with the reason.
#[test]
fn a_deeply_nested_schema_is_refused_before_the_crate_reads_it() {
    let mut bytes = b"PAR1".to_vec();
    let footer = super::footer::tests::nested_footer(100_000);
    bytes.extend_from_slice(&footer);
    bytes.extend_from_slice(&(footer.len() as u32).to_le_bytes());
    bytes.extend_from_slice(b"PAR1");
    let mut file = tempfile::Builder::new().suffix(".parquet").tempfile().unwrap();
    file.write_all(&bytes).unwrap();
    let err = read_file(file.path(), Limits::from(1 << 20)).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("nested over 64 levels"), "{err}");
}

/// A Parquet file of one row whose text is `text`, its column compressed with zstd.
fn one_row(text: &str) -> tempfile::NamedTempFile {
    use parquet::basic::{Compression, ZstdLevel};
    use parquet::data_type::{ByteArray, ByteArrayType};
    use parquet::file::properties::{EnabledStatistics, WriterProperties};
    use parquet::file::writer::SerializedFileWriter;
    let file = tempfile::Builder::new().suffix(".parquet").tempfile().unwrap();
    let schema = std::sync::Arc::new(
        parquet::schema::parser::parse_message_type("message m { required binary text (UTF8); }").unwrap(),
    );
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(19).unwrap()))
        .set_statistics_enabled(EnabledStatistics::None)
        .build();
    let mut w = SerializedFileWriter::new(file.reopen().unwrap(), schema, std::sync::Arc::new(props)).unwrap();
    let mut group = w.next_row_group().unwrap();
    let mut column = group.next_column().unwrap().unwrap();
    column.typed::<ByteArrayType>().write_batch(&[ByteArray::from(text.as_bytes().to_vec())], None, None).unwrap();
    column.close().unwrap();
    group.close().unwrap();
    w.close().unwrap();
    file
}

/// Issue 79, item 12: one 512 MiB value in a 522 KB file took 1.56 GB before its
/// document was refused; here 16 MiB from a few KB: refused before any page is decoded,
/// at the ratio and at the decoded size, as a compressed file is. A file within both
/// reads.
#[test]
fn a_column_chunk_that_decodes_past_the_limits_is_refused_before_it_is_decoded() {
    let bomb = one_row(&"a".repeat(16 << 20));
    assert!(std::fs::metadata(bomb.path()).unwrap().len() < 64 << 10);
    let err = read_file(bomb.path(), Limits::from(64 << 20)).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("column `text` of row group 1") && err.contains("--max-ratio"), "{err}");
    let limits = Limits { ratio: 0, decoded_bytes: 8 << 20, ..Limits::from(64 << 20) };
    let err = read_file(bomb.path(), limits).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("--max-decoded-bytes"), "{err}");
    let limits = Limits { ratio: 0, ..Limits::from(64 << 20) };
    let docs = read_file(bomb.path(), limits).unwrap();
    assert_eq!(docs[0].as_ref().unwrap().text.len(), 16 << 20, "within the limits it is read");
}
