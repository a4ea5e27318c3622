//! Text in scripts written without spaces between words: a Chinese article
//! that copies a paragraph from another is shown with the copied block and its quoted
//! sentences, in the JSON and text views and the page; a data directory made before
//! keeps the rule it was made with.

use serde_json::Value;

use crate::util::*;

const REPORT: &str = "旧港大桥重新通车\n\n旧港大桥在经历了二十六个月的维修之后，于周一早上重新向车辆开放，维修费用几乎是最初预算的两倍。工程师们更换了全部十一根钢缆，重建了南侧引桥，并安装了新的排水系统，以便在冬季风暴期间让海水远离桥面。\n\n市长在七点刚过时为大桥剪彩，一小群通勤者、骑自行车的人和退休的码头工人在人行道上欢呼。她感谢东部各区居民在漫长的绕行期间所表现出的耐心。\n";

const ROUNDUP: &str = "每周综述：桥梁、预算和面包店\n\n本周的本地新闻从海滨开始。工程师们更换了全部十一根钢缆，重建了南侧引桥，并安装了新的排水系统，以便在冬季风暴期间让海水远离桥面。另外，学校董事会把新课程表的投票推迟到了一月，图书馆宣布从下个月开始周四延长开放时间。\n";

fn write(dir: &std::path::Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Two articles, `01-report` and `02-roundup`, ingested into a new data directory
/// with default settings: the inputs' and the data's directories, the roundup's JSON
/// view and its copied block from the report.
fn ingest_pair(report: &str, roundup: &str) -> (tempfile::TempDir, tempfile::TempDir, Value, Value) {
    let inputs = tempfile::tempdir().unwrap();
    let paths = [write(inputs.path(), "01-report.txt", report), write(inputs.path(), "02-roundup.txt", roundup)];
    let data = tempfile::tempdir().unwrap();
    assert!(ingest(data.path(), &[], &[&paths[0], &paths[1]]).status.success());
    let v = json(data.path(), &["show", "--json", "02-roundup"]);
    let block =
        v["copied_blocks"].as_array().unwrap().iter().find(|b| b["origin"]["id"] == 1).unwrap_or_else(|| panic!("{v}"));
    let block = block.clone();
    (inputs, data, v, block)
}

#[test]
fn a_chinese_article_that_copies_a_paragraph_shows_the_block_and_the_quotation() {
    let (inputs, data, v, block) = ingest_pair(REPORT, ROUNDUP);
    let (report, roundup) = (inputs.path().join("01-report.txt"), inputs.path().join("02-roundup.txt"));
    let dir = data.path();
    let copied = "工程师们更换了全部十一根钢缆，重建了南侧引桥，并安装了新的排水系统，以便在冬季风暴期间让海水远离桥面";
    let text = block["text"].as_str().unwrap();
    assert!(text.contains(copied), "the copied sentence as one block: {text}");
    assert!(text.chars().count() <= copied.chars().count() + 2, "not more than it: {text}");
    let quoted = v["quotations"].as_array().unwrap();
    assert!(
        quoted.iter().any(|q| q["text"].as_str().unwrap().starts_with("工程师们") && q["sources"][0]["id"] == 1),
        "the sentence found as a quotation of the report: {v}"
    );
    let shown = ok(dir, &["show", "02-roundup"]);
    assert!(shown.contains("from #1 01-report") && shown.contains("工程师们更换了"), "{shown}");
    let page = dir.join("page.html");
    assert!(run(dir, &["show", "02-roundup", "--html", page.to_str().unwrap()]).status.success());
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("工程师们更换了全部十一根钢缆"), "the block on the page");
    // The rule before (a data directory made with it): each paragraph between
    // punctuation is one term, and the copied sentence is no block of eight terms.
    let before = tempfile::tempdir().unwrap();
    assert!(ingest(before.path(), &["--terms", "words"], &[&report, &roundup]).status.success());
    let v = json(before.path(), &["show", "--json", "02-roundup"]);
    assert_eq!(v["copied_blocks"], serde_json::json!([]), "{v}");
    assert!(!ok(before.path(), &["stats"]).contains("terms="), "the rule before says nothing");
    // Given more documents without --terms, the data directory keeps its rule.
    let again = write(inputs.path(), "03-again.txt", REPORT);
    assert!(ingest(before.path(), &[], &[&again]).status.success());
    assert!(!ok(before.path(), &["stats"]).contains("terms="));
    assert!(ok(dir, &["stats"]).contains("terms=unicode"));
    // `rebuild --reanalyse --terms unicode` moves it to the new rule (not without
    // --reanalyse: the stored results follow from the terms).
    assert!(!run(before.path(), &["rebuild", "--terms", "unicode"]).status.success());
    assert!(run(before.path(), &["rebuild", "--reanalyse", "--terms", "unicode"]).status.success());
    assert!(ok(before.path(), &["stats"]).contains("terms=unicode"));
    let v = json(before.path(), &["show", "--json", "02-roundup"]);
    assert!(v["copied_blocks"].as_array().unwrap().iter().any(|b| b["origin"]["id"] == 1), "{v}");
}

