//! The engine against the brute-force reference on a real corpus: with selection All,
//! estimation NB and a table that holds every shingle, every selected shingle's origin,
//! every token's label (also after alignment) and every dominant origin by the 10% rule
//! must equal the exact index's.

use std::sync::Arc;

use textorigin_core::config::Config;
use textorigin_core::engine::{by_arrival, Engine};
use textorigin_core::estimate::Estimation;
use textorigin_core::reference::Reference;
use textorigin_core::select::Selection;
use textorigin_core::table::Table;
use textorigin_store::input::read_file;

fn fixture_texts() -> Vec<String> {
    // Cargo's directory at run time: the compiled-in one names the checkout that built
    // the test, which a second clone sharing the target directory reuses.
    let root = std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into());
    let path = std::path::Path::new(&root).join("tests/fixtures/spdx-sample.jsonl");
    read_file(&path, u64::MAX).unwrap().into_iter().map(|d| d.unwrap().text).collect()
}

#[test]
fn all_nb_equals_reference_on_real_licenses() {
    let texts = fixture_texts();
    assert!(texts.len() > 50);
    // Exact runs: the passage attribution also credits a passage's edited tokens.
    let cfg = Config {
        selection: Selection::All,
        estimation: Estimation::Nb,
        table_bytes: 32 << 20,
        attribution: textorigin_core::config::Attribution::Earliest,
        ..Config::default()
    };
    let mut table = Table::in_memory(&cfg.table_params()).unwrap();
    let mut engine = Engine::new(cfg.clone());
    let mut reference = Reference::new(cfg.k as usize);
    let (mut copied, mut total) = (0usize, 0usize);
    let mut blocks: Vec<Vec<textorigin_core::engine::Block>> = Vec::new();
    for (i, text) in texts.iter().enumerate() {
        let seq = i as u64 + 1;
        let mut doc = engine.prepare(text);
        let mut got = engine.apply_prepared(&mut table, &mut doc, seq, &by_arrival).0;
        let want = reference.apply(seq, text);
        let origins: Vec<u64> = got.selected_origins.iter().map(|s| s.origin).collect();
        assert_eq!(origins, want.origins, "document {seq}");
        assert_eq!(got.fresh_tokens, want.fresh_tokens, "document {seq}");
        assert_eq!(got.dominant_by_rule(), want.dominant_origin, "document {seq}");
        // Aligned against the origins' texts, the labels stay the oracle's.
        let origin_text = |o: u64| Some(Arc::new(engine.origin_text(&texts[o as usize - 1], &blocks[o as usize - 1])));
        engine.align(&doc, &mut got, origin_text, |_| Vec::new(), &by_arrival);
        blocks.push(got.copied_blocks.clone());
        assert_eq!(got.fresh_tokens, want.fresh_tokens, "document {seq}, aligned");
        copied += want.origins.iter().filter(|&&o| o != seq).count();
        total += want.origins.len();
    }
    assert_eq!(table.stats().evictions, 0, "the table must hold every shingle");
    // The corpus really has reuse, so the comparison is not vacuous.
    assert!(copied * 10 > total, "{copied} of {total} shingles copied");
}

#[test]
fn default_configuration_finds_most_copying_on_real_licenses() {
    // NHs + Lucky + BE with a table holding ~10% of the shingles: the dominant origin
    // must agree with the reference for most documents.
    let texts = fixture_texts();
    let shingles: usize = texts.iter().map(|t| t.split_whitespace().count()).sum();
    let cfg = Config { table_bytes: 4096 + (shingles as u64 / 10) * 16, bucket_entries: 16, ..Config::default() };
    let mut table = Table::in_memory(&cfg.table_params()).unwrap();
    let mut engine = Engine::new(cfg.clone());
    let mut reference = Reference::new(cfg.k as usize);
    let (mut agree, mut n) = (0, 0);
    for (i, text) in texts.iter().enumerate() {
        let seq = i as u64 + 1;
        let got = engine.apply(&mut table, seq, text);
        let want = reference.apply(seq, text);
        if let Some(d) = want.dominant_origin {
            n += 1;
            agree += usize::from(got.dominant_origin == Some(d));
        }
    }
    assert!(table.stats().evictions > 0, "the table must be too small to hold everything");
    eprintln!("dominant origin right for {agree} of {n}");
    assert!(agree * 100 >= n * 80, "dominant origin right for {agree} of {n}");
}
