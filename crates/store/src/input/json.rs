//! One JSON document: an object's fields read as a document's parts, each of the type
//! it must have (see [`from_json`]); the others kept as its metadata.

use serde_json::value::RawValue;
use textorigin_core::config::HtmlMode;

use super::{finish, html_to_text, meta_text, InputDoc, InputError};

/// The fields of a JSON document that are not metadata.
const READ_FIELDS: [&str; 6] = ["id", "text", "html", "url", "published_at", "date"];

/// One JSON document (an object's text, see the module docs): named `default_name`
/// when it has no `id`; errors name `source`. A field read as one of the document's
/// parts that has the wrong type fails the document with the reason (it is never
/// dropped or stored as something else): `id` a string or a number, kept as its
/// literal text (`12345678901234567890123` stays that, never a float's rounding);
/// `text`, `html`, `url` and `title` strings; `published_at` and `date` strings or
/// numbers (Unix seconds); `null` counts as absent.
///
/// A document that fails after its `id` was read fails with
/// [`InputError::Identified`], which names it (its attributes line). An
/// `html` field is read as `html` says ([`super::html::extract`]).
pub fn from_json(text: &str, default_name: &str, source: &str, html: HtmlMode) -> Result<InputDoc, InputError> {
    let json = |reason: String| InputError::Json { file: source.to_string(), reason };
    let obj: std::collections::BTreeMap<String, &RawValue> = match serde_json::from_str(text) {
        Ok(obj) => obj,
        Err(e) if e.classify() == serde_json::error::Category::Data => return Err(json("expected an object".into())),
        Err(e) => return Err(json(e.to_string())),
    };
    let id = obj.get("id").map(|r| r.get()).filter(|r| matches!(r.as_bytes()[0], b'"' | b'-' | b'0'..=b'9'));
    document(&obj, default_name, source, html).map_err(|error| match id {
        Some(id) => InputError::Identified { id: id.to_string(), error: Box::new(error) },
        None => error,
    })
}

