//! The daemon's status file `DATA/daemon.json` (replaced atomically), read by `stats`.

use std::path::Path;

use textorigin_store::storage::datadir::lock_holder;

/// What the daemon is doing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DaemonState {
    /// Taking files from the spool.
    #[default]
    Running,
    /// Some files could not be processed (an I/O error); they stay and are retried.
    Degraded {
        /// Files kept in the spool.
        kept: usize,
    },
    /// The spool directory cannot be read (removed, or its permissions changed): the
    /// daemon recreates what it may and tries again, serving HTTP meanwhile.
    NoSpool,
    /// Stopped cleanly.
    Stopped,
    /// Not written by a daemon: what a reader concludes when the process named in the
    /// file no longer holds the data directory (it was killed or crashed).
    Gone,
    /// Not written by a daemon: another process than the one the file names holds the
    /// data directory, whose status file could not be written (on a full
    /// disk `stats` called a running daemon killed).
    Unwritten,
}

const NO_SPOOL: &str = "degraded: the spool directory cannot be read; recreating it and retrying";
const GONE: &str = "not running: the process ended without stopping (killed or crashed); the next start recovers";
const UNWRITTEN: &str =
    "running, but its status file could not be written (a full disk?): the figures are an earlier daemon's";

impl std::fmt::Display for DaemonState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DaemonState::Running => f.write_str("running"),
            DaemonState::Degraded { kept } => write!(f, "degraded: {kept} file(s) could not be processed; retrying"),
            DaemonState::NoSpool => f.write_str(NO_SPOOL),
            DaemonState::Stopped => f.write_str("stopped"),
            DaemonState::Gone => f.write_str(GONE),
            DaemonState::Unwritten => f.write_str(UNWRITTEN),
        }
    }
}

impl std::str::FromStr for DaemonState {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<DaemonState, String> {
        match s {
            "running" => Ok(DaemonState::Running),
            "stopped" => Ok(DaemonState::Stopped),
            NO_SPOOL => Ok(DaemonState::NoSpool),
            GONE => Ok(DaemonState::Gone),
            UNWRITTEN => Ok(DaemonState::Unwritten),
            _ => s
                .strip_prefix("degraded: ")
                .and_then(|r| r.split(' ').next())
                .and_then(|n| n.parse().ok())
                .map(|kept| DaemonState::Degraded { kept })
                .ok_or_else(|| format!("unknown daemon state `{s}`")),
        }
    }
}

impl serde::Serialize for DaemonState {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for DaemonState {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<DaemonState, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Daemon counters, written to `DATA/daemon.json` for `stats` (the JSON interface).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct DaemonStatus {
    pub pid: u32,
    pub state: DaemonState,
    pub started_at_ms: u64,
    pub files_admitted: u64,
    pub files_failed: u64,
    pub documents_applied_this_run: u64,
    pub last_applied: u64,
    pub last_checkpoint_generation: u64,
    pub last_checkpoint_seq: u64,
    pub spool_backlog: usize,
    pub documents_per_second: f64,
    /// At start: the checkpoint the table was restored from and the documents replayed.
    pub recovered_from_checkpoint: Option<u64>,
    pub replayed: u64,
    /// Why the last checkpoint could not be written (None: it was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_error: Option<String>,
}

impl DaemonStatus {
    /// The status in `dir/daemon.json`, if there is a readable one. A status that says
    /// the daemon works while its process does not hold the store's lock (killed, say)
    /// reads [`DaemonState::Gone`].
    pub fn read(dir: &Path) -> Option<DaemonStatus> {
        let mut s: DaemonStatus =
            std::fs::read(dir.join("daemon.json")).ok().and_then(|b| serde_json::from_slice(&b).ok())?;
        match lock_holder(&textorigin_store::storage::datadir::db_path(dir).join("LOCK")) {
            // A writer that is not the file's daemon holds the data directory: a daemon
            // that could not write its status (or another writer, `ingest`, `rebuild`).
            Some(Some(holder)) if holder != s.pid && is_daemon(holder) => {
                s.pid = holder;
                s.state = DaemonState::Unwritten;
            }
            // The file's daemon does not hold the data directory: gone, unless its process
            // lives (a daemon that let its store go while it waits for disk space is alive
            // and retrying, and says so itself).
            Some(holder)
                if holder != Some(s.pid)
                    && !matches!(s.state, DaemonState::Stopped | DaemonState::Gone)
                    && !is_daemon(s.pid) =>
            {
                s.state = DaemonState::Gone;
            }
            _ => {}
        }
        Some(s)
    }
}

/// Whether process `pid` is a `textorigin serve` (its command line, from `/proc`).
fn is_daemon(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c.split(|&b| b == 0).nth(1) == Some(b"serve"))
}

/// `dir/daemon.json`, replaced atomically when the status changed (best effort: a
/// status is advisory). An idle daemon writes nothing.
///
/// A full disk is when the status matters most and when its new file cannot get a
/// block: the status file keeps a reserve, `.daemon.json.reserve` (made when the status
/// file is and again once a write succeeds without it), which a write that finds the
/// disk full removes before it tries again (the emergency ballast of CockroachDB's
/// stores, kept for the status alone). The daemon's thread writes both the status and
/// the checkpoints, so no checkpoint takes the freed blocks in between.
#[derive(Debug)]
pub(crate) struct StatusFile {
    dir: std::path::PathBuf,
    last: Vec<u8>,
    reserved: bool,
}

/// The reserve's size: room for the status file many times over.
const RESERVE: usize = 64 << 10;

impl StatusFile {
    pub(crate) fn new(dir: &Path) -> StatusFile {
        let mut file = StatusFile { dir: dir.to_path_buf(), last: Vec::new(), reserved: false };
        file.reserve();
        file
    }