/// Near-duplicates over the same terms: a Chinese article with one character changed is
/// its original's near-duplicate (under the rule before, a paragraph was one term, and
/// one character changed a whole term of few).
#[test]
fn a_chinese_article_with_one_character_changed_is_a_near_duplicate() {
    let inputs = tempfile::tempdir().unwrap();
    let report = write(inputs.path(), "01-report.txt", REPORT);
    let edited = write(inputs.path(), "02-edited.txt", &REPORT.replacen("周一", "周二", 1));
    let data = tempfile::tempdir().unwrap();
    assert!(ingest(data.path(), &[], &[&report, &edited]).status.success());
    let v = json(data.path(), &["neardups", "--json", "02-edited"]);
    let found = v["near_duplicates"].as_array().unwrap_or_else(|| panic!("{v}"));
    assert!(found.iter().any(|n| n["id"] == 1), "{v}");
    let before = tempfile::tempdir().unwrap();
    assert!(ingest(before.path(), &["--terms", "words"], &[&report, &edited]).status.success());
    let v = json(before.path(), &["neardups", "--json", "02-edited"]);
    assert_eq!(v["near_duplicates"], serde_json::json!([]), "the rule before: {v}");
}

/// Issue 33: Thai, written without spaces between words, is split by dictionary; a
/// Thai article that copies a sentence from another shows it as a block and a
/// quotation, in the JSON and text views and the page.
#[test]
fn a_thai_article_that_copies_a_sentence_shows_the_block_and_the_quotation() {
    const REPORT: &str = "สะพานท่าเรือเก่าเปิดใช้งานอีกครั้ง\nสะพานท่าเรือเก่ากลับมาเปิดให้รถสัญจรอีกครั้งเมื่อเช้าวันจันทร์หลังจากปิดซ่อมแซมนานถึงยี่สิบหกเดือน วิศวกรได้เปลี่ยนสายเคเบิลเหล็กทั้งสิบเอ็ดเส้นและสร้างทางลาดด้านทิศใต้ขึ้นใหม่ทั้งหมด นายกเทศมนตรีกล่าวขอบคุณประชาชนที่อดทนรอมาตลอด\n";
    const ROUNDUP: &str = "สรุปข่าวประจำสัปดาห์\nข่าวท้องถิ่นสัปดาห์นี้เริ่มต้นที่ริมน้ำ วิศวกรได้เปลี่ยนสายเคเบิลเหล็กทั้งสิบเอ็ดเส้นและสร้างทางลาดด้านทิศใต้ขึ้นใหม่ทั้งหมด ส่วนคณะกรรมการโรงเรียนเลื่อนการลงมติเรื่องตารางเรียนใหม่ออกไปเป็นเดือนมกราคม\n";
    let (_inputs, data, v, block) = ingest_pair(REPORT, ROUNDUP);
    let copied = "วิศวกรได้เปลี่ยนสายเคเบิลเหล็กทั้งสิบเอ็ดเส้นและสร้างทางลาดด้านทิศใต้ขึ้นใหม่ทั้งหมด";
    assert_eq!(block["text"].as_str().unwrap(), copied, "the copied sentence as one block, word for word");
    let quoted = v["quotations"].as_array().unwrap();
    assert!(
        quoted.iter().any(|q| q["text"] == copied && q["sources"][0]["id"] == 1),
        "the sentence found as a quotation of the report: {v}"
    );
    // The text view and the page show it, whole.
    let shown = ok(data.path(), &["show", "02-roundup"]);
    assert!(shown.contains("from #1 01-report") && shown.contains(copied), "{shown}");
    let page = data.path().join("page.html");
    assert!(run(data.path(), &["show", "02-roundup", "--html", page.to_str().unwrap()]).status.success());
    assert!(std::fs::read_to_string(&page).unwrap().contains(copied), "the block on the page");
}
