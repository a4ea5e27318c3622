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
    let (file, line) = split_source(&doc.source);
    if line != 0 || !named_by_file(file, &doc.name) {
        return Ok(doc.name.clone());
    }
    // The name itself, else the first suffixed one free of other files' documents.
    for n in 1u64.. {
        let name = match n {
            1 => doc.name.clone(),
            n => format!("{}{SUFFIX}{n}", doc.name),
        };
        let mut others = false;
        for seq in store.seqs_named(&name)? {
            let held = store.doc(seq)?.is_some_and(|m| split_source(&m.source).0 != file);
            others |= held;
        }
        if !others {
            return Ok(name);
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
