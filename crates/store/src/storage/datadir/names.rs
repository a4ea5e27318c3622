//! The name a document is stored under. A document read from a file
//! of its own is named by the file (`library/index.html` is `index`), so pages of a
//! site share names (`index` in every folder): such a name that an earlier document
//! of another file holds gets a suffix, the first of `NAME~2`, `NAME~3`, ... that no
//! document of another file holds. Names a user gave (a JSON `id`), names made from
//! URLs and documents of one file sent again (a page updated in the spool) keep their
//! name, and `show NAME` gives the latest of them as before. Admission keys are made
//! from the name the input gave, before this, so a file ingested again is still
//! recognised.

use std::path::Path;

use super::Result;
use crate::input::{split_source, InputDoc};
use crate::storage::store::Store;

/// Where a name is suffixed: `NAME~N`.
pub const SUFFIX: char = '~';

/// The name `doc` is stored under in `store`.
pub(super) fn stored_name(store: &Store, doc: &InputDoc) -> Result<String> {
    Ok(by_file(store, &doc.name, &doc.source)?.unwrap_or_else(|| doc.name.clone()))
}

/// In a partition of a deployment, keeps the name another partition's document (named
/// `name`, read from `source`) is stored under, where it is named by its file, so that
/// this partition's later pages are named as on one node, which sees every name.
pub(super) fn note_theirs(store: &Store, seq: u64, name: &str, source: &str) -> Result<()> {
    if let Some(stored) = by_file(store, name, source)? {
        store.put_name_of_theirs(&stored, seq, split_source(source).0)?;
    }
    Ok(())
}

/// The name a document named `name`, read from `source`, is stored under where it is
/// named by its file: the name itself, else the first suffixed one free of other
/// files' documents (those of this store, and of the others' partitions it was told
/// of). None where the name is not its file's.
fn by_file(store: &Store, name: &str, source: &str) -> Result<Option<String>> {
    let (file, line) = split_source(source);
    if line != 0 || !named_by_file(file, name) {
        return Ok(None);
    }
    for n in 1u64.. {
        let candidate = match n {
            1 => name.to_string(),
            n => format!("{name}{SUFFIX}{n}"),
        };
        let mut others = store.files_of_theirs_named(&candidate)?.iter().any(|f| f != file);
        for seq in store.seqs_named(&candidate)? {
            let held = store.doc(seq)?.is_some_and(|m| split_source(&m.source).0 != file);
            others |= held;
        }
        if !others {
            return Ok(Some(candidate));
        }
    }
    unreachable!("some suffix is free")
}

/// Whether `name` is the name of the file `file` (its stem, under a compression's
/// extension too: `a` of `a.html.gz`).
fn named_by_file(file: &str, name: &str) -> bool {
    let stem = |p: &Path| p.file_stem().map(|s| s.to_string_lossy().into_owned());
    let path = Path::new(file);
    stem(path).is_some_and(|s| s == name || stem(Path::new(&s)).is_some_and(|s| s == name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_the_files_when_it_is_its_stem() {
        assert!(named_by_file("site/library/index.html", "index"));
        assert!(named_by_file("a/b.html.gz", "b"));
        assert!(!named_by_file("a/b.jsonl", "b-7"));
        assert!(!named_by_file("crawl.warc.gz", "example.org/x"));
    }
}
