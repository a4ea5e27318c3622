//! The spool's layout, as the daemon that takes files from it and the HTTP server that
//! submits to it both see it (Maildir's: a producer writes in `tmp/` and links the
//! finished file into `new/`).
//!
//! ```text
//! SPOOL/new/      files waiting to be taken
//! SPOOL/tmp/      producers' unfinished files
//!   .textorigin-http/           the HTTP server's submissions before they are linked
//!     via-http/                 one empty mark a file submitted over HTTP (its key in hex)
//! SPOOL/failed/   files that could not be read, each with its reasons beside it
//! SPOOL/done/     files taken, with --keep
//! SPOOL/.reading  the daemon's reader: which file, and which step of it, it is in
//! ```

use std::path::{Path, PathBuf};

use textorigin_store::error::{IoContext, IoError};

/// The files waiting to be taken.
pub const NEW: &str = "new";
/// Producers' unfinished files.
pub const TMP: &str = "tmp";
/// Files that could not be read.
pub const FAILED: &str = "failed";
/// Files taken, kept with `--keep`.
pub const DONE: &str = "done";
/// The reader's record of the file and step it is in (`daemon::reading`).
pub const READING: &str = ".reading";

/// The server's own directory in the spool's `tmp/`, where submissions are written
/// before they are linked into `new/`.
pub const SUBMIT_DIR: &str = ".textorigin-http";

/// The directory in [`SUBMIT_DIR`] of the marks of files submitted over HTTP (one empty
/// file a submission, named by its admission key in hex).
pub const MARKS_DIR: &str = "via-http";

/// Where the HTTP server writes its submissions.
pub fn submissions(spool: &Path) -> PathBuf {
    spool.join(TMP).join(SUBMIT_DIR)
}

/// Where the marks of files submitted over HTTP are.
pub fn marks(spool: &Path) -> PathBuf {
    submissions(spool).join(MARKS_DIR)
}

/// Creates the spool's directories that are missing.
pub fn create(spool: &Path) -> Result<(), IoError> {
    for sub in [TMP, NEW, FAILED, DONE] {
        let path = spool.join(sub);
        std::fs::create_dir_all(&path).io(|| format!("cannot create {}", path.display()))?;
    }
    Ok(())
}

/// Longest file name kept in `failed/` and `done/`: room for `.reason` and a
/// counter within NAME_MAX (255 bytes).
const MAX_KEPT_NAME: usize = 200;

/// A name for `name` in `dir` that is short enough for its `.reason` beside it and not
/// taken: long names are cut (at a character boundary), taken ones get `.1`, `.2`, ...
pub fn free_name(dir: &Path, name: &std::ffi::OsStr) -> std::ffi::OsString {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let bytes = name.as_bytes();
    let mut cut = bytes.len().min(MAX_KEPT_NAME);
    while cut < bytes.len() && (bytes[cut] & 0xC0) == 0x80 {
        cut -= 1; // not inside a UTF-8 sequence
    }
    let base = std::ffi::OsString::from_vec(bytes[..cut].to_vec());
    let taken = |n: &std::ffi::OsStr| {
        let mut reason = n.to_os_string();
        reason.push(".reason");
        dir.join(n).symlink_metadata().is_ok() || dir.join(reason).symlink_metadata().is_ok()
    };
    if !taken(&base) {
        return base;
    }
    (1u64..)
        .map(|i| {
            let mut n = base.clone();
            n.push(format!(".{i}"));
            n
        })
        .find(|n| !taken(n))
        .expect("a free name")
}
