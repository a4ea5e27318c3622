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