/// The document of a JSON object's fields ([`from_json`]).
fn document(
    obj: &std::collections::BTreeMap<String, &RawValue>,
    default_name: &str,
    source: &str,
    html: HtmlMode,
) -> Result<InputDoc, InputError> {
    let json = |reason: String| InputError::Json { file: source.to_string(), reason };
    // A field of one of the kinds allowed, as its text (a string's value, a number's
    // literal), or None when absent or null.
    let field = |key: &str, numbers: bool| -> Result<Option<String>, InputError> {
        let Some(raw) = obj.get(key) else { return Ok(None) };
        let raw = raw.get();
        match raw.as_bytes()[0] {
            b'n' => Ok(None),
            b'"' => serde_json::from_str::<String>(raw).map(Some).map_err(|e| json(e.to_string())),
            b'-' | b'0'..=b'9' if numbers => Ok(Some(raw.to_string())),
            b => {
                let kind = match b {
                    b'{' => "an object",
                    b'[' => "an array",
                    b't' | b'f' => "a boolean",
                    _ => "a number",
                };
                let want = if numbers { "a string or a number" } else { "a string" };
                Err(json(format!("`{key}` must be {want}, not {kind}")))
            }
        }
    };
    let id = field("id", true)?;
    let id_number = obj.get("id").is_some_and(|r| matches!(r.get().as_bytes().first(), Some(b'-' | b'0'..=b'9')));
    let body = match (field("text", false)?, field("html", false)?) {
        (Some(t), _) => t,
        (None, Some(h)) => html_to_text(&h, html),
        (None, None) => return Err(InputError::NoText(source.to_string())),
    };
    let url = field("url", false)?;
    // Without an id, named from its URL, keyed by the name it had before.
    let (name, key_name) = match (id, &url) {
        (Some(id), _) => (id, None),
        (None, Some(u)) => (super::warc::name_of_url(u), Some(default_name.to_string())),
        (None, None) => (default_name.to_string(), None),
    };
    let (date, date_field) = match field("published_at", true)? {
        Some(d) => (Some(d), false),
        None => field("date", true)?.map_or((None, false), |d| (Some(d), true)),
    };
    field("title", false)?;
    let mut doc = finish(name, source.to_string(), body, url, date, Vec::new())?;
    (doc.id_number, doc.date_field, doc.key_name) = (id_number, date_field, key_name);
    let value = |raw: &RawValue| serde_json::from_str::<serde_json::Value>(raw.get()).map_err(|e| json(e.to_string()));
    doc.message_id = obj.get("message_id").map(|r| value(r)).transpose()?.and_then(|v| v.as_str().map(str::to_string));
    doc.in_reply_to = match obj.get("in_reply_to").map(|r| value(r)).transpose()? {
        Some(serde_json::Value::Array(a)) => a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect(),
        Some(serde_json::Value::String(s)) => vec![s],
        _ => Vec::new(),
    };
    let mut extra = serde_json::Map::new();
    for (k, raw) in obj.iter().filter(|(k, _)| !READ_FIELDS.contains(&k.as_str())) {
        extra.insert(k.clone(), value(raw)?);
    }
    doc.meta = meta_text(extra, source)?;
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::super::jsonl_docs;
    use super::*;

    /// Regression: fields of the wrong type were dropped or stored
    /// as something else (an object date stored undated, an object id replaced by the
    /// line's name, a large numeric id rounded through a float so that two ids became
    /// one name); invalid UTF-8 in JSON lines was replaced without a warning.
    #[test]
    fn json_fields_of_the_wrong_type_fail_and_ids_keep_their_literal_text() {
        let read = |line: &str| from_json(line, "f:1", "f.jsonl:1", HtmlMode::Main);
        for (field, value, says) in [
            ("published_at", "{}", "`published_at` must be a string or a number, not an object"),
            ("published_at", "true", "`published_at` must be a string or a number, not a boolean"),
            ("date", "[2020]", "`date` must be a string or a number, not an array"),
            ("id", "{\"a\": 1}", "`id` must be a string or a number, not an object"),
            ("id", "[1]", "`id` must be a string or a number, not an array"),
            ("id", "false", "`id` must be a string or a number, not a boolean"),
            ("url", "{\"href\": \"x\"}", "`url` must be a string, not an object"),
            ("url", "7", "`url` must be a string, not a number"),
            ("title", "[\"T\"]", "`title` must be a string, not an array"),
            ("text", "12", "`text` must be a string, not a number"),
        ] {
            let line = format!("{{\"text\": \"a b\", \"{field}\": {value}}}").replacen(
                "\"text\": \"a b\", \"text\"",
                "\"text\"",
                1,
            );
            match read(&line) {
                Err(InputError::Json { file, reason }) => {
                    assert_eq!((file.as_str(), reason.as_str()), ("f.jsonl:1", says), "{line}")
                }
                other => panic!("{line}: {other:?}"),
            }
        }
        let name = |line: &str| read(line).unwrap().name;
        assert_eq!(name(r#"{"id": 12345678901234567890123, "text": "a"}"#), "12345678901234567890123");
        assert_ne!(
            name(r#"{"id": 12345678901234567890123, "text": "a"}"#),
            name(r#"{"id": 12345678901234567890124, "text": "a"}"#)
        );
        assert_eq!(name(r#"{"id": -7.50, "text": "a"}"#), "-7.50");
        assert_eq!(name(r#"{"id": null, "text": "a"}"#), "f:1", "null is absent");
        let d = read(r#"{"id": "x", "text": "a", "url": null, "date": 1700000000, "title": "T", "n": 1.0}"#).unwrap();
        assert_eq!(
            (d.url, d.published_at.as_deref(), d.meta.as_deref()),
            (None, Some("1700000000"), Some(r#"{"n":1.0,"title":"T"}"#))
        );
        assert!(matches!(read("[1]"), Err(InputError::Json { reason, .. }) if reason == "expected an object"));
        let docs: Vec<_> =
            jsonl_docs(std::io::Cursor::new(b"{\"text\": \"caf\xe9 \xff\"}\n".to_vec()), "s", "s.jsonl", 100)
                .unwrap()
                .collect();
        let d = docs[0].as_ref().unwrap();
        assert_eq!(d.warnings, ["s.jsonl:1: 2 invalid UTF-8 sequence(s) replaced by U+FFFD"]);
    }
}