    pub(crate) fn write(&mut self, s: &DaemonStatus) {
        let Ok(json) = serde_json::to_vec_pretty(s) else { return };
        if json == self.last {
            return;
        }
        let path = self.dir.join("daemon.json");
        let mut written = write_whole(&path, &json);
        if written.as_ref().is_err_and(|e| e.source.kind() == std::io::ErrorKind::StorageFull) && self.reserved {
            let _ = std::fs::remove_file(self.reserve_path());
            self.reserved = false;
            written = write_whole(&path, &json);
        }
        if written.is_ok() {
            self.last = json;
            self.reserve();
        }
    }

    fn reserve_path(&self) -> std::path::PathBuf {
        self.dir.join(".daemon.json.reserve")
    }

    /// Makes the reserve if there is none (a disk still full leaves none, and no part).
    fn reserve(&mut self) {
        if self.reserved {
            return;
        }
        let path = self.reserve_path();
        self.reserved = std::fs::write(&path, [0; RESERVE]).is_ok();
        if !self.reserved {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Writes `bytes` to `path` whole: into `.NAME.tmp` beside it, then renamed over it, so
/// that a reader sees the file complete or not at all (a `.reason` file read as soon as
/// it appeared was empty now and then).
pub(crate) fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), textorigin_store::error::IoError> {
    use textorigin_store::error::IoContext;
    let name = path.file_name().map_or_else(Default::default, |n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    std::fs::write(&tmp, bytes).io(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).io(|| format!("cannot rename {} to {}", tmp.display(), path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 21, item 13: `stats` said "running" for a daemon killed with -9.
    #[test]
    fn a_status_whose_process_holds_no_lock_reads_gone() {
        let dir = tempfile::tempdir().unwrap();
        let running = DaemonStatus { pid: std::process::id(), state: DaemonState::Running, ..DaemonStatus::default() };
        StatusFile::new(dir.path()).write(&running);
        let db = textorigin_store::storage::datadir::db_path(dir.path());
        std::fs::create_dir_all(&db).unwrap();
        std::fs::write(db.join("LOCK"), b"").unwrap();
        assert_eq!(DaemonStatus::read(dir.path()).unwrap().state, DaemonState::Gone, "nobody holds the lock");
        let store = textorigin_store::storage::store::Store::open(&db).unwrap(); // locks LOCK, in this process
        assert_eq!(lock_holder(&db.join("LOCK")), Some(Some(std::process::id())));
        assert_eq!(DaemonStatus::read(dir.path()).unwrap().state, DaemonState::Running, "this process holds it");
        drop(store);
    }

    /// The CI run of 2026-11-30: on a full tmpfs the daemon's status, which says the
    /// disk is full, could not be written (its new file needs a page) unless a processed
    /// spool file had just freed one, so `stats` showed "running" with no error for a
    /// minute. The status file keeps a reserve that it gives up to write on a full disk.
    #[test]
    fn the_status_is_written_on_a_full_disk() {
        let dir = tempfile::tempdir().unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(dir.path())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            eprintln!("SKIPPED the_status_is_written_on_a_full_disk: cannot mount a tmpfs here (needs root)");
            return;
        }
        struct Unmount<'a>(&'a Path);
        impl Drop for Unmount<'_> {
            fn drop(&mut self) {
                let _ = std::process::Command::new("umount").arg("-l").arg(self.0).status();
            }
        }
        let _unmount = Unmount(dir.path());
        let mut file = StatusFile::new(dir.path());
        file.write(&DaemonStatus { pid: 7, ..DaemonStatus::default() });
        {
            use std::io::Write;
            let mut ballast = std::fs::File::create(dir.path().join("ballast")).unwrap();
            while ballast.write_all(&[0x5a; 4096]).is_ok() {}
        }
        let full = DaemonStatus {
            pid: 7,
            state: DaemonState::Degraded { kept: 3 },
            checkpoint_error: Some("no space left".into()),
            ..DaemonStatus::default()
        };
        for round in 0..3 {
            let shown = DaemonStatus { files_failed: round, ..full.clone() };
            file.write(&shown);
            let read: DaemonStatus =
                serde_json::from_slice(&std::fs::read(dir.path().join("daemon.json")).unwrap()).unwrap();
            assert_eq!(
                (read.state, read.checkpoint_error, read.files_failed),
                (shown.state, shown.checkpoint_error, round),
                "round {round}"
            );
        }
    }

    #[test]
    fn states_round_trip_through_their_text() {
        for s in [
            DaemonState::Running,
            DaemonState::Stopped,
            DaemonState::Degraded { kept: 3 },
            DaemonState::NoSpool,
            DaemonState::Gone,
            DaemonState::Unwritten,
        ] {
            assert_eq!(s.to_string().parse::<DaemonState>(), Ok(s));
        }
        assert_eq!(
            DaemonState::Degraded { kept: 3 }.to_string(),
            "degraded: 3 file(s) could not be processed; retrying"
        );
        assert!("sleeping".parse::<DaemonState>().is_err());
        let json =
            serde_json::to_string(&DaemonStatus { state: DaemonState::Stopped, ..DaemonStatus::default() }).unwrap();
        assert!(json.contains(r#""state":"stopped""#), "{json}");
    }
}
