//! Parquet datasets: Hugging Face datasets, FineWeb, Dolma's shards as
//! Parquet. A row is a document: its text from the column [`Limits::text_column`]
//! (default `text`; a row whose text is null, or a file with no such column but an
//! `html` one, reads that as HTML), its name from [`Limits::id_column`] (default
//! `id`, a string or an integer) or else its `url` ([`super::warc::name_of_url`]) or
//! else `STEM:ROW`; `url`, `published_at` or `date` (a string, Unix seconds, a Parquet
//! date or timestamp) are read as JSON documents' fields are, every other column is
//! kept as its metadata (JSON, at most [`super::MAX_META_BYTES`]). Its source is
//! `FILE:ROW`, as a JSON line's is `FILE:LINE`.
//!
//! The file is read with the `parquet` crate's row reader, a row group at a time and
//! within it a page at a time: memory is bounded by a row group's pages, whatever the
//! file's size. Compressions read: uncompressed, Snappy (pyarrow's default), gzip,
//! LZ4, Brotli and Zstandard (polars' default). Parquet is read from a file (its
//! metadata is at its end), never from standard input or a compressed stream
//! ([`super::magic`] refuses those).
//!
//! **Hostile files**: before the crate reads the footer, its schema's depth is checked
//! (`parquet/footer.rs`: the crate's recursion overflowed the stack on 10,000 nested groups);
//! before any page is decoded, every column chunk's decoded size is held to the limits
//! a compressed file is ([`Limits::decoded_bytes`], and [`Limits::ratio`] times its
//! compressed size beyond [`super::RATIO_FLOOR`]): a small file must not decode to
//! gigabytes before its document is refused. (A footer that understates its
//! chunks' sizes is not caught here: the crate trusts each page's own header.)

use std::fs::File;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::{Field, Row};

use super::{finish, html, meta_text, warc::name_of_url, Docs, InputDoc, InputError, Limits};

/// The documents of the Parquet file `file` (`len` bytes), adding to `read` the share of
/// its bytes its rows taken so far stand for (a progress bar's measure).
pub fn parquet_docs(
    file: File,
    stem: &str,
    source: &str,
    limits: Limits,
    len: u64,
    read: Option<Arc<AtomicU64>>,
) -> Result<Docs, InputError> {
    let bad = |e: parquet::errors::ParquetError| InputError::Unreadable {
        file: source.to_string(),
        reason: format!("a Parquet file that cannot be read: {e}"),
    };
    footer::check(&file, len).map_err(|reason| InputError::Unreadable { file: source.to_string(), reason })?;
    let reader = SerializedFileReader::new(file).map_err(bad)?;
    chunks_within(reader.metadata(), limits)
        .map_err(|reason| InputError::Unreadable { file: source.to_string(), reason })?;
    let total = reader.metadata().file_metadata().num_rows().max(1) as u64;
    let columns: Vec<String> = reader
        .metadata()
        .file_metadata()
        .schema_descr()
        .root_schema()
        .get_fields()
        .iter()
        .map(|f| f.name().to_string())
        .collect();
    let has = |c: &str| columns.iter().any(|n| n == c);
    if !has(limits.text_column) && !has("html") {
        return Err(InputError::Unreadable {
            file: source.to_string(),
            reason: format!(
                "a Parquet file with no column `{}` (its columns: {}); name the text column with --text-column",
                limits.text_column,
                columns.join(", ")
            ),
        });
    }
    let (stem, source) = (stem.to_string(), source.to_string());
    let mut rows = reader.into_iter();
    let (mut number, mut counted, mut done) = (0u64, 0u64, false);
    Ok(Box::new(std::iter::from_fn(move || {
        if done {
            return None;
        }
        let row = rows.next()?;
        number += 1;
        if let Some(read) = &read {
            let now = len * number.min(total) / total;
            read.fetch_add(now - counted, Ordering::Relaxed);
            counted = now;
        }
        let src = format!("{source}:{number}");
        Some(match row {
            Ok(row) => document(&row, &format!("{stem}:{number}"), src, limits),
            Err(e) => {
                // A broken page ends the file: what follows cannot be placed.
                done = true;
                Err(InputError::Unreadable { file: src, reason: format!("a Parquet row that cannot be read: {e}") })
            }
        })
    })))
}

