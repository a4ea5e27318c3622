//! Partitions of a deployment: P data directories, each storing the
//! documents it owns and reading the others' through an [`Elsewhere`], with the table
//! shared in document order (as the shard workers hold it) and each document's outcome
//! (result, revisions) applied by every partition before the next document, give every
//! document the result, revisions, near-duplicates and quotations of one node.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use textorigin_core::config::{Config, Overrides};
use textorigin_core::engine::{DocResult, Engine, Feedback, Prepared, Probe, When};
use textorigin_core::index::{IndexAnswers, IndexPart, IndexWork, Indexes};
use textorigin_core::neardup::NearDupConfig;
use textorigin_core::quote::QuoteConfig;
use textorigin_core::table::{Hit, Table};
use textorigin_core::testdata::XorShift;

use super::order_tests::corpus;
use super::{DataDir, Preparer};
use crate::input::InputDoc;
use crate::intake::Policy;
use crate::storage::stage::{StageError, TableStage};
use crate::storage::store::documents::publication_time;
use crate::storage::store::partitions::partition_of;
use crate::storage::store::{Admit, Elsewhere, ElsewhereResult, Store};
use crate::storage::table_file::Mapped;

/// What every partition knows of every document applied so far.
#[derive(Default)]
struct Book {
    times: BTreeMap<u64, i64>,
    texts: BTreeMap<u64, String>,
    results: BTreeMap<u64, DocResult>,
    copiers: BTreeMap<u64, BTreeSet<u64>>,
}

impl Book {
    /// A result of document `seq` (its first or a revision's): its copier edges as a
    /// store adds them.
    fn result(&mut self, seq: u64, r: &DocResult) {
        for o in r.selected_origins.iter().map(|s| s.origin).filter(|&o| o != seq) {
            self.copiers.entry(o).or_default().insert(seq);
        }
        self.results.insert(seq, r.clone());
    }
}

/// Partition `p` of `partitions`' view of the book.
struct View {
    p: u32,
    partitions: u32,
    book: Arc<Mutex<Book>>,
}

impl Elsewhere for View {
    fn owns(&self, seq: u64) -> bool {
        partition_of(seq, self.partitions) == self.p
    }
    fn time(&self, seq: u64) -> ElsewhereResult<Option<i64>> {
        Ok(self.book.lock().unwrap().times.get(&seq).copied())
    }
    fn text(&self, seq: u64) -> ElsewhereResult<Option<String>> {
        Ok(self.book.lock().unwrap().texts.get(&seq).cloned())
    }
    fn result(&self, seq: u64) -> ElsewhereResult<Option<DocResult>> {
        Ok(self.book.lock().unwrap().results.get(&seq).cloned())
    }
    fn copiers_of(&self, origin: u64) -> ElsewhereResult<Vec<u64>> {
        Ok(self.book.lock().unwrap().copiers.get(&origin).map(|c| c.iter().copied().collect()).unwrap_or_default())
    }
}

/// The table of the deployment, shared by the partitions (the workers' union), and the
/// signature and near-duplicate sections of the derived indexes (the workers' parts),
/// which answer each document's searches from its text, then add its keys.
struct Shared {
    table: Arc<Mutex<Table<Vec<u8>>>>,
    probe: Probe,
    searched: Arc<Mutex<Indexes<Vec<u8>>>>,
    preparer: Preparer,
    book: Arc<Mutex<Book>>,
}

