//! Logging: `tracing` to standard error, or for the daemon to a file that SIGHUP
//! reopens (log rotation). The filter comes from `TEXTORIGIN_LOG`, else `RUST_LOG`
//! (tracing's `EnvFilter` syntax: `info`, `warn,textorigin_server=debug`); by default the
//! daemon logs its own crates at info (start, checkpoints, stop) and everything else at
//! warn, and the other commands log warnings only.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

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

/// At most this many warnings or errors from one place of the code ...
const BURST: u32 = 10;
/// ... in this long: a fault that repeats (a full disk) filled the log with 3,536
/// ERROR lines in 14 s. What is held back is counted and said next time.
const WINDOW: Duration = Duration::from_secs(10);

/// Holds back repeated warnings and errors: `burst` a `window` from one call site
/// ([`BURST`] and [`WINDOW`]), and says how many it held back when the place logs
/// again. A writer ([`tracing_subscriber::fmt::MakeWriter`]) around the log's: it
/// sees each event's metadata as the event is written, and writes the line it adds
/// itself (an event logged from inside the subscriber would re-enter it).
struct Throttled<W> {
    inner: W,
    burst: u32,
    window: Duration,
    /// Per call site: when its window began, events passed in it, events held back.
    seen: Mutex<HashMap<tracing::callsite::Identifier, (Instant, u32, u64)>>,
}

impl<W> Throttled<W> {
    fn new(inner: W, burst: u32, window: Duration) -> Throttled<W> {
        Throttled { inner, burst, window, seen: Mutex::default() }
    }

    /// Whether an event of `meta` is written, and the count of its place held back
    /// before it (to be said first).
    fn decide(&self, meta: &tracing::Metadata<'_>) -> (bool, u64) {
        if *meta.level() > tracing::Level::WARN {
            return (true, 0);
        }
        let now = Instant::now();
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        let e = seen.entry(meta.callsite()).or_insert((now, 0, 0));
        if now.duration_since(e.0) >= self.window {
            let held = e.2;
            *e = (now, 1, 0);
            (true, held)
        } else if e.1 < self.burst {
            e.1 += 1;
            (true, 0)
        } else {
            e.2 += 1;
            (false, 0)
        }
    }
}

impl<'a, W: tracing_subscriber::fmt::MakeWriter<'a>> tracing_subscriber::fmt::MakeWriter<'a> for Throttled<W> {
    type Writer = tracing_subscriber::fmt::writer::EitherWriter<W::Writer, std::io::Sink>;

    fn make_writer(&'a self) -> Self::Writer {
        tracing_subscriber::fmt::writer::EitherWriter::A(self.inner.make_writer())
    }

    fn make_writer_for(&'a self, meta: &tracing::Metadata<'_>) -> Self::Writer {
        use tracing_subscriber::fmt::time::FormatTime;
        match self.decide(meta) {
            (false, _) => tracing_subscriber::fmt::writer::EitherWriter::B(std::io::sink()),
            (true, held) => {
                let mut w = self.inner.make_writer_for(meta);
                if held > 0 {
                    let mut now = String::new();
                    let _ = tracing_subscriber::fmt::time::SystemTime
                        .format_time(&mut tracing_subscriber::fmt::format::Writer::new(&mut now));
                    let _ = writeln!(
                        w,
                        "{now}  WARN {}: {held} messages like the next one were held back (at most {} every {} s from one place)",
                        meta.target(),
                        self.burst,
                        self.window.as_secs_f64()
                    );
                }
                tracing_subscriber::fmt::writer::EitherWriter::A(w)
            }
        }
    }
}

/// The daemon's default filter: its own crates at info.
pub const DAEMON_DEFAULT: &str =
    "warn,textorigin=info,textorigin_server=info,textorigin_store=info,textorigin_core=info";

/// A deployment's services' default filter (`cluster worker`, `cluster aggregate`):
/// warnings, and what the log's readers wait for.
pub const CLUSTER_DEFAULT: &str = "warn,textorigin_cluster=info";

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
                .with_writer(Throttled::new(LogWriter(Arc::clone(&f)), BURST, WINDOW))
                .with_ansi(false)
                .log_internal_errors(false)
                .init();
            let _ = LOG_FILE.set(f);
        }
        // A log line that cannot be written is dropped: reporting that on standard error
        // (tracing's default) would panic when standard error is the closed pipe.
        None => tracing_subscriber::fmt()
            .with_env_filter(filter())
            .with_writer(Throttled::new(std::io::stderr, BURST, WINDOW))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer into a shared buffer.
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Issue 53: an error repeated 500 times from one place is logged BURST times,
    /// another place's errors and the infos pass, and the count held back is said
    /// when the place logs again after the window.
    #[test]
    fn repeated_errors_from_one_place_are_held_back_and_counted() {
        let out = Buffer::default();
        let writer = out.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(Throttled::new(move || writer.clone(), BURST, Duration::from_millis(300)))
            .with_ansi(false)
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            for i in 0..500 {
                tracing::error!(i, "the disk is full");
                if i % 100 == 0 {
                    tracing::error!(i, "another place");
                    tracing::info!(i, "an info");
                }
            }
            std::thread::sleep(Duration::from_millis(400));
            for i in 0..3 {
                tracing::error!(i, "the disk is still full");
            }
        });
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text.matches("the disk is full").count(), BURST as usize, "{text}");
        assert_eq!(text.matches("another place").count(), 5);
        assert_eq!(text.matches("an info").count(), 5);
        // The first of the second burst is the first of its place: nothing held back.
        assert_eq!(text.matches("the disk is still full").count(), 3);
        assert!(!text.contains("held back"), "nothing held back to say yet: {text}");
    }

    /// After the window, the place that was held back says how many were.
    #[test]
    fn the_count_held_back_is_said_when_the_place_logs_again() {
        let out = Buffer::default();
        let writer = out.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(Throttled::new(move || writer.clone(), 2, Duration::from_millis(300)))
            .with_ansi(false)
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            for round in 0..2 {
                for i in 0..7 {
                    tracing::error!(round, i, "cannot write");
                }
                std::thread::sleep(Duration::from_millis(400));
            }
        });
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text.matches("cannot write").count(), 4, "{text}");
        assert!(text.contains("5 messages like the next one were held back"), "{text}");
    }
}
