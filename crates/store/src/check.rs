//! `check`: verifies a data directory without changing it: both checkpoint slots, the
//! store's invariants (contiguous sequence numbers, a result and a text for every
//! document, no spool file admitted twice) and the agreement of table and store.

use std::collections::HashMap;
use std::path::Path;

use crate::storage::checkpoint;
use crate::storage::datadir::{writer_gone, DataDir, DataDirError};

/// What `check` found.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct CheckReport {
    /// One line per checkpoint slot.
    pub slots: Vec<String>,
    /// Documents in the store.
    pub documents: u64,
    /// The table's last applied document.
    pub table_last: u64,
    /// Whether the table is marked in use by a writer.
    pub table_in_use: bool,
    /// Whether a live process has the data directory open for writing (the store's lock
    /// is held, as `/proc/locks` says): a table marked in use without one was left by a
    /// writer that died.
    pub writer_alive: bool,
    /// xxh3-64 of the table's buckets, hex.
    pub table_digest: String,
    /// Which state of the table the digest is of, when it is not the table's now: that
    /// of a live writer's last flush ([`digest_state`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest_of: Option<String>,
    /// Broken invariants, each named.
    pub violations: Vec<String>,
}

/// Checks the data directory `dir`.
pub fn check(dir: &Path) -> Result<CheckReport, DataDirError> {
    let dd = DataDir::open_read(dir)?;
    let mut r = CheckReport::default();
    let verified: Vec<_> = (0..2).map(|slot| checkpoint::verify(dir, slot)).collect();
    for slot in 0..2 {
        let name = checkpoint::slot_name(slot);
        let other = verified[1 - slot].as_ref().ok();
        match (&verified[slot], checkpoint::read_meta(dir, slot)) {
            (Ok(m), _) => {
                r.slots.push(format!("checkpoint slot {name}: generation {}, documents up to #{}", m.generation, m.seq))
            }
            (Err(e), None) => r.slots.push(format!("checkpoint slot {name}: empty ({e})")),
            // The older slot is the one a checkpoint overwrites: a daemon writing it now,
            // or a crash while it wrote it, leaves its bytes unlike its meta. Normal: the
            // newer slot (and the replay after it) is what recovery uses.
            (Err(e), Some(m)) if other.is_some_and(|o| o.generation > m.generation) => r.slots.push(format!(
                "checkpoint slot {name}: being rewritten or torn by a crash ({e}); recovery uses the newer slot"
            )),
            (Err(e), Some(_)) => r.violations.push(format!("checkpoint {e}")),
        }
    }
    let next = dd.store().next_seq()?;
    let mut expected = 1;
    let mut seen = HashMap::new();
    for meta in dd.store().docs() {
        let meta = meta?;
        if meta.seq != expected {
            r.violations.push(format!("sequence numbers are not contiguous: #{} follows #{}", meta.seq, expected - 1));
        }
        expected = meta.seq + 1;
        if dd.store().result(meta.seq)?.is_none() {
            r.violations.push(format!("document #{} has no result", meta.seq));
        }
        if dd.store().text(meta.seq)?.is_none() {
            r.violations.push(format!("document #{} has no text", meta.seq));
        }
        if let Some(prev) = seen.insert((meta.source.clone(), meta.content_hash.clone(), meta.name.clone()), meta.seq) {
            if meta.source.contains("/spool/") {
                r.violations.push(format!("document #{} repeats #{prev} (same spool file and content)", meta.seq));
            }
        }
    }
    if expected != next {
        r.violations
            .push(format!("the store's next sequence number is {next} but its last document is #{}", expected - 1));
    }
    let t = dd.table().stats();
    r.documents = next - 1;
    r.table_last = t.last_seq;
    r.table_in_use = dd.table().in_use();
    // Not alive only when the kernel says that nobody holds the store's lock (without
    // `/proc/locks` that cannot be told, and no writer is called dead).
    r.writer_alive = !writer_gone(dir);
    r.table_digest = format!("{:016x}", dd.table().digest());
    r.digest_of = digest_state(dir, r.table_in_use && r.writer_alive);
    // Beside a live writer the table file changes under the reader (a header written
    // before the buckets it describes); its newest checkpoint is a state it never
    // writes into.
    let live = r.table_in_use && r.writer_alive;
    let checkpoint = if live { dd.checkpoint_table()? } else { None };
    let table = if live { checkpoint.as_ref() } else { Some(dd.table()) };
    if let Some(((bucket, slot, c), shift)) = table.and_then(|t| t.misplaced().map(|m| (m, t.shift()))) {
        r.violations.push(format!(
            "the table's bucket shift {shift} (its header) does not fit its entries: bucket {bucket}, slot {slot} holds an entry of final bucket {c}, which shift {shift} puts in bucket {}; the header was changed: run `textorigin rebuild`",
            c >> shift
        ));
    }
    if r.table_in_use && !r.writer_alive {
        r.violations.push(format!(
            "the table is marked in use but no process writes it: its writer died (kill -9, a power loss, an interrupted recovery) after document #{}; the next `ingest` or `serve` recovers it at start (or run `textorigin rebuild`)",
            t.last_seq
        ));
    } else if !r.table_in_use && t.last_seq != next - 1 {
        r.violations.push(format!("the table holds documents up to #{} but the store up to #{}", t.last_seq, next - 1));
    }
    Ok(r)
}

/// The violations of a report that are losses of the store's own data (a document's
/// text or results, or documents missing from the sequence), not of the table, which
/// the next start brings in step.
pub fn losses(report: &CheckReport) -> Vec<String> {
    let lost = |v: &&String| {
        v.starts_with("document #") || v.starts_with("sequence numbers") || v.starts_with("the store's next sequence")
    };
    report.violations.iter().filter(lost).cloned().collect()
}

/// What a digest of the table file read beside a live writer is of (`check`
/// and `stats` printed it as if it were the daemon's table): the writer changes its
/// buckets in memory and writes them to the file at its checkpoints, so the file holds
/// its newest checkpoint's state. None without a live writer.
pub fn digest_state(dir: &Path, live_writer: bool) -> Option<String> {
    live_writer.then(|| match checkpoint::newest_valid(dir) {
        Some((_, m)) => format!(
            "of the table file as the live writer last wrote it, at its checkpoint of documents up to #{}; newer documents are in its memory",
            m.seq
        ),
        None => "of the table file as the live writer last wrote it (no checkpoint yet); newer documents are in its memory".into(),
    })
}