impl TableStage for Shared {
    fn probe(
        &mut self,
        engine: &Engine,
        doc: &Prepared,
        _: &mut Table<Mapped>,
        seq: u64,
        when: When<'_>,
    ) -> Result<Vec<Option<Hit>>, StageError> {
        self.probe = engine.probe(&mut *self.table.lock().unwrap(), doc, seq, when);
        Ok(self.probe.hits.clone())
    }
    fn taken(&self) -> Vec<u64> {
        self.probe.taken.clone()
    }
    fn score(&mut self, engine: &Engine, _: &mut Table<Mapped>, fb: &Feedback) -> Result<(), StageError> {
        engine.score(&mut *self.table.lock().unwrap(), &self.probe, fb);
        Ok(())
    }
    fn elsewhere(&self) -> bool {
        true
    }
    fn index_answers(&mut self, seq: u64) -> Result<Option<IndexAnswers>, StageError> {
        let text = self.book.lock().unwrap().texts[&seq].clone();
        let (_, sketch, sentences) = self.preparer.prepare_in_full(&text).into_parts();
        let (q, nd) = (QuoteConfig::default(), NearDupConfig::default());
        let work = IndexWork::of(&q, &nd, sentences.as_deref().unwrap_or_default(), sketch.as_ref());
        let whole = IndexPart { shard: 0, shards: 1 };
        let mut searched = self.searched.lock().unwrap();
        let answers = searched.answer_part((&q, &nd), seq, &work.queries, whole);
        searched.add_part(&q, seq, &work.add, whole);
        Ok(Some(answers))
    }
    fn lookups(&mut self, doc: &Prepared, _: &Table<Mapped>, _: u64) -> Result<Vec<Option<Hit>>, StageError> {
        let table = self.table.lock().unwrap();
        Ok(doc.items().iter().map(|it| table.lookup(it.fp).map(|(_, h)| h)).collect())
    }
}

fn overrides() -> Overrides {
    // Exact copies analysed in full, as a deployment does (`textorigin-cluster`'s settle).
    Overrides {
        table_bytes: Some(1 << 20),
        index_bytes: Some(8 << 20),
        exact_copies: Some(false),
        ..Overrides::default()
    }
}

/// Document `seq`'s admission: its id and a fixed arrival (the same in every run).
fn admit(seq: u64) -> Admit {
    Admit { seq: Some(seq), arrival_ms: Some(1_700_000_000_000 + seq), ..Admit::default() }
}

/// Each document's metadata, result, revisions, near-duplicates (both ways) and
/// quotations, as a store reads them (a deployment's partitions read as one).
type Outcome = BTreeMap<u64, String>;

fn outcome(s: &Store, n: u64) -> Outcome {
    let mut out = BTreeMap::new();
    let docs: Vec<u64> = s.docs().map(|m| m.unwrap().seq).collect();
    assert_eq!(docs, (1..=n).collect::<Vec<_>>(), "every document once, in order");
    for seq in 1..=n {
        let line = format!(
            "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
            s.doc(seq).unwrap().map(|m| (m.name, m.published_at, m.ingested_at_ms)),
            s.result(seq).unwrap(),
            s.revisions(seq).unwrap(),
            s.near_dups(seq).unwrap(),
            s.near_dups_later(seq).unwrap(),
            s.quotations(seq).unwrap(),
            s.copiers_of(seq).unwrap(),
        );
        out.insert(seq, line);
    }
    out
}

fn one_node(dir: &std::path::Path, docs: &[InputDoc]) -> Outcome {
    let mut dd = DataDir::open_write(dir, &overrides(), Policy::default()).unwrap();
    let mut preparer = dd.preparer();
    for (i, doc) in docs.iter().enumerate() {
        dd.ingest_prepared(doc, preparer.prepare(&doc.text), admit(i as u64 + 1)).unwrap();
    }
    let out = outcome(dd.store(), docs.len() as u64);
    dd.close().unwrap();
    out
}

