//! HTML pages, loaded in headless Chromium.

use std::path::Path;

use crate::util::*;

/// The DOM of a page after headless Chromium loaded it.
fn chromium_dom(page: &Path) -> String {
    chromium_dom_of(&format!("file://{}", page.display()))
}

/// The DOM of a URL after headless Chromium loaded it.
pub fn chromium_dom_of(url: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = std::process::Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(url)
        .output()
        .expect("headless Chromium (Debian's `chromium`, installed by scripts/test.sh)");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn html_pages_highlight_copied_blocks_and_escape_document_text_in_chromium() {
    let inputs = tempfile::tempdir().unwrap();
    for f in std::fs::read_dir(examples()).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, inputs.path().join(f.file_name().unwrap())).unwrap();
    }
    std::fs::write(
        inputs.path().join("04-markup.txt"),
        "A note with markup: <script>document.title='pwned'</script> and <b>bold</b> & more. \
         The old harbour bridge reopened to traffic on Monday morning after twenty-six months of repairs.",
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    assert!(ingest(dir.path(), &[], &[inputs.path()]).status.success());
    let out = tempfile::tempdir().unwrap();
    let page = out.path().join("roundup.html");
    ok(dir.path(), &["show", "03-weekly-roundup", "--html", page.to_str().unwrap()]);
    let dom = chromium_dom(&page);
    // Two copied blocks, from the report and from the blog, with links to the legend.
    let blocks: Vec<&str> = dom.match_indices("<a class=\"copied\"").map(|(i, _)| &dom[i..]).collect();
    assert!(blocks.len() >= 2, "{dom}");
    assert!(dom.contains("data-origin-id=\"1\"") && dom.contains("data-origin-id=\"2\""));
    assert!(dom.contains("href=\"#origin-1\"") && dom.contains("id=\"origin-1\""));
    assert!(dom.contains("data-origin-name=\"01-harbour-bridge\""));
    let first_block = blocks.iter().find(|b| b.contains("data-origin-id=\"1\"")).unwrap();
    assert!(first_block[..first_block.find("</a>").unwrap()].contains("The old harbour bridge reopened"));
    // Novel text is not inside a block; the summary bar is there.
    let novel = "the school board postponed its vote";
    let at = dom.find(novel).unwrap();
    assert!(dom[..at].rfind("<a class=\"copied\"").is_none_or(|open| dom[open..at].contains("</a>")));
    assert!(dom.contains("id=\"summary\""));
    // Markup in a document renders as text, never as elements.
    let evil = out.path().join("markup.html");
    ok(dir.path(), &["show", "04-markup", "--html", evil.to_str().unwrap()]);
    let dom = chromium_dom(&evil);
    assert!(!dom.contains("<script"), "a script element leaked into the page");
    assert!(!dom.contains("<b>bold"));
    assert!(dom.contains("&lt;script&gt;document.title='pwned'&lt;/script&gt;"), "{dom}");
    assert!(!dom.contains("<title>pwned"));
    // The collection report.
    let report = out.path().join("report.html");
    ok(dir.path(), &["report", "--html", report.to_str().unwrap()]);
    let dom = chromium_dom(&report);
    assert!(dom.contains("id=\"sources\"") && dom.contains("id=\"graph\"") && dom.contains("class=\"edge\""));
    assert!(dom.contains("#1 01-harbour-bridge"));
    assert!(!dom.contains("<script"));
}