/// Refuses a file with a column chunk that decodes past the limits (the module docs).
fn chunks_within(meta: &parquet::file::metadata::ParquetMetaData, limits: Limits) -> Result<(), String> {
    for (g, group) in meta.row_groups().iter().enumerate() {
        for chunk in group.columns() {
            let (packed, size) = (chunk.compressed_size().max(0) as u64, chunk.uncompressed_size().max(0) as u64);
            let column = chunk.column_path().string();
            if limits.decoded_bytes > 0 && size > limits.decoded_bytes {
                return Err(format!(
                    "column `{column}` of row group {} decodes to {size} bytes, over the limit of {} (--max-decoded-bytes)",
                    g + 1,
                    limits.decoded_bytes
                ));
            }
            if limits.ratio > 0 && size > super::RATIO_FLOOR.saturating_add(packed.saturating_mul(limits.ratio)) {
                return Err(format!(
                    "column `{column}` of row group {} decodes to {size} bytes from {packed}, over {} times its size (a compression bomb?; --max-ratio)",
                    g + 1,
                    limits.ratio
                ));
            }
        }
    }
    Ok(())
}

/// A row's document (the module docs).
fn document(row: &Row, default_name: &str, src: String, limits: Limits) -> Result<InputDoc, InputError> {
    let wrong = |column: &str, want: &str, field: &Field| InputError::Json {
        file: src.clone(),
        reason: format!("column `{column}` must be {want}, not {field}"),
    };
    let (mut text, mut html_text, mut name, mut url, mut date) = (None, None, None, None, None);
    let mut id_number = false;
    let mut meta = serde_json::Map::new();
    for (column, field) in row.get_column_iter() {
        let column = column.as_str();
        if matches!(field, Field::Null) {
            continue;
        }
        let string = || match field {
            Field::Str(s) => Some(s.clone()),
            _ => None,
        };
        if column == limits.text_column {
            text = Some(string().ok_or_else(|| wrong(column, "a string", field))?);
        } else if column == "html" {
            html_text = Some(string().ok_or_else(|| wrong(column, "a string", field))?);
        } else if column == limits.id_column {
            name = Some(match field {
                Field::Str(s) => s.clone(),
                Field::Byte(_) | Field::Short(_) | Field::Int(_) | Field::Long(_) => {
                    id_number = true;
                    field.to_string()
                }
                Field::UByte(_) | Field::UShort(_) | Field::UInt(_) | Field::ULong(_) => {
                    id_number = true;
                    field.to_string()
                }
                _ => return Err(wrong(column, "a string or an integer", field)),
            });
        } else if column == "url" {
            url = Some(string().ok_or_else(|| wrong(column, "a string", field))?);
        } else if (column == "published_at" || column == "date") && date.is_none() {
            date = Some(match field {
                Field::Str(s) => s.clone(),
                Field::Int(_) | Field::Long(_) => field.to_string(),
                Field::Date(days) => time::Date::from_julian_day(2_440_588 + days)
                    .map(|d| d.to_string())
                    .map_err(|_| wrong(column, "a date in years 0-9999", field))?,
                Field::TimestampMillis(ms) => format!("{}.{:03}", ms.div_euclid(1000), ms.rem_euclid(1000)),
                Field::TimestampMicros(us) => format!("{}.{:06}", us.div_euclid(1_000_000), us.rem_euclid(1_000_000)),
                _ => return Err(wrong(column, "a string, Unix seconds, a date or a timestamp", field)),
            });
        } else {
            meta.insert(column.to_string(), field.to_json_value());
        }
    }
    let body = match (text, html_text) {
        (Some(t), _) => t,
        (None, Some(h)) => html::html_to_text(&h, limits.html),
        (None, None) => return Err(InputError::NoText(src)),
    };
    if body.len() as u64 > limits.doc_bytes {
        return Err(InputError::TooLarge { file: src, bytes: body.len() as u64, limit: limits.doc_bytes });
    }
    let name = name.or_else(|| url.as_deref().map(name_of_url)).unwrap_or_else(|| default_name.to_string());
    let mut doc = finish(name, src.clone(), body, url, date, Vec::new())?;
    doc.id_number = id_number;
    doc.meta = meta_text(meta, &src)?;
    Ok(doc)
}

mod footer;

#[cfg(test)]
mod tests;
