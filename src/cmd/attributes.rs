//! `export --format attributes`: a line for every input document, stored or failed,
//! in the input's order, to one output or (`--mirror`) to one file per input file
//! (Dolma's mixer reads a documents file and its attributes file line by line).

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::Value;
use textorigin_store::input::split_source;
use textorigin_store::storage::store::DocFailure;

use super::out::Out;

/// The failed input documents not written yet, by file, in line order.
pub struct Failed {
    by_file: BTreeMap<String, VecDeque<(u64, DocFailure)>>,
}

impl Failed {
    pub fn new(failures: Vec<(String, DocFailure)>) -> Failed {
        let mut by_file: BTreeMap<String, VecDeque<(u64, DocFailure)>> = BTreeMap::new();
        for (source, f) in failures {
            let (file, line) = split_source(&source);
            by_file.entry(file.to_string()).or_default().push_back((line, f));
        }
        for lines in by_file.values_mut() {
            lines.make_contiguous().sort_by_key(|l| l.0);
        }
        Failed { by_file }
    }

    /// The failures of `file` before `line`; one at `line` itself is dropped (the
    /// document failed once, and a later run stored it).
    pub fn before(&mut self, file: &str, line: u64) -> Vec<DocFailure> {
        let Some(lines) = self.by_file.get_mut(file) else { return Vec::new() };
        let mut out = Vec::new();
        while let Some(&(l, _)) = lines.front() {
            if l > line {
                break;
            }
            let (_, f) = lines.pop_front().expect("a front");
            if l < line {
                out.push(f);
            }
        }
        out
    }

    /// The failures of `file` left (after its last stored document).
    pub fn rest_of(&mut self, file: &str) -> Vec<DocFailure> {
        self.by_file.remove(file).map(|l| l.into_iter().map(|x| x.1).collect()).unwrap_or_default()
    }

    /// Every failure left, by file (files none of whose documents was stored).
    pub fn rest(self) -> Vec<(String, DocFailure)> {
        self.by_file.into_iter().flat_map(|(file, l)| l.into_iter().map(move |(_, f)| (file.clone(), f))).collect()
    }
}

/// Where the lines go: one output, or a file per input file under `--mirror`'s root.
pub enum Sink {
    One(Out),
    Mirror { roots: MirrorRoots, current: Option<(String, Out)>, done: HashSet<String> },
}

impl Sink {
    /// Writes `v` as the line of a document of input `file`.
    pub fn line(&mut self, file: &str, v: &Value) -> Result<()> {
        let out = match self {
            Sink::One(out) => out,
            Sink::Mirror { roots, current, done } => {
                if current.as_ref().is_none_or(|(f, _)| f != file) {
                    if let Some((f, o)) = current.take() {
                        o.finish()?;
                        done.insert(f);
                    }
                    if done.contains(file) {
                        bail!("--mirror: the documents of {file} are not stored together (ingested by several runs?): export without --mirror");
                    }
                    let w = roots.create(file)?;
                    let gzip = file.ends_with(".gz");
                    *current = Some((file.to_string(), Out::new(Box::new(w), gzip)));
                }
                &mut current.as_mut().expect("just set").1
            }
        };
        serde_json::to_writer(&mut *out, v)?;
        Ok(out.write_all(b"\n")?)
    }

    pub fn finish(self) -> Result<()> {
        match self {
            Sink::One(out) => out.finish(),
            Sink::Mirror { current, .. } => current.map_or(Ok(()), |(_, o)| o.finish()),
        }
    }
}

/// The input files' root (a Dolma `documents/` tree) and the output root of `--mirror`,
/// both canonical (a prefix stripped lexically and joined back with its `..`
/// wrote outside the output and overwrote an input).
pub struct MirrorRoots {
    documents: PathBuf,
    out: PathBuf,
}

