//! Logging: `tracing` to standard error, or for the daemon to a file that SIGHUP
//! reopens (log rotation). The filter comes from `TEXTORIGIN_LOG`, else `RUST_LOG`
//! (tracing's `EnvFilter` syntax: `info`, `warn,textorigin_server=debug`); by default the
//! daemon logs its own crates at info (start, checkpoints, stop) and everything else at
//! warn, and the other commands log warnings only.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

/// The daemon's log file, reopened on SIGHUP.
struct LogFile {
    path: PathBuf,
    file: Mutex<File>,
}

impl LogFile {
    fn open(path: &Path) -> std::io::Result<Arc<LogFile>> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Arc::new(LogFile { path: path.to_path_buf(), file: Mutex::new(file) }))
    }

    fn reopen(&self) {
        match OpenOptions::new().create(true).append(true).open(&self.path) {
            Ok(f) => *self.file.lock().unwrap_or_else(PoisonError::into_inner) = f,
            Err(e) => eprintln!("cannot reopen log file {}: {e}", self.path.display()),
        }
    }
}

/// One log event's writer: holds the file while the event is written.
struct LogGuard<'a>(MutexGuard<'a, File>);

impl Write for LogGuard<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// The tracing writer over the shared log file.
struct LogWriter(Arc<LogFile>);

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogWriter {
    type Writer = LogGuard<'a>;
    fn make_writer(&'a self) -> LogGuard<'a> {
        LogGuard(self.0.file.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

static LOG_FILE: OnceLock<Arc<LogFile>> = OnceLock::new();

/// The daemon's default filter: its own crates at info.
pub const DAEMON_DEFAULT: &str =
    "warn,textorigin=info,textorigin_server=info,textorigin_store=info,textorigin_core=info";

/// Installs the subscriber: to `file` when given, else to standard error; `default`
/// is the filter when neither variable is set.
pub fn init(file: Option<&Path>, default: &str) -> std::io::Result<()> {
    let filter = || {
        tracing_subscriber::EnvFilter::try_from_env("TEXTORIGIN_LOG")
            .or_else(|_| tracing_subscriber::EnvFilter::try_from_env("RUST_LOG"))
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default))
    };
    match file {
        Some(path) => {
            let f = LogFile::open(path)?;
            tracing_subscriber::fmt()
                .with_env_filter(filter())
                .with_writer(LogWriter(Arc::clone(&f)))
                .with_ansi(false)
                .log_internal_errors(false)
                .init();
            let _ = LOG_FILE.set(f);
        }
        // A log line that cannot be written is dropped: reporting that on standard error
        // (tracing's default) would panic when standard error is the closed pipe.
        None => tracing_subscriber::fmt()
            .with_env_filter(filter())
            .with_writer(std::io::stderr)
            .log_internal_errors(false)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init(),
    }
    Ok(())
}

/// Reopens the log file (after SIGHUP); false when logging goes to standard error.
pub fn reopen() -> bool {
    LOG_FILE.get().map(|f| f.reopen()).is_some()
}
