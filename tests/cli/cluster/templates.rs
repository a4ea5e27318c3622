//! One node's default site templates in a deployment: every partition counts every
//! document's lines in its store (its pages' template lines, and those a later page of
//! another partition brings to the threshold), and every worker counts them in memory
//! (kept in its checkpoint slots) to make each document's index work without its own
//! template lines, as its owner's analysis searches and indexes it.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::fixture;

use super::{assert_equal, cluster_of, corpus, shuffled, single_of, with_sites, Nats, OneShard, UNBOUNDED_REVISIONS};

/// A configuration of one node's defaults (site templates labelled, the adaptive
/// density) on a table small enough to evict: (its directory, the file).
fn with_defaults() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("config.toml");
    std::fs::write(&config, "table_size = \"64KiB\"\nexact_copies = false\n").unwrap();
    (tmp, config)
}

/// How many documents of an export have template lines, and how many quotations.
fn labelled(export: &[Value]) -> (usize, usize) {
    let templated = export.iter().filter(|d| d["template_tokens"].as_u64().unwrap_or(0) > 0).count();
    let quoting = export.iter().filter(|d| d["quotations"].as_array().is_some_and(|q| !q.is_empty())).count();
    (templated, quoting)
}

/// A deployment with one node's defaults labels the site templates one node labels and
/// searches and indexes each document without its own (near-duplicate keys, quotation
/// signatures, document frequencies): one node's export and table with one partition or
/// two (each site's pages on both), in date order and shuffled.
#[test]
fn a_deployment_with_default_settings_labels_site_templates_as_one_node_does() {
    let (tmp, config) = with_defaults();
    let files = with_sites(tmp.path(), &corpus(tmp.path(), 1));
    let shuffled = shuffled(tmp.path(), &files);
    for (files, one_args, runs) in [
        (&files, &[][..], &[&["--shards", "1"][..], &["--shards", "2", "--partitions", "2"]][..]),
        (&shuffled, UNBOUNDED_REVISIONS, &[&["--shards", "2", "--partitions", "2"][..]]),
    ] {
        let round = tempfile::tempdir().unwrap();
        let one = single_of(round.path(), &config, files, one_args);
        let (templated, quoting) = labelled(&one.0);
        assert!(templated > 100 && quoting > 100, "pages with template lines and quotations: {templated}, {quoting}");
        for args in runs {
            let c = cluster_of(round.path(), &config, files, &[*args, &["--servers", "1"]].concat());
            assert_equal(&one, &c, &format!("{args:?}, site templates"));
        }
    }
}

/// A site whose footer is template from its fifth page on, quoted by pages of another
/// site: their quotations find the footer on the pages that indexed it, the first four
/// (a page's own template sentences are not indexed). In `tmp`.
fn quoted_footer(tmp: &Path) -> Vec<PathBuf> {
    const WORDS: [&str; 16] = [
        "river", "bridge", "council", "engineer", "budget", "winter", "harbour", "station", "market", "library",
        "garden", "tunnel", "ferry", "school", "museum", "stadium",
    ];
    let footer =
        "Copyright Example Widgets Company, all rights reserved worldwide since the year two thousand and one.";
    let mut state = 7u64;
    let mut word = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        WORDS[(state >> 60) as usize]
    };
    let mut body =
        |n: usize| -> String { (0..n).map(|_| (0..8).map(|_| word()).collect::<Vec<_>>().join(" ") + ".\n").collect() };
    let mut out = String::new();
    let mut page = |site: &str, date: String, text: String| {
        let doc =
            serde_json::json!({ "id": format!("{site}/{date}"), "site": site, "published_at": date, "text": text });
        out += &(doc.to_string() + "\n");
    };
    for i in 1..=12 {
        page(
            "widgets",
            format!("2020-01-{i:02}"),
            format!("Home | Products | Support | Contact\n{}{footer}\n", body(4)),
        );
    }
    for i in 1..=4 {
        page("news", format!("2020-02-{i:02}"), format!("{}{footer}\n{}", body(3), body(2)));
    }
    let path = tmp.join("footer.jsonl");
    std::fs::write(&path, out).unwrap();
    vec![path]
}

/// A worker restarted from a checkpoint slot goes on counting each site's lines from
/// where the slot left them (the slot keeps them): else the pages after it would index
/// the footer that is template on them, and the quotations of it would find them too.
#[test]
fn a_worker_restarted_from_a_slot_goes_on_counting_the_sites_lines() {
    let (tmp, config) = with_defaults();
    let files = quoted_footer(tmp.path());
    let one = single_of(tmp.path(), &config, &files, &[]);
    let quoting: Vec<&Value> =
        one.0.iter().filter(|d| d["quotations"].as_array().is_some_and(|q| !q.is_empty())).collect();
    assert!(quoting.len() >= 4, "the other site's pages quote the footer: {quoting:?}");
    let until = "7";
    let nats = Nats::start(tmp.path(), 1);
    let d = OneShard::init(tmp.path(), &nats.url, &config, &[]);
    let last = d.submit(&files);
    assert_equal(&one, &d.restarted_at(until, &last), "a worker restarted from a slot");
}

/// The HTML files of a folder are one site in a deployment as on one node (`cluster
/// submit` reads files as `ingest` does): the pages of Python's documentation, read
/// whole, with their navigation and footer labelled template.
#[test]
fn the_html_files_of_a_folder_are_one_site_as_on_one_node() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("config.toml");
    std::fs::write(&config, "html = \"all\"\nexact_copies = false\n").unwrap();
    let files = [fixture("site")];
    let one = single_of(tmp.path(), &config, &files, &[]);
    assert!(labelled(&one.0).0 >= 4, "pages with template lines");
    let c = cluster_of(tmp.path(), &config, &files, &["--shards", "2", "--partitions", "2", "--servers", "1"]);
    assert_equal(&one, &c, "a folder of HTML files");
}