impl MirrorRoots {
    /// Creates `out` if needed; refuses roots that hold one another (an attributes file
    /// could then take an input's place).
    pub fn new(documents: &Path, out: &Path) -> Result<MirrorRoots> {
        let canonical = |p: &Path, what: &str| {
            p.canonicalize().with_context(|| format!("--mirror: cannot resolve {what} {}", p.display()))
        };
        let documents = canonical(documents, "the documents directory")?;
        std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
        let out = canonical(out, "the output directory")?;
        if out.starts_with(&documents) || documents.starts_with(&out) {
            bail!(
                "--mirror {}: the output directory {} must not be inside it nor hold it (its files would take the inputs' places)",
                documents.display(),
                out.display()
            );
        }
        Ok(MirrorRoots { documents, out })
    }

    /// The attributes file of input `file`: its path under the documents root, under the
    /// output root, resolved through every link (an input that is gone: through its
    /// directory's).
    pub fn target(&self, file: &str) -> Result<PathBuf> {
        let path = Path::new(file);
        let resolved = path.canonicalize().ok().or_else(|| {
            let (dir, name) = (path.parent()?, path.file_name()?);
            let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
            Some(dir.canonicalize().ok()?.join(name))
        });
        let Some(resolved) = resolved else {
            bail!("--mirror {}: input file {file} is gone (nor is its directory there)", self.documents.display())
        };
        match resolved.strip_prefix(&self.documents) {
            Ok(r) if r.file_name().is_some() => Ok(self.out.join(r)),
            _ => bail!("--mirror {}: input file {file} is not under it", self.documents.display()),
        }
    }

    /// Creates (or truncates) the attributes file of input `file`, following no
    /// symbolic link inside the output root: its directories must resolve inside it and
    /// the file itself is opened with `O_NOFOLLOW`.
    fn create(&self, file: &str) -> Result<std::fs::File> {
        use std::os::unix::fs::OpenOptionsExt;
        let path = self.target(file)?;
        let dir = path.parent().expect("under the output root");
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let resolved = dir.canonicalize().with_context(|| format!("cannot resolve {}", dir.display()))?;
        if !resolved.starts_with(&self.out) {
            bail!(
                "--mirror: {} leads out of the output directory (to {}): not followed",
                dir.display(),
                resolved.display()
            );
        }
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .with_context(|| match std::fs::symlink_metadata(&path) {
                Ok(m) if m.file_type().is_symlink() => format!("{} is a symbolic link: not followed", path.display()),
                _ => format!("cannot create {}", path.display()),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(reason: &str) -> DocFailure {
        DocFailure { id: None, reason: reason.into() }
    }

    #[test]
    fn failures_are_placed_by_file_and_line() {
        assert_eq!(split_source("a/b.jsonl:12"), ("a/b.jsonl", 12));
        assert_eq!(split_source("notes.txt"), ("notes.txt", 0));
        assert_eq!(split_source("c:/x"), ("c:/x", 0));
        let mut f = Failed::new(vec![
            ("b.jsonl:4".into(), failure("b4")),
            ("a.jsonl:9".into(), failure("a9")),
            ("a.jsonl:2".into(), failure("a2")),
            ("a.jsonl:5".into(), failure("a5 stored later")),
            ("c.jsonl:1".into(), failure("c1")),
        ]);
        let reasons = |v: Vec<DocFailure>| v.into_iter().map(|f| f.reason).collect::<Vec<_>>();
        assert_eq!(reasons(f.before("a.jsonl", 3)), ["a2"]);
        assert_eq!(reasons(f.before("a.jsonl", 5)), Vec::<String>::new());
        assert_eq!(reasons(f.before("a.jsonl", 7)), Vec::<String>::new());
        assert_eq!(reasons(f.rest_of("a.jsonl")), ["a9"]);
        assert_eq!(reasons(f.before("b.jsonl", 1)), Vec::<String>::new());
        let rest: Vec<(String, String)> = f.rest().into_iter().map(|(p, f)| (p, f.reason)).collect();
        assert_eq!(rest, [("b.jsonl".to_string(), "b4".to_string()), ("c.jsonl".into(), "c1".into())]);
    }
}
