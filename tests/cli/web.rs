//! Web pages as users crawl them: a documentation site's template is not
//! copied text, a planted copy is found with its origin, WARC files are read a page a
//! record.

use serde_json::Value;

use crate::util::*;

/// Old tokens over the tokens counted old or fresh (site templates aside), per
/// document, in percent, sorted.
fn old_shares(dir: &std::path::Path) -> Vec<f64> {
    let docs = json(dir, &["list", "--json"]);
    let counted = |d: &Value| d["tokens"].as_f64().unwrap() - d["template_tokens"].as_f64().unwrap_or(0.0);
    let mut shares: Vec<f64> = docs
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["old_tokens"].as_f64().unwrap() * 100.0 / counted(d).max(1.0))
        .collect();
    shares.sort_by(f64::total_cmp);
    shares
}

fn median(v: &[f64]) -> f64 {
    v[v.len() / 2]
}

/// Eight pages of Python's documentation (Sphinx), `spwd.html` with a paragraph of
/// `queue.html` planted in its body (`tests/fixtures/README.md`).
#[test]
fn a_sites_template_is_not_copied_text_and_a_planted_copy_keeps_its_origin() {
    let site = fixture("site");
    let main = tempfile::tempdir().unwrap();
    let out = ingest(main.path(), &[], &[&site]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let all = tempfile::tempdir().unwrap();
    let out = ingest(all.path(), &["--html", "all", "--templates", "off"], &[&site]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (main_old, all_old) = (old_shares(main.path()), old_shares(all.path()));
    assert!(median(&main_old) < 1.0, "main content: {main_old:?}");
    assert!(median(&all_old) > 5.0, "the whole page holds the site's navigation and footer: {all_old:?}");
    // No page names another as its dominant origin (the planted page is mostly its own).
    for d in json(main.path(), &["list", "--json"]).as_array().unwrap() {
        let name = d["name"].as_str().unwrap();
        assert_eq!(d["dominant_origin"]["name"].as_str().unwrap_or(name), name, "{d}");
    }
    // The planted paragraph is one block from queue, edge to edge.
    let doc = json(main.path(), &["show", "spwd", "--json"]);
    let blocks: Vec<&Value> = doc["copied_blocks"].as_array().unwrap().iter().collect();
    assert_eq!(blocks.len(), 1, "{blocks:?}");
    assert_eq!(blocks[0]["origin"]["name"], "queue");
    let copied = blocks[0]["text"].as_str().unwrap();
    assert!(copied.starts_with("The module implements three types of queue"), "{copied:?}");
    assert!(copied.ends_with("the lowest valued entry is retrieved first"), "{copied:?}");
    // `show` of a page lists none of the template's lines.
    let shown = ok(main.path(), &["show", "concurrent"]);
    assert!(!shown.contains("Report a Bug") && !shown.contains("Python Software Foundation"), "{shown}");
    // A data directory keeps its setting: asking another is refused.
    let out = ingest(main.path(), &["--html", "all"], &[&site]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("html"), "{}", String::from_utf8_lossy(&out.stderr));
}

/// The same pages read whole (`--html all`): the lines every page of the site holds
/// (navigation, footer, licence) are its template, neither old nor fresh, on the pages
/// before the threshold too; the planted copy keeps its origin.
#[test]
fn a_sites_template_lines_are_labelled_neither_old_nor_fresh() {
    let site = fixture("site");
    let dir = tempfile::tempdir().unwrap();
    let out = ingest(dir.path(), &["--html", "all"], &[&site]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let old = old_shares(dir.path());
    assert!(median(&old) <= 2.0, "template lines are not old: {old:?}");
    for d in json(dir.path(), &["list", "--json"]).as_array().unwrap() {
        let name = d["name"].as_str().unwrap();
        assert_eq!(d["dominant_origin"]["name"].as_str().unwrap_or(name), name, "{d}");
        assert!(d["template_tokens"].as_u64().unwrap() > 0, "{d}");
    }
    // The third page came before any line stood on five pages: it was given its
    // template lines by the fifth, with the pages holding each now.
    let doc = json(dir.path(), &["show", "concurrent", "--json"]);
    let templates = doc["templates"].as_array().unwrap();
    let line =
        |text: &str| templates.iter().find(|t| t["text"] == text).unwrap_or_else(|| panic!("{text}: {templates:?}"));
    assert_eq!(line("Report a Bug")["pages"], 8);
    assert_eq!(line("Created using Sphinx 5.3.0")["pages"], 8);
    assert_eq!(doc["copied_blocks"].as_array().unwrap().len(), 0, "{doc}");
    // The planted paragraph is still one block from queue, edge to edge.
    let doc = json(dir.path(), &["show", "spwd", "--json"]);
    let planted: Vec<&Value> =
        doc["copied_blocks"].as_array().unwrap().iter().filter(|b| b["origin"]["name"] == "queue").collect();
    assert_eq!(planted.len(), 1, "{doc}");
    let copied = planted[0]["text"].as_str().unwrap();
    assert!(copied.starts_with("The module implements three types of queue"), "{copied:?}");
    assert!(copied.ends_with("the lowest valued entry is retrieved first"), "{copied:?}");
    let shown = ok(dir.path(), &["show", "spwd"]);
    assert!(shown.contains("site template lines (") && shown.contains("on 8 pages: \"Report a Bug\""), "{shown}");
    let page = dir.path().join("spwd.html");
    ok(dir.path(), &["show", "spwd", "--html", page.to_str().unwrap()]);
    let page = std::fs::read_to_string(page).unwrap();
    assert!(page.contains("<span class=\"template\" title=\"site template: on 8 pages"), "{page}");
    // The report's most-copied source is the planted paragraph's, not the first page
    // (whose template every page held).
    let report = dir.path().join("report.html");
    ok(dir.path(), &["report", "--html", report.to_str().unwrap()]);
    let report = std::fs::read_to_string(report).unwrap();
    let sources = &report[report.find("ost-copied sources").unwrap()..];
    assert!(sources.find("queue").unwrap() < sources.find("bisect").unwrap_or(usize::MAX), "{sources}");
    // Without labelling, the first page is the others' dominant origin; a reanalysis
    // with the labelling gives the labelled results.
    let off = tempfile::tempdir().unwrap();
    ingest(off.path(), &["--html", "all", "--templates", "off"], &[&site]);
    let doc = json(off.path(), &["show", "concurrent", "--json"]);
    assert_eq!(doc["dominant_origin"]["name"], "bisect", "{doc}");
    assert!(doc.get("templates").is_none());
    ok(off.path(), &["rebuild", "--reanalyse", "--templates", "site"]);
    let doc = json(off.path(), &["show", "concurrent", "--json"]);
    assert_eq!(doc["dominant_origin"]["name"], "concurrent", "{doc}");
    assert_eq!(json(off.path(), &["list", "--json"]), json(dir.path(), &["list", "--json"]));
    ok(off.path(), &["check"]);
}

/// A WARC file `wget --warc-file` wrote against a loopback server.
#[test]
fn a_crawlers_warc_is_ingested_a_page_a_record_with_urls_and_dates() {
    let dir = tempfile::tempdir().unwrap();
    let out = ingest(dir.path(), &[], &[&fixture("warc/pydocs-small.warc.gz")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("14 records read, 3 became documents"), "{stderr}");
    let docs = json(dir.path(), &["list", "--json"]);
    let names: Vec<&str> = docs.as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "127.0.0.1:8766/library/concurrent.html",
            "127.0.0.1:8766/library/queue.html",
            "127.0.0.1:8766/library/sched.html"
        ]
    );
    let doc = json(dir.path(), &["show", "127.0.0.1:8766/library/queue.html", "--json"]);
    assert_eq!(doc["url"], "http://127.0.0.1:8766/library/queue.html", "{doc}");
    assert!(doc["published_at"].as_str().unwrap().starts_with("2026-"), "{doc}");
    // Ingesting it again stores nothing twice.
    let out = ingest(dir.path(), &[], &[&fixture("warc/pydocs-small.warc.gz")]);
    assert!(out.status.success());
    assert_eq!(json(dir.path(), &["list", "--json"]).as_array().unwrap().len(), 3);
}

#[test]
fn a_parquet_or_pdf_file_is_refused_with_its_format_never_read_as_text() {
    let inputs = tempfile::tempdir().unwrap();
    let pdf = inputs.path().join("paper.txt");
    std::fs::write(&pdf, b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = ingest(dir.path(), &[], &[&pdf]);
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("a PDF document"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A Parquet file as a Hugging Face dataset holds one (`scripts/parquet_fixture.py`).
#[test]
fn a_parquet_dataset_is_ingested_a_document_a_row_and_refused_from_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let out = ingest(dir.path(), &[], &[&fixture("parquet/pydocs.parquet")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let docs = json(dir.path(), &["list", "--json"]);
    assert_eq!(docs.as_array().unwrap().len(), 41);
    let doc = json(dir.path(), &["show", "1000", "--json"]);
    assert_eq!(doc["url"], "https://docs.python.org/3.11/library/2to3.html", "{doc}");
    // Another text column, chosen by name.
    let titles = tempfile::tempdir().unwrap();
    let out = ingest(titles.path(), &["--text-column", "url"], &[&fixture("parquet/pydocs.parquet")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Issue 79, item 8: Zstandard pages (polars' default) are read; a fresh data
    // directory whose inputs all fail is not left behind. Piped Parquet is refused with
    // the reason.
    let zstd = tempfile::tempdir().unwrap();
    let out = ingest(zstd.path(), &[], &[&fixture("parquet/pydocs-zstd.parquet")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(json(zstd.path(), &["list", "--json"]).as_array().is_some_and(|d| !d.is_empty()));
    let cut = zstd.path().join("cut.parquet");
    let bytes = std::fs::read(fixture("parquet/pydocs.parquet")).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let fresh = zstd.path().join("fresh");
    let out = ingest(&fresh, &[], &[&cut]);
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!fresh.exists(), "a run that stored nothing left {}", fresh.display());
    let piped = bin()
        .args(["ingest", "--data"])
        .arg(dir.path())
        .arg("-")
        .write_stdin(std::fs::read(fixture("parquet/pydocs.parquet")).unwrap())
        .output()
        .unwrap();
    assert!(!piped.status.success());
    assert!(
        String::from_utf8_lossy(&piped.stderr).contains("give it as a file path"),
        "{}",
        String::from_utf8_lossy(&piped.stderr)
    );
}

/// Issue 54, item 3: a passage copied whole keeps its source through a stock phrase an
/// older document holds (listed beside it), and through light edits (listed);
/// `--attribution earliest` keeps the paper's per-token earliest source.
#[test]
fn a_copied_passage_keeps_one_source_with_stock_phrases_and_edits_listed() {
    let words = |p: &str, n: usize| (0..n).map(|i| format!("{p}{i}x")).collect::<Vec<_>>().join(" ");
    // A stock phrase long enough that the sampled selection surely looks it up.
    let stock = "for the fiscal year ending on the thirtieth of June the receipts into the treasury from all sources amounted to the sum stated below in this report";
    let passage = format!("{} {stock} {}", words("pa", 50), words("pb", 50));
    let edited: String = passage
        .split(' ')
        .enumerate()
        .map(|(i, w)| {
            if [9, 20, 34, 41, 55, 68, 77, 90, 101, 112, 121].contains(&i) {
                format!("changed{i}")
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    let inputs = tempfile::tempdir().unwrap();
    let files = [
        ("1-older.txt", format!("{} {stock} {}", words("a", 40), words("b", 40))),
        ("2-source.txt", format!("{} {passage} {}", words("c", 40), words("d", 40))),
        ("3-copy.txt", format!("{} {passage} {}", words("e", 30), words("f", 30))),
        ("4-edited.txt", format!("{} {edited} {}", words("g", 30), words("h", 30))),
    ];
    for (name, text) in &files {
        std::fs::write(inputs.path().join(name), text).unwrap();
    }
    let blocks = |dir: &std::path::Path, name: &str| json(dir, &["show", name, "--json"])["copied_blocks"].clone();
    let dir = tempfile::tempdir().unwrap();
    assert!(ingest(dir.path(), &[], &[inputs.path()]).status.success());
    let copy = blocks(dir.path(), "3-copy");
    assert_eq!(copy.as_array().unwrap().len(), 1, "{copy}");
    assert_eq!(copy[0]["origin"]["name"], "2-source");
    assert_eq!((copy[0]["start_token"].as_u64(), copy[0]["end_token"].as_u64()), (Some(30), Some(157)));
    assert_eq!(copy[0]["also_earlier"][0]["origin"]["name"], "1-older", "{copy}");
    let shown = ok(dir.path(), &["show", "3-copy"]);
    assert!(shown.contains("also earlier in #1 1-older: tokens 80-107"), "{shown}");
    let edited = blocks(dir.path(), "4-edited");
    assert_eq!(edited.as_array().unwrap().len(), 1, "{edited}");
    assert_eq!(edited[0]["origin"]["name"], "2-source");
    assert_eq!(edited[0]["edits"].as_array().unwrap().len(), 11, "{edited}");
    // The paper's earliest source, per token: the stock phrase splits the passage, and
    // the edited one is pieces.
    let earliest = tempfile::tempdir().unwrap();
    assert!(ingest(earliest.path(), &["--attribution", "earliest"], &[inputs.path()]).status.success());
    let copy = blocks(earliest.path(), "3-copy");
    let origins: Vec<&str> = copy.as_array().unwrap().iter().map(|b| b["origin"]["name"].as_str().unwrap()).collect();
    assert_eq!(origins, ["2-source", "1-older", "2-source"]);
    assert!(blocks(earliest.path(), "4-edited").as_array().unwrap().len() > 3);
}

/// The daemon's spool reads a crawler's WARC and a Parquet dataset as `ingest` does.
#[test]
fn the_spool_reads_warc_and_parquet_files() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = Daemon::start(dir.path(), &["--table-size", "4MiB", "--rescan-secs", "1"], None);
    drop_into_spool(dir.path(), &[fixture("warc/pydocs-small.warc.gz"), fixture("parquet/pydocs.parquet")]);
    wait_drained(dir.path(), 44);
    daemon.stop();
    let names: Vec<String> = json(dir.path(), &["list", "--json"])
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names.len(), 44, "{names:?}");
    assert!(names.contains(&"127.0.0.1:8766/library/queue.html".to_string()) && names.contains(&"1000".to_string()));
}

/// Pages named by their files share names across a site's folders: the later ones get
/// a suffix; a file sent again keeps its name, and JSON ids are never renamed.
#[test]
fn colliding_file_names_get_a_suffix_and_a_file_sent_again_keeps_its_own() {
    let site = tempfile::tempdir().unwrap();
    for (dir, body) in
        [("a", "the first folder's index page about bridges"), ("b", "the second folder's index page about rivers")]
    {
        std::fs::create_dir(site.path().join(dir)).unwrap();
        std::fs::write(site.path().join(dir).join("index.html"), format!("<p>{body}</p>")).unwrap();
    }
    std::fs::write(
        site.path().join("ids.jsonl"),
        "{\"id\":\"index\",\"text\":\"a json document named index by its id\"}\n",
    )
    .unwrap();
    let data = tempfile::tempdir().unwrap();
    assert!(ingest(data.path(), &[], &[site.path()]).status.success());
    let names: Vec<(String, String)> = json(data.path(), &["list", "--json"])
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["name"].as_str().unwrap().to_string(), d["source"].as_str().unwrap().to_string()))
        .collect();
    let source =
        |n: &str| names.iter().find(|x| x.0 == n).map(|x| x.1.clone()).unwrap_or_else(|| panic!("{n}: {names:?}"));
    assert!(source("index~2").ends_with("b/index.html"), "{names:?}");
    assert_eq!(names.iter().filter(|x| x.0 == "index").count(), 2, "the first page and the JSON id: {names:?}");
    // The second folder's page, changed and sent again: still index~2.
    std::fs::write(site.path().join("b/index.html"), "<p>the second folder's index page about rivers and lakes</p>")
        .unwrap();
    assert!(ingest(data.path(), &[], &[&site.path().join("b")]).status.success());
    let doc = json(data.path(), &["show", "index~2", "--json"]);
    assert!(doc["copied_blocks"].as_array().is_some());
    assert_eq!(doc["id"], 4, "{doc}");
}

/// A teacher's six HTML essays of one folder (an LMS export), each its own
/// text with the same pasted paragraph of a source (56 words) and the same header:
/// each later essay shows the paragraph copied, in one block; the header, a short line
/// on every page, is the folder's furniture.
#[test]
fn a_paragraph_pasted_into_six_essays_of_one_folder_is_copied_text_not_a_template() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("export");
    std::fs::create_dir(&folder).unwrap();
    let pasted = "Photosynthesis is the process by which green plants and some other organisms use \
        sunlight to synthesize foods from carbon dioxide and water. Photosynthesis in plants \
        generally involves the green pigment chlorophyll and generates oxygen as a byproduct, \
        which is released into the atmosphere where animals and people breathe it in every \
        single day of their lives.";
    assert_eq!(pasted.split_whitespace().count(), 56);
    let topics = ["rivers", "mountains", "forests", "deserts", "oceans", "glaciers"];
    for (i, topic) in topics.iter().enumerate() {
        let own: Vec<String> = (0..120).map(|w| format!("{topic}{}", (w * 7 + i) % 97)).collect();
        let page = format!(
            "<html><head><title>Essay {i}</title></head><body><main>\
             <p>Riverside High School Biology 101 Assignment 3 submission</p>\
             <p>{}</p><p>{pasted}</p><p>{}</p></main></body></html>",
            own[..60].join(" "),
            own[60..].join(" ")
        );
        std::fs::write(folder.join(format!("essay{i}.html")), page).unwrap();
    }
    let out = ingest(dir.path().join("data").as_path(), &[], &[&folder]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let data = dir.path().join("data");
    let pasted_tokens = pasted.split_whitespace().count() as u64;
    for i in 1..6 {
        let doc = json(&data, &["show", &format!("essay{i}"), "--json"]);
        let in_blocks: u64 = doc["copied_blocks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["origin"]["name"] == "essay0")
            .map(|b| b["end_token"].as_u64().unwrap() - b["start_token"].as_u64().unwrap())
            .sum();
        assert!(in_blocks * 100 >= pasted_tokens * 95, "essay{i}: {in_blocks} of the paragraph's tokens copied: {doc}");
        let templates: Vec<&str> =
            doc["templates"].as_array().unwrap().iter().map(|t| t["text"].as_str().unwrap()).collect();
        assert_eq!(templates, ["Riverside High School Biology 101 Assignment 3 submission"], "essay{i}");
    }
    // `stats` says what was labelled, and how to switch it off.
    let stats = ok(&data, &["stats"]);
    assert!(stats.contains("templates:   1 line(s) of site furniture on 1 site(s)"), "{stats}");
    assert!(stats.contains("--templates off"), "{stats}");
    assert_eq!(json(&data, &["stats", "--json"])["templates"]["lines"], 1);
}

/// Identical documents of one host (a dataset's rows with URLs, plain text of
/// short lines, as Debian's changelogs are): every later copy is an exact duplicate and
/// 100% copied, however many pages of the host hold its lines; a near copy (3% of its
/// words replaced) is a near-duplicate.
#[test]
fn identical_documents_of_one_host_are_duplicates_whatever_the_templates() {
    let dir = tempfile::tempdir().unwrap();
    let entries: Vec<Value> = std::fs::read_to_string(fixture("gcc-sample.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let changelog: String = entries[200..230].iter().map(|e| e["text"].as_str().unwrap()).collect();
    let words: Vec<&str> = changelog.split(' ').collect();
    let near: String =
        words.iter().enumerate().map(|(i, w)| if i % 33 == 5 { "edited" } else { w }).collect::<Vec<_>>().join(" ");
    let mut rows = String::new();
    for (i, text) in [&changelog; 6].into_iter().chain([&near]).enumerate() {
        let url = format!("https://sources.example.org/glibc/{i}/changelog");
        rows +=
            &serde_json::to_string(&serde_json::json!({"id": format!("copy{i}"), "url": url, "text": text})).unwrap();
        rows += "\n";
    }
    let file = dir.path().join("rows.jsonl");
    std::fs::write(&file, rows).unwrap();
    let data = dir.path().join("data");
    let out = ingest(&data, &[], &[&file]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = ok(&data, &["export", "--format", "csv"]);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    for (i, row) in rows.iter().enumerate().skip(1).take(5) {
        assert_eq!(row[col("exact_duplicate_of")], "copy0", "copy{i}: {row:?}");
        assert_eq!(row[col("old_fraction")].parse::<f64>().unwrap(), 1.0, "copy{i}: {row:?}");
    }
    assert!(rows[6][col("near_duplicate_of")].starts_with("copy"), "{:?}", rows[6]);
    let doc = json(&data, &["show", "copy5", "--json"]);
    assert_eq!(doc["template_tokens"].as_u64().unwrap_or(0), 0, "{doc}");
}

/// Four more pages of a copier's "site" made the lines it copied that site's furniture
/// after the fact (a page 60% old became 0% old). The spool's and HTTP's documents name
/// no site unless the operator trusts them (`--submitted-sites trust`); where they do,
/// the page says how many copied tokens are now labelled furniture.
#[test]
fn pages_submitted_claiming_a_site_hide_no_copy() {
    let line = |topic: &str| format!("the {topic} committee agreed on the harbour budget for the coming winter season");
    let lines = [line("finance"), line("transport"), line("housing")].join("\n");
    let filler = |tag: &str| (0..70).map(|w| format!("{tag}{w}")).collect::<Vec<_>>().join(" ");
    let mut rows = vec![
        serde_json::json!({"id": "original", "url": "https://original.org/news/1", "text": format!("{}\n{lines}\n{}", filler("orig"), filler("more"))}),
        serde_json::json!({"id": "copier", "url": "https://copier.net/a", "text": format!("{}\n{lines}", filler("copy"))}),
    ];
    for i in 0..4 {
        let tag = format!("fake{i}x");
        rows.push(serde_json::json!({"id": format!("fake{i}"), "url": format!("https://copier.net/f{i}"), "text": format!("{lines}\n{}", filler(&tag))}));
    }
    let jsonl: String = rows.iter().map(|r| r.to_string() + "\n").collect();
    let inputs = tempfile::tempdir().unwrap();
    let file = inputs.path().join("pages.jsonl");
    std::fs::write(&file, jsonl).unwrap();
    let copied = |trust: &[&str]| {
        let data = tempfile::tempdir().unwrap();
        let mut args = vec!["--table-size", "1MiB", "--rescan-secs", "1"];
        args.extend(trust);
        let daemon = Daemon::start(data.path(), &args, None);
        drop_into_spool(data.path(), std::slice::from_ref(&file));
        wait_drained(data.path(), 6);
        daemon.stop();
        let doc = json(data.path(), &["show", "copier", "--json"]);
        let text = ok(data.path(), &["show", "copier"]);
        (doc, text, data)
    };
    let (doc, _, _data) = copied(&[]);
    assert!(doc["old_tokens"].as_u64().unwrap() >= 35, "the copied lines count as copied: {doc}");
    assert_eq!(doc["template_tokens"].as_u64().unwrap_or(0), 0, "no site from a submitted url: {doc}");
    let (doc, text, _data) = copied(&["--submitted-sites", "trust"]);
    let furniture = doc["furniture_copied"].as_u64().unwrap_or(0);
    assert!(furniture >= 35, "trusted, the copied lines are the site's furniture: {doc}");
    assert!(text.contains(&format!("{furniture} copied tokens now labelled furniture")), "{text}");
}

/// The operator names the metadata field that names a site (`--site-field`): rows whose
/// `site` each differ but whose `publisher` is one are one site by `publisher`, and the
/// masthead line they share is its furniture; by `site` it is six sites' own text. A
/// later run asking for another field is refused; `rebuild --reanalyse` moves it.
#[test]
fn the_operator_names_the_field_that_names_a_site() {
    let dir = tempfile::tempdir().unwrap();
    let mut rows = String::new();
    for i in 0..6 {
        let own: Vec<String> = (0..40).map(|w| format!("story{i}word{w}")).collect();
        let text = format!("Daily Planet Home World Sports\n{}\n", own.join(" "));
        let row = serde_json::json!({"id": format!("row{i}"), "site": format!("mirror{i}"), "publisher": "Daily Planet", "text": text});
        rows += &format!("{row}\n");
    }
    let file = dir.path().join("rows.jsonl");
    std::fs::write(&file, rows).unwrap();
    let lines = |data: &std::path::Path| json(data, &["stats", "--json"])["templates"]["lines"].as_u64().unwrap_or(0);

    let by_site = dir.path().join("by-site");
    let out = ingest(&by_site, &[], &[&file]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(lines(&by_site), 0, "six sites of one page each have no furniture");

    let by_publisher = dir.path().join("by-publisher");
    let out = ingest(&by_publisher, &["--site-field", "publisher"], &[&file]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(lines(&by_publisher), 1);
    let doc = json(&by_publisher, &["show", "row5", "--json"]);
    let templates: Vec<&str> =
        doc["templates"].as_array().unwrap().iter().map(|t| t["text"].as_str().unwrap()).collect();
    assert_eq!(templates, ["Daily Planet Home World Sports"], "{doc}");

    let out = ingest(&by_publisher, &["--site-field", "site"], &[&file]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("created with other parameters") && err.contains("site_field=publisher"), "{err}");

    let out = run(&by_publisher, &["rebuild", "--reanalyse", "--site-field", "site"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(lines(&by_publisher), 0);
}