fn partitioned(dir: &std::path::Path, docs: &[InputDoc], partitions: u32) -> Outcome {
    let book = Arc::new(Mutex::new(Book::default()));
    let mut parts: Vec<DataDir> = (0..partitions)
        .map(|p| DataDir::open_write(&dir.join(format!("p{p}")), &overrides(), Policy::default()).unwrap())
        .collect();
    let config: Config = parts[0].config().clone();
    let table = Arc::new(Mutex::new(Table::in_memory(&config.table_params()).unwrap()));
    let searched = Arc::new(Mutex::new(Indexes::in_memory(config.index_bytes, &QuoteConfig::default()).unwrap()));
    for (p, dd) in parts.iter_mut().enumerate() {
        assert!(dd.set_elsewhere(Arc::new(View { p: p as u32, partitions, book: book.clone() })));
        let (table, searched, preparer, book) = (table.clone(), searched.clone(), dd.preparer(), book.clone());
        dd.set_stage(Box::new(Shared { table, probe: Probe::default(), searched, preparer, book }));
    }
    for (i, doc) in docs.iter().enumerate() {
        let seq = i as u64 + 1;
        let a = admit(seq);
        {
            let mut b = book.lock().unwrap();
            b.times.insert(seq, publication_time(doc.published_at.as_deref(), a.arrival_ms.unwrap()));
            b.texts.insert(seq, doc.text.clone());
        }
        let p = partition_of(seq, partitions) as usize;
        let prepared = parts[p].preparer().prepare(&doc.text);
        let (_, result) = parts[p].ingest_prepared(doc, prepared, a).unwrap();
        let revised = parts[p].take_for_others().revised;
        let mut b = book.lock().unwrap();
        b.result(seq, &result);
        for r in &revised {
            b.result(r.seq, &r.after);
        }
        drop(b);
        for (q, dd) in parts.iter_mut().enumerate() {
            let theirs: Vec<_> =
                revised.iter().filter(|r| partition_of(r.seq, partitions) == q as u32).cloned().collect();
            if q != p {
                dd.count_theirs(seq, (&doc.name, &doc.source), &doc.text, None).unwrap();
                dd.store().put_revisions(seq, &theirs).unwrap();
                dd.store().revised_elsewhere(
                    revised.iter().filter(|r| partition_of(r.seq, partitions) != q as u32).map(|r| r.seq),
                );
            }
        }
    }
    // Each counted every document's words: its own in their analysis, the others' from
    // their texts (`DataDir::count_theirs`), to the same document frequencies.
    for doc in docs {
        for w in parts[0].recomputer().sentence_words(&doc.text) {
            let df: Vec<u64> = parts.iter().map(|dd| Indexes::over(dd.table.index_region(), dd.shape).df(w)).collect();
            assert!(df.iter().all(|&d| d == df[0] && d > 0), "word {w:x}: {df:?}");
        }
    }
    for dd in parts {
        dd.close().unwrap();
    }
    // Read as the inspector reads a deployment's partitions.
    let dd = DataDir::open_read(dir).unwrap();
    outcome(dd.store(), docs.len() as u64)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    #[test]
    fn partitions_equal_one_node(seed in any::<u64>(), n in 3usize..14, partitions in 2u32..5) {
        let mut docs = corpus(seed, n);
        // Arriving out of date order: late originals take entries over and revise.
        XorShift::new(seed ^ 0x9a57).shuffle(&mut docs);
        let tmp = tempfile::tempdir().unwrap();
        let one = one_node(&tmp.path().join("one"), &docs);
        let parts = partitioned(&tmp.path().join("parts"), &docs, partitions);
        for (seq, line) in &one {
            prop_assert_eq!(&parts[seq], line, "document #{}", seq);
        }
    }
}

/// Another partition's documents given again (the log replays them after a restart)
/// count once: their lines (the store's mark, across a restart) and their words (the
/// indexes' last document); their words outside their own template lines only, as
/// their owners' analyses count them, and the pages before the one that brings a line
/// to the threshold get it in their records.
#[test]
fn another_partitions_documents_given_again_count_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p0");
    let footer = "Copyright Example Widgets Company, all rights reserved worldwide since the year two.";
    let page = |i: u64| format!("{footer}\nThe council met on day {i} to discuss the river bridge budget.\n");
    let pages = u64::from(Config::default().template_pages);
    for _restart in 0..2 {
        let mut dd = DataDir::open_write(&dir, &overrides(), Policy::default()).unwrap();
        for _again in 0..2 {
            for seq in 1..=pages {
                dd.count_theirs(seq, ("page", "pages.jsonl:1"), &page(seq), Some(7)).unwrap();
            }
        }
        let rc = dd.recomputer();
        let df = |word: &str| Indexes::over(dd.table.index_region(), dd.shape).df(rc.sentence_words(word)[0]);
        // The footer's words were counted on the pages before it became template.
        assert_eq!((df("council"), df("Copyright")), (pages, pages - 1));
        dd.close().unwrap();
    }
    let dd = DataDir::open_read(&dir).unwrap();
    let rc = dd.recomputer();
    let footer_line = rc.with_tokens(footer, |tokens| textorigin_core::engine::template::lines(footer, tokens))[0];
    assert_eq!(dd.store().line_counts(7, &[footer_line.hash]).unwrap()[0].pages, pages as u32);
    for seq in 1..=pages {
        let runs = dd.store().doc_templates(seq).unwrap().expect("the footer is template on every page").runs;
        assert_eq!(runs.iter().map(|r| (r.hash, r.since)).collect::<Vec<_>>(), [(footer_line.hash, pages)]);
    }
}
