//! `stats --prometheus`: the statistics in the Prometheus text exposition format
//! (version 0.0.4), for node_exporter's textfile collector or any scraper: one `# HELP`
//! and `# TYPE` line per metric, then its samples. Counters end in `_total`.

use std::fmt::Write;

use super::model::StatsView;
use crate::status::DaemonState;
use textorigin_store::telemetry::{Histogram, Latency, StageTimes, LATENCY_BOUNDS};

/// One metric: name, type, help, samples as (labels, value).
struct Metric<'a> {
    name: &'a str,
    kind: &'a str,
    help: &'a str,
    samples: Vec<(String, f64)>,
}

fn one(name: &'static str, kind: &'static str, help: &'static str, v: f64) -> Metric<'static> {
    Metric { name, kind, help, samples: vec![(String::new(), v)] }
}

fn sections(name: &'static str, kind: &'static str, help: &'static str, v: [f64; 3]) -> Metric<'static> {
    let samples =
        ["df", "signatures", "neardup_keys"].iter().zip(v).map(|(s, v)| (format!("{{section=\"{s}\"}}"), v)).collect();
    Metric { name, kind, help, samples }
}

/// The metrics of `v`.
pub fn stats(v: &StatsView) -> String {
    let t = &v.table;
    let i = &v.indexes;
    let c = &i.counters;
    let mut metrics = vec![
        one("textorigin_documents", "gauge", "Documents stored.", v.documents as f64),
        one(
            "textorigin_revision_queue",
            "gauge",
            "Documents waiting in the revision queue (take-overs beyond their budget).",
            v.revision_queue as f64,
        ),
        one("textorigin_table_bytes", "gauge", "Size of the shingle table.", t.bytes as f64),
        one("textorigin_store_disk_bytes", "gauge", "Bytes of the store's files on disk.", v.store_disk_bytes as f64),
        one(
            "textorigin_store_wal_bytes",
            "gauge",
            "Bytes of the store's write-ahead logs (documents not flushed to table files yet).",
            v.store_log_bytes as f64,
        ),
        one("textorigin_table_capacity_entries", "gauge", "Entries the shingle table holds.", t.capacity as f64),
        one(
            "textorigin_table_buckets_in_use",
            "gauge",
            "Buckets of the shingle table in use (it grows inside its file).",
            t.used_buckets as f64,
        ),
        one("textorigin_table_occupied_entries", "gauge", "Entries of the shingle table in use.", t.occupied as f64),
        one("textorigin_table_inserts_total", "counter", "Shingles inserted into the table.", t.inserts as f64),
        one("textorigin_table_evictions_total", "counter", "Table entries evicted to make room.", t.evictions as f64),
        one("textorigin_table_lookups_total", "counter", "Selected shingles looked up.", t.lookups as f64),
        one("textorigin_table_hits_total", "counter", "Lookups that found their shingle.", t.hits as f64),
        one("textorigin_shingles_total", "counter", "k-shingles of all applied documents.", v.shingles as f64),
        one("textorigin_index_bytes", "gauge", "Size of the derived indexes.", i.bytes as f64),
        sections(
            "textorigin_index_capacity_entries",
            "gauge",
            "Entries each derived index holds.",
            [i.df_capacity as f64, i.signature_capacity as f64, i.neardup_capacity as f64],
        ),
        sections(
            "textorigin_index_inserts_total",
            "counter",
            "Entries inserted into each derived index.",
            [c.df_inserts as f64, c.sig_inserts as f64, c.nd_inserts as f64],
        ),
        sections(
            "textorigin_index_evictions_total",
            "counter",
            "Entries evicted from each derived index (what the bound costs).",
            [c.df_evictions as f64, c.sig_evictions as f64, c.nd_evictions as f64],
        ),
        Metric {
            name: "textorigin_feature_enabled",
            kind: "gauge",
            help: "1 when the data directory has the feature on, 0 when it is off (nothing is computed for it).",
            samples: [("origins", v.origins), ("near_duplicates", v.near_duplicates), ("quotations", v.quotations)]
                .iter()
                .map(|(f, on)| (format!("{{feature=\"{f}\"}}"), f64::from(u8::from(*on))))
                .collect(),
        },
    ];
    if let Some(d) = &v.daemon {
        let (running, kept, no_spool) = match d.state {
            DaemonState::Running => (1.0, 0.0, 0.0),
            DaemonState::Degraded { kept } => (1.0, kept as f64, 0.0),
            DaemonState::NoSpool => (1.0, 0.0, 1.0),
            DaemonState::Unwritten => (1.0, 0.0, 0.0),
            DaemonState::Stopped | DaemonState::Gone => (0.0, 0.0, 0.0),
        };
        metrics.extend([
            one("textorigin_daemon_running", "gauge", "1 while the daemon's last status says it runs.", running),
            one(
                "textorigin_daemon_files_kept",
                "gauge",
                "Spool files that could not be processed and wait (degraded when > 0).",
                kept,
            ),
            one(
                "textorigin_daemon_degraded",
                "gauge",
                "1 while the daemon runs degraded: spool files wait after errors, or the spool cannot be read.",
                f64::from(u8::from(matches!(d.state, DaemonState::Degraded { .. } | DaemonState::NoSpool))),
            ),
            one(
                "textorigin_daemon_spool_unreadable",
                "gauge",
                "1 while the spool directory cannot be read (degraded).",
                no_spool,
            ),
            one(
                "textorigin_daemon_started_at_seconds",
                "gauge",
                "Start of the daemon, Unix time.",
                d.started_at_ms as f64 / 1e3,
            ),
            one(
                "textorigin_daemon_files_admitted_total",
                "counter",
                "Spool files admitted in this run.",
                d.files_admitted as f64,
            ),
            one(
                "textorigin_daemon_files_failed_total",
                "counter",
                "Spool files whose documents failed, whole or in part (moved to failed/), counted in the store across restarts.",
                d.files_failed as f64,
            ),
            one("textorigin_daemon_spool_backlog", "gauge", "Files waiting in spool/new.", d.spool_backlog as f64),
            one(
                "textorigin_daemon_last_applied",
                "gauge",
                "Sequence number of the last applied document.",
                d.last_applied as f64,
            ),
            one(
                "textorigin_daemon_last_checkpoint_seq",
                "gauge",
                "Sequence number of the newest checkpoint.",
                d.last_checkpoint_seq as f64,
            ),
            one("textorigin_daemon_documents_per_second", "gauge", "Recent ingestion rate.", d.documents_per_second),
        ]);
    }
    render(metrics)
}

/// The exposition text of `metrics`: each one's `# HELP` and `# TYPE` lines, then its
/// samples (a sample's key follows the name: labels, or a histogram's suffix and labels).
fn render(metrics: Vec<Metric<'_>>) -> String {
    let mut out = String::new();
    for m in metrics {
        let _ = writeln!(out, "# HELP {} {}\n# TYPE {} {}", m.name, m.help, m.name, m.kind);
        for (labels, value) in m.samples {
            let _ = writeln!(out, "{}{labels} {value}", m.name);
        }
    }
    out
}

/// The daemon's measurements since it opened its data directory (the HTTP inspector's
/// `/metrics` adds them): seconds per ingestion stage in all, histograms of a
/// document's apply latency and of its seconds per stage, text bytes, and the age of
/// the newest checkpoint (its meta file's time).
pub fn telemetry(times: &StageTimes, latency: &Latency, checkpoint_age: Option<f64>) -> String {
    // A histogram's samples: cumulative buckets, sum and count, each with `labels`.
    let histogram = |labels: &str, h: &Histogram| -> Vec<(String, f64)> {
        let sep = if labels.is_empty() { "" } else { "," };
        let braces = if labels.is_empty() { String::new() } else { format!("{{{labels}}}") };
        let bounds = LATENCY_BOUNDS.iter().map(|b| b.to_string()).chain(["+Inf".to_string()]);
        let counts = h.buckets.iter().copied().chain([h.count]);
        let mut samples: Vec<(String, f64)> =
            bounds.zip(counts).map(|(b, n)| (format!("_bucket{{{labels}{sep}le=\"{b}\"}}"), n as f64)).collect();
        samples.push((format!("_sum{braces}"), h.sum));
        samples.push((format!("_count{braces}"), h.count as f64));
        samples
    };
    let stages = times.named();
    let mut metrics = vec![
        Metric {
            name: "textorigin_stage_seconds_total",
            kind: "counter",
            help: "Seconds spent per ingestion stage since the daemon opened its data directory.",
            samples: stages.iter().map(|(stage, v)| (format!("{{stage=\"{stage}\"}}"), *v)).collect(),
        },
        Metric {
            name: "textorigin_document_apply_seconds",
            kind: "histogram",
            help: "Seconds from a document's analysis to its stored batch.",
            samples: histogram("", &latency.document),
        },
        Metric {
            name: "textorigin_document_stage_seconds",
            kind: "histogram",
            help: "Seconds of one document in one ingestion stage.",
            samples: stages
                .iter()
                .skip(1)
                .zip(&latency.stages)
                .flat_map(|((stage, _), h)| histogram(&format!("stage=\"{stage}\""), h))
                .collect(),
        },
        one(
            "textorigin_text_bytes_total",
            "counter",
            "Bytes of the documents' texts applied since the daemon opened its data directory.",
            latency.text_bytes as f64,
        ),
        Metric {
            name: "textorigin_feature_documents_total",
            kind: "counter",
            help:
                "Documents each switchable feature worked on since the daemon opened its data directory (0 when off).",
            samples: [("near_duplicates", times.sketches), ("quotations", times.quote_searches)]
                .iter()
                .map(|(f, n)| (format!("{{feature=\"{f}\"}}"), *n as f64))
                .collect(),
        },
    ];
    if let Some(age) = checkpoint_age {
        metrics.push(one(
            "textorigin_checkpoint_age_seconds",
            "gauge",
            "Seconds since the newest checkpoint was written.",
            age,
        ));
    }
    render(metrics)
}
