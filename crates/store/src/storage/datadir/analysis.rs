//! The one path of a document's analysis, shared by ingestion, `query`, recovery and
//! `rebuild`: preparation off the applying thread ([`Preparer`]), then near-duplicates,
//! quotations, the table's phases and alignment ([`analyse`]), or the replay of a stored
//! document ([`replay`]). A feature switched off (`Config::near_duplicates`,
//! `Config::quotations`) is skipped at every step: nothing is computed, stored or
//! indexed for it.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Instant;

use super::{DataDirError, Result};
use crate::intake::Budget;
use crate::storage::recompute::{self, Recomputer};
use crate::storage::search;
use crate::storage::stage::{Local, TableStage};
use crate::storage::store::{Exact, FirstHolder, NearDupWrite, Revised, Revisions, Store, StoreError, TemplateWrite};
use crate::storage::table_file::TableFile;
use crate::telemetry::StageTimes;
use textorigin_core::align::{OriginText, MAX_COPIERS};
use textorigin_core::config::Config;
use textorigin_core::config::Templates;
use textorigin_core::engine::template::{self, Line, TemplateRun};
use textorigin_core::engine::{self, DocResult, Engine, When};
use textorigin_core::hash::MixMap;
use textorigin_core::index::{self, Answered, IndexAdd, IndexLookup, IndexShape, Indexes};
use textorigin_core::neardup::Sketch;
use textorigin_core::quote::{self, QuoteFind, Sentence};
use textorigin_core::select::FLOOR;
use textorigin_core::text::{tokens_hash, Token};
use xxhash_rust::xxh3::xxh3_128;

/// Seconds since `t`, restarting it.
pub(super) fn lap(t: &mut Instant) -> f64 {
    let now = Instant::now();
    let s = now.duration_since(*t).as_secs_f64();
    *t = now;
    s
}

/// A document's table-independent work, done before it is applied: tokens with their
/// fingerprints, the selected shingles, the near-duplicate sketch and the sentences
/// (each None when its feature is off). Any thread can do it; the result is the same
/// as on the applying thread.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// Its tokens and selected shingles.
    doc: engine::Prepared,
    sketch: Option<textorigin_core::neardup::Sketch>,
    sentences: Option<Vec<textorigin_core::quote::Sentence>>,
    /// Its lines, where site templates are labelled, and its text's bytes.
    lines: Vec<Line>,
    text_len: u32,
    /// The xxh3-128 of its text (`DocMeta::content_hash`; where its sketch is the whole
    /// text's, the key its earlier copies' sketches are found by,
    /// [`Store::note_text_sketch`]), computed where it is prepared.
    text_hash: u128,
    /// The hash of its tokens ([`tokens_hash`]): what an earlier exact copy is found by
    /// (None where exact copies are off).
    tokens_hash: Option<u128>,
    /// Its sketch and sentences are left to its analysis: an earlier stored document
    /// held its tokens where it was prepared (and that document's record its
    /// near-duplicate keys, where those are on), so it is most likely an exact copy,
    /// which needs neither ([`analyse`] makes them where it is not one after all).
    deferred: bool,
}

impl Prepared {
    /// The xxh3-128 of its text.
    pub fn text_hash(&self) -> u128 {
        self.text_hash
    }

    /// Whether the document has no tokens.
    pub fn is_empty(&self) -> bool {
        self.doc.tokens().is_empty()
    }

    /// Its tokens' fingerprints.
    pub(super) fn token_fps(&self) -> Vec<u64> {
        self.doc.tokens().iter().map(|t| t.fp).collect()
    }

    /// Its parts, for [`super::DataDir::query`] (prepared without a store: nothing left
    /// to its analysis).
    pub(super) fn into_parts(self) -> PreparedParts {
        debug_assert!(!self.deferred, "a query's preparer has no store to find copies in");
        (self.doc, self.sketch, self.sentences)
    }

    /// Makes the sketch and sentences its preparation left to its analysis
    /// ([`Prepared::deferred`]), as [`Preparer::prepare`] makes them, without its
    /// template lines `runs`.
    fn undefer(&mut self, rc: &Recomputer, cfg: &Config, text: &str, runs: &[TemplateRun]) {
        if std::mem::take(&mut self.deferred) {
            (self.sketch, self.sentences) =
                sketch_and_sentences(Searches::of(cfg), rc, (text, self.doc.tokens()), runs);
        }
    }

    /// Takes its template lines `runs` out of what it searches for quotations and
    /// indexes: the sentences mostly in them are neither searched nor indexed
    /// ([`template::blank_sentences`]). Its near-duplicate sketch keeps every token
    /// (duplicates are found whatever the templates).
    fn without_templates(&mut self, runs: &[TemplateRun]) {
        if let Some(sentences) = self.sentences.as_mut().filter(|_| !runs.is_empty()) {
            template::blank_sentences(sentences, runs);
        }
    }
}

/// Tokens and selected shingles, sketch and sentences.
pub(super) type PreparedParts =
    (engine::Prepared, Option<textorigin_core::neardup::Sketch>, Option<Vec<textorigin_core::quote::Sentence>>);

/// Prepares documents for one data directory's configuration (one per thread).
#[derive(Clone)]
pub struct Preparer {
    engine: Engine,
    /// Sketches a new document as the searches compute an earlier one's again (the
    /// data directory's one recomputer).
    recompute: Recomputer,
    /// Where the first holders of token sequences are found, for an ingestion's
    /// preparer ([`Prepared::deferred`]); None for one that prepares everything. Weak:
    /// a preparer left on another thread must not keep the store open after its data
    /// directory closed (a reopen, a recovery or a repair needs RocksDB's lock); it
    /// then prepares everything.
    copies: Option<std::sync::Weak<Store>>,
}

impl Preparer {
    /// A preparer for `engine`'s configuration and `recompute`'s near-duplicate
    /// parameters.
    pub(super) fn new(engine: Engine, recompute: Recomputer) -> Preparer {
        Preparer { engine, recompute, copies: None }
    }

    /// This preparer, leaving the sketch and sentences of a document whose tokens
    /// `store` holds already to its analysis, where exact copies are on.
    pub(super) fn finding_copies_in(self, store: &Arc<Store>) -> Preparer {
        let copies = self.engine.config().exact_copies.then(|| Arc::downgrade(store));
        Preparer { copies, ..self }
    }

    /// Tokenizes, fingerprints and selects `text`; sketches it and splits it into
    /// sentences where those features are on, unless a stored document holds its tokens
    /// already (most likely it is an exact copy, which needs neither: its analysis makes
    /// them where it is not one after all).
    pub fn prepare(&mut self, text: &str) -> Prepared {
        self.prepare_finding(text, true)
    }

    /// [`Preparer::prepare`] leaving nothing to an analysis (a query's: it has none).
    pub(super) fn prepare_in_full(&mut self, text: &str) -> Prepared {
        self.prepare_finding(text, false)
    }

    fn prepare_finding(&mut self, text: &str, find_copies: bool) -> Prepared {
        let on = Searches::of(self.engine.config());
        let labelled = self.engine.config().templates != Templates::Off;
        let doc = self.engine.prepare(text);
        let tokens_hash = self.engine.config().exact_copies.then(|| tokens_hash(doc.tokens()));
        // A failed read defers nothing: the analysis reads again, and fails there.
        let deferred = match (&self.copies, tokens_hash) {
            // Where its record holds no keys yet, a first copy computes them from its
            // sketch.
            (Some(store), Some(hash)) if find_copies => store.upgrade().is_some_and(|s| {
                s.first_with_tokens(hash).is_ok_and(|f| f.is_some_and(|f| f.nd_keys.is_some() || !on.near_duplicates))
            }),
            _ => false,
        };
        let (sketch, sentences) = match deferred {
            true => (None, None),
            false => sketch_and_sentences(on, &self.recompute, (text, doc.tokens()), &[]),
        };
        let lines = if labelled { template::lines(text, doc.tokens()) } else { Vec::new() };
        let text_hash = xxh3_128(text.as_bytes());
        Prepared { doc, sketch, sentences, lines, text_len: text.len() as u32, text_hash, tokens_hash, deferred }
    }
}

/// Which of a configuration's searches are on, and what makes a term.
#[derive(Debug, Clone, Copy)]
pub struct Searches {
    near_duplicates: bool,
    quotations: bool,
    terms: textorigin_core::text::Terms,
}

impl Searches {
    pub fn of(cfg: &Config) -> Searches {
        let (near_duplicates, quotations) = features(cfg);
        Searches { near_duplicates, quotations, terms: cfg.terms }
    }
}

/// A document's near-duplicate sketch (of every token) and its sentences
/// outside its own site template lines `runs` (none where they are not known yet: a
/// document's analysis takes them out once it knows them), each where its search is
/// `on` (None when off), from its `text` and `tokens`: what its searches and index
/// keys come from, here and on a deployment's shard workers.
#[allow(clippy::type_complexity)] // the two named in the line above
pub fn sketch_and_sentences(
    on: Searches,
    rc: &Recomputer,
    (text, tokens): (&str, &[Token]),
    runs: &[TemplateRun],
) -> (Option<Sketch>, Option<Vec<Sentence>>) {
    let sketch = on.near_duplicates.then(|| rc.sketch_of_tokens(tokens));
    let sentences = on.quotations.then(|| {
        let mut sentences = quote::sentences(text, tokens, on.terms);
        template::blank_sentences(&mut sentences, runs);
        sentences
    });
    (sketch, sentences)
}

/// A document's words as its analysis counts them in the document frequencies (none
/// without quotation search), without its sketch or signatures: what a deployment's
/// partition adds of a document again (the shard workers hold the other sections).
/// Its sentences mostly in its own site template lines `runs` count none.
pub(super) fn index_words(rc: &Recomputer, cfg: &Config, text: &str, runs: &[TemplateRun]) -> IndexAdd {
    match Searches::of(cfg).quotations {
        true => rc.with_tokens(text, |tokens| index_words_of(rc, cfg, (text, tokens), runs)),
        false => IndexAdd::default(),
    }
}

/// [`index_words`] of `text` split into `tokens` already.
pub(super) fn index_words_of(
    rc: &Recomputer,
    cfg: &Config,
    (text, tokens): (&str, &[Token]),
    runs: &[TemplateRun],
) -> IndexAdd {
    let runs = template::furniture(runs, tokens.len() as u32, cfg.html);
    match Searches::of(cfg).quotations {
        true => IndexAdd { words: rc.words_outside(text, tokens, runs), ..IndexAdd::default() },
        false => IndexAdd::default(),
    }
}

/// Whether near-duplicate detection and quotation search are on.
fn features(cfg: &Config) -> (bool, bool) {
    (cfg.near_duplicates, cfg.quotations)
}

/// Aligns the copied blocks of `result`, document `doc`'s, against the stored texts of
/// their origins ([`Engine::align`]), "earlier" by `when`.
pub(super) fn align(
    store: &Store,
    engine: &Engine,
    doc: &engine::Prepared,
    result: &mut DocResult,
    when: When<'_>,
) -> Result<()> {
    align_with(store, engine, doc, result, when, &HashMap::new())
}

/// [`align`], with the texts of origins not stored yet (`unstored`: a revision's cause
/// and the documents it revised before) taken from `unstored`.
fn align_with(
    store: &Store,
    engine: &Engine,
    doc: &engine::Prepared,
    result: &mut DocResult,
    when: When<'_>,
    unstored: &HashMap<u64, Arc<OriginText>>,
) -> Result<()> {
    let failed = RefCell::new(None);
    let origin_text = |o| match unstored.get(&o) {
        Some(t) => Some(Arc::clone(t)),
        None => recompute::origin_text(store, engine, o).unwrap_or_else(|e| {
            failed.borrow_mut().get_or_insert(e);
            None
        }),
    };
    let seq = result.seq;
    let copiers = |o| {
        store.copiers_before(o, seq, MAX_COPIERS).unwrap_or_else(|e| {
            failed.borrow_mut().get_or_insert(e);
            Vec::new()
        })
    };
    engine.align(doc, result, origin_text, copiers, when);
    failed.into_inner().map_or(Ok(()), |e| Err(e.into()))
}

/// Publication order over a store for the engine ([`When`]): (time, sequence number),
/// each stored document's time read once per analysis ([`Store::published_time`]: the
/// sorts of a result ask it again and again); the document being analysed and a
/// revision's cause (not stored yet) have their own.
pub(super) struct Dates<'a> {
    store: &'a Store,
    this: (u64, i64),
    memo: RefCell<MixMap<u64, i64>>,
    failed: RefCell<Option<StoreError>>,
}

impl<'a> Dates<'a> {
    /// For document `seq` published at `time`, against the documents of `store`.
    pub(super) fn new(store: &'a Store, seq: u64, time: i64) -> Dates<'a> {
        Dates { store, this: (seq, time), memo: RefCell::default(), failed: RefCell::default() }
    }

    /// For stored document `seq`.
    pub(super) fn stored(store: &'a Store, seq: u64) -> Result<Dates<'a>> {
        let time = store.published_time(seq)?.ok_or(DataDirError::MissingText(seq))?;
        Ok(Dates::new(store, seq, time))
    }

    /// Tells the time of document `seq`, not stored yet (the one whose arrival causes a
    /// revision).
    pub(super) fn know(&self, seq: u64, time: i64) {
        self.memo.borrow_mut().insert(seq, time);
    }

    /// Document `seq`'s order key.
    pub(super) fn key(&self, seq: u64) -> (i64, u64) {
        if seq == self.this.0 {
            return (self.this.1, seq);
        }
        if let Some(&t) = self.memo.borrow().get(&seq) {
            return (t, seq);
        }
        let time = match self.store.published_time(seq) {
            Ok(Some(t)) => t,
            // Cannot be (an origin is stored before any document finds it); last.
            Ok(None) => i64::MAX,
            Err(e) => {
                self.failed.borrow_mut().get_or_insert(e);
                i64::MAX
            }
        };
        self.memo.borrow_mut().insert(seq, time);
        (time, seq)
    }

    /// An error if a document's metadata could not be read.
    pub(super) fn check(&self) -> Result<()> {
        self.failed.borrow_mut().take().map_or(Ok(()), |e| Err(e.into()))
    }
}

/// Replays stored document `seq` into `table`: the engine applies its text, and its
/// words, sentence signatures and stored sketch's keys go into the derived indexes,
/// exactly as when it was ingested. Returns the recomputed result.
pub(super) fn replay(
    store: &Store,
    engine: &mut Engine,
    table: &mut TableFile,
    cfgs: (&Recomputer, IndexShape),
    seq: u64,
) -> Result<DocResult> {
    let prepared = prepare_replay(store, engine, cfgs, seq)?;
    apply_replay(store, engine, table, &mut Local::default(), cfgs, seq, prepared)
}

/// What [`replay`] reads and computes before the table: the stored text's tokens and
/// selected shingles, and what the document adds to the derived indexes. Depends on
/// the store only, so recovery prepares documents on several threads.
pub(super) struct ReplayPrepared {
    doc: engine::Prepared,
    add: IndexAdd,
    /// The earlier document it was answered as an exact copy of.
    copy_of: Option<u64>,
}

pub(super) fn prepare_replay(
    store: &Store,
    engine: &mut Engine,
    cfgs: (&Recomputer, IndexShape),
    seq: u64,
) -> Result<ReplayPrepared> {
    let (rc, _) = cfgs;
    let (near_duplicates, quotations) = features(engine.config());
    let terms = engine.config().terms;
    let text = store.text(seq)?.ok_or(DataDirError::MissingText(seq))?;
    let doc = engine.prepare(&text);
    let copy_of = store.copy_of(seq)?;
    // An exact copy's sentences are neither searched nor indexed (`analyse`): it adds
    // its near-duplicate keys alone.
    let mut sentences = match quotations && copy_of.is_none() {
        true => quote::sentences(&text, doc.tokens(), terms),
        false => Vec::new(),
    };
    // Without the template lines it had when analysed (those later pages gave it
    // came after its sentences were indexed).
    let own = store.own_templates(seq)?;
    template::blank_sentences(
        &mut sentences,
        template::furniture(&own, doc.tokens().len() as u32, engine.config().html),
    );
    let nd_keys = match near_duplicates {
        true => rc.sketch(store, seq)?.map(|s| index::nd_keys(rc.neardup(), &s)).unwrap_or_default(),
        false => Vec::new(),
    };
    let add = IndexAdd::of(rc.quote(), &sentences, nd_keys);
    Ok(ReplayPrepared { doc, add, copy_of })
}

pub(super) fn apply_replay(
    store: &Store,
    engine: &mut Engine,
    table: &mut TableFile,
    stage: &mut dyn TableStage,
    cfgs: (&Recomputer, IndexShape),
    seq: u64,
    prepared: ReplayPrepared,
) -> Result<DocResult> {
    let (rc, shape) = cfgs;
    let mut doc = prepared.doc;
    let dates = Dates::stored(store, seq)?;
    let when = |s| dates.key(s);
    let revised = |cfg: &Config, taken: &[u64]| revised_shingles(store, cfg, seq, taken);
    let mut times = StageTimes::default();
    let result = match prepared.copy_of {
        // As its analysis did: the table takes none of its shingles.
        Some(of) => {
            copy_applied(store, engine, (table, stage), (doc, seq, of, &when), (&mut times, &mut Instant::now()))?
        }
        None => {
            let mut result =
                table_phases(stage, engine, table, (&mut doc, seq, &when), &mut times, &mut Instant::now(), revised)?;
            align(store, engine, &doc, &mut result, &when)?;
            result
        }
    };
    dates.check()?;
    let add = match stage.elsewhere() {
        true => prepared.add.words_only(),
        false => prepared.add,
    };
    Indexes::over(table.index_region_mut()?, shape).add(rc.quote(), seq, &add);
    Ok(result)
}

/// Analyses document `seq` as ingestion does, against `table` and its derived indexes
/// (filled by the documents before it), and adds it to both: near-duplicates,
/// quotations, origins, then the index entries. Times each stage into `times`. The one
/// path of live ingestion and of `rebuild --reanalyse`. `time` is when the document
/// was published (`DocMeta::time`).
#[allow(clippy::too_many_arguments)] // the parts of one data directory, borrowed apart; three call sites
pub(super) fn analyse(
    store: &Store,
    engine: &mut Engine,
    table: &mut TableFile,
    stage: &mut dyn TableStage,
    cfgs: (&Recomputer, IndexShape),
    (seq, time, site, text): (u64, i64, Option<u64>, &str),
    mut prepared: Prepared,
    times: &mut StageTimes,
) -> Result<Analysed> {
    let (rc, shape) = cfgs;
    let mut t = Instant::now();
    let (runs, templates) = match site {
        Some(site) => {
            let text = (&prepared.lines[..], prepared.doc.tokens(), prepared.text_len);
            super::templates::decide(store, engine.config(), (seq, site), text)?
        }
        None => (Vec::new(), TemplateWrite::default()),
    };
    prepared.without_templates(&runs);
    times.templates += lap(&mut t);
    let dates = Dates::new(store, seq, time);
    let (exact, copy_keys) = exact_of(store, engine, stage.elsewhere(), (&prepared, text), seq, &dates)?;
    if !matches!(exact, Exact::CopyOf(..)) {
        prepared.undefer(rc, engine.config(), text, &runs);
    }
    let Prepared { mut doc, sketch, sentences, text_hash, .. } = prepared;
    let sketch = sketch.map(Arc::new);
    if let (true, Some(sketch)) = (runs.is_empty(), &sketch) {
        store.note_text_sketch(text_hash, sketch);
    }
    let indexes = Indexes::over(table.index_region(), shape);
    // Read with the table's answers where the stage is elsewhere: waited for as they are.
    let answers = stage.index_answers(seq).map_err(DataDirError::Stage)?;
    if answers.is_some() != stage.elsewhere() {
        // The region counts the words only exactly where the stage answers: what a
        // replay decides from `elsewhere` alone.
        let why = format!("document #{seq}: the stage answers the index searches where its table is not elsewhere, or not where it is");
        return Err(DataDirError::Stage(why.into()));
    }
    times.table += lap(&mut t);
    let answered = answers.as_ref().map(|answers| Answered { frequencies: &indexes, answers });
    let lookup: &dyn IndexLookup = match &answered {
        Some(a) => a,
        None => &indexes,
    };
    let when = |s| dates.key(s);
    // A pair with a document published after this one is oriented the other way.
    let later = |other| when(other) > when(seq);
    let verify = Some((&*engine, doc.tokens()));
    let nd = match (exact, sketch) {
        // Its near-duplicates are its earlier copy's, and that copy; its index keys
        // that copy's (its sketch's where it was made, the same).
        (Exact::CopyOf(of, _), sketch) if Searches::of(engine.config()).near_duplicates => {
            let keys = match (&sketch, copy_keys) {
                (Some(sketch), _) => index::nd_keys(rc.neardup(), sketch),
                (None, Some(keys)) => keys,
                // Not expected: a preparer leaves a copy's sketch only where the record
                // has keys, and nothing takes them away but a rebuild, which prepares
                // in full.
                (None, None) => index::nd_keys(rc.neardup(), &rc.sketch_of_tokens(doc.tokens())),
            };
            Some(search::copy_near_dups(store, rc, (seq, of), (sketch, keys), later)?)
        }
        (_, Some(sketch)) => Some(search::near_dups(store, rc, seq, sketch, lookup, later, verify)?),
        (_, None) => None,
    };
    times.neardup += lap(&mut t);
    times.sketches += u64::from(nd.is_some());
    let (result, q) = match exact {
        // An exact copy: its near-duplicates its earlier copy's, its sentences
        // neither searched nor indexed, nor stored (its quotations are read through
        // `of`'s, `Store::quotations`), its origins `of`'s without the table's entries;
        // it adds its near-duplicate keys alone.
        Exact::CopyOf(of, _) => {
            (copy_applied(store, engine, (table, &mut *stage), (doc, seq, of, &when), (&mut *times, &mut t))?, None)
        }
        _ => {
            let q =
                sentences.map(|sentences| search::quotations(store, rc, seq, sentences, lookup, later)).transpose()?;
            times.quotes += lap(&mut t);
            times.quote_searches += u64::from(q.is_some());
            let revised = |cfg: &Config, taken: &[u64]| revised_shingles(store, cfg, seq, taken);
            let mut result = table_phases(&mut *stage, engine, table, (&mut doc, seq, &when), times, &mut t, revised)?;
            crate::failpoint::hit("analyse.after-table")
                .map_err(|e| StoreError::Io { path: store.path().to_path_buf(), source: e })?;
            align(store, engine, &doc, &mut result, &when)?;
            times.align += lap(&mut t);
            (result, q)
        }
    };
    dates.check()?;
    let nd_keys = nd.as_ref().map(|nd| nd.keys.clone()).unwrap_or_default();
    let mut add = IndexAdd::found(q.as_ref(), nd_keys);
    if stage.elsewhere() {
        add = add.words_only();
    }
    Indexes::over(table.index_region_mut()?, shape).add(rc.quote(), seq, &add);
    times.index += lap(&mut t);
    Ok((result, nd, q, templates, exact))
}

/// What document `seq`'s batch records of its tokens (`prepared`'s, of `text`),
/// published as `dates` say: a copy of the first stored document holding them, where
/// that was published before it (and its text or its tokens are read back equal: the
/// hash is no proof);
/// the first, where no stored document holds them; else nothing (a late original,
/// analysed in full). A document without a shingle records nothing, nor does any where
/// exact copies are off (`Config::exact_copies`) or in a deployment (its table and
/// indexes elsewhere, or its store one partition of many).
fn exact_of(
    store: &Store,
    engine: &Engine,
    elsewhere: bool,
    (prepared, text): (&Prepared, &str),
    seq: u64,
    dates: &Dates<'_>,
) -> Result<(Exact, Option<Vec<u64>>)> {
    let tokens = prepared.doc.tokens();
    let unrecorded = Ok((Exact::Unrecorded, None));
    let Some(hash) = prepared.tokens_hash else { return unrecorded };
    if elsewhere || store.partitioned() || tokens.len() < engine.config().k as usize {
        return unrecorded;
    }
    let Some(FirstHolder { seq: first, nd_keys }) = store.first_with_tokens(hash)? else {
        return Ok((Exact::First(hash), None));
    };
    if first >= seq || dates.key(first) > dates.key(seq) {
        return unrecorded;
    }
    // The first copy gives the record the keys it computes.
    let copy = Exact::CopyOf(first, nd_keys.is_none().then_some(hash));
    // The same bytes are the same tokens: alignment then reads the earlier document's
    // as this one's, without tokenizing its text again (most copies are of the bytes).
    if store.text_hash(first)? == Some(prepared.text_hash) && store.text(first)?.as_deref() == Some(text) {
        store.note_tokens(first, tokens.iter().map(|t| t.fp).collect());
        return Ok((copy, nd_keys));
    }
    let same = recompute::origin_text(store, engine, first)?
        .is_some_and(|o| o.tokens().iter().copied().eq(tokens.iter().map(|t| t.fp)));
    match same {
        true => Ok((copy, nd_keys)),
        false => unrecorded,
    }
}

/// The table's phases of document `seq`, `doc`, an exact copy of the earlier document
/// `of`: they take none of its shingles (the table's counters of applied documents move
/// on, as for any document); then its result ([`copy_result`]), at the threshold the
/// table would have selected it at.
fn copy_applied(
    store: &Store,
    engine: &mut Engine,
    (table, stage): (&mut TableFile, &mut dyn TableStage),
    (mut doc, seq, of, when): (engine::Prepared, u64, u64, When<'_>),
    (times, t): (&mut StageTimes, &mut Instant),
) -> Result<DocResult> {
    let mut empty = doc.without_shingles();
    table_phases(stage, engine, table, (&mut empty, seq, when), times, t, |_, _| Ok(Vec::new()))?;
    doc.at_density(empty.density());
    let of_text = recompute::origin_text_of_copy(store, engine, of, &doc)?;
    let result = copy_result(store, engine, &doc, (seq, of), when, &of_text.map(|t| (of, t)).into_iter().collect())?;
    times.align += lap(t);
    Ok(result)
}

/// The result of document `seq`, `doc` (kept at its threshold), an exact copy of `of`
/// ([`Engine::exact_copy`]), aligned against `of`'s text and blocks (those of documents
/// not stored yet from `unstored`).
fn copy_result(
    store: &Store,
    engine: &Engine,
    doc: &engine::Prepared,
    (seq, of): (u64, u64),
    when: When<'_>,
    unstored: &HashMap<u64, Arc<OriginText>>,
) -> Result<DocResult> {
    let mut result = engine.exact_copy(doc, seq, of, when);
    align_with(store, engine, doc, &mut result, when, unstored)?;
    Ok(result)
}

/// The revisions the arrival of document `cause` (published at its time) makes (issue
/// 25): the documents whose entries it took over (`taken`) and those that copied from
/// them, re-analysed as the table now says in publication order, within `budget`
/// (which it spends): those whose result changed, with their results before
/// and after, and the documents beyond the budget, for the revision queue.
pub(super) fn revise(
    store: &Store,
    engine: &mut Engine,
    (table, stage): (&TableFile, &mut dyn TableStage),
    (cause, time, text, result): (u64, i64, &str, &DocResult),
    taken: &[u64],
    budget: &mut Budget,
) -> Result<Revisions> {
    if taken.is_empty() {
        return Ok(Revisions::default());
    }
    // Alignment reads origins' texts and blocks: the cause's and the revised ones' are
    // not stored yet.
    let mut fresh: HashMap<u64, Arc<OriginText>> = HashMap::new();
    fresh.insert(cause, Arc::new(engine.origin_text(text, &result.copied_blocks)));
    let affected = affected(store, cause, taken)?;
    let mut keyed = Vec::with_capacity(affected.len());
    for s in affected {
        keyed.push((store.published_time(s)?.ok_or(DataDirError::MissingText(s))?, s));
    }
    keyed.sort_unstable();
    let mut out = Revisions::default();
    for (s_time, s) in keyed {
        let text = store.text(s)?.ok_or(DataDirError::MissingText(s))?;
        if !out.queued.is_empty() || !budget.take(text.len() as u64, false) {
            out.queued.push(s);
            continue;
        }
        let one = revise_one(store, engine, (table, &mut *stage), (s, s_time, &text), Some((cause, time)), &mut fresh)?;
        out.done.extend(one);
    }
    Ok(out)
}

/// The documents a take-over of `taken`'s entries by document `cause` revises: those
/// it took from and those that copied from them, ascending.
fn affected(store: &Store, cause: u64, taken: &[u64]) -> Result<BTreeSet<u64>> {
    let mut affected: BTreeSet<u64> = taken.iter().copied().collect();
    for &o in taken {
        affected.extend(store.copiers_of(o)?);
    }
    affected.remove(&cause);
    Ok(affected)
}

/// What a table elsewhere needs to answer the revisions of a take-over of `taken`'s
/// entries by document `cause` ([`Feedback::revise`](textorigin_core::engine::Feedback::revise)):
/// each revised document with the fingerprints of the shingles it was selected with.
fn revised_shingles(store: &Store, cfg: &Config, cause: u64, taken: &[u64]) -> Result<Vec<(u64, Vec<u64>)>> {
    let mut engine = Engine::new(cfg.clone());
    let mut out = Vec::new();
    for s in affected(store, cause, taken)? {
        let text = store.text(s)?.ok_or(DataDirError::MissingText(s))?;
        let density = store.result(s)?.ok_or(DataDirError::MissingText(s))?.density;
        let mut doc = engine.prepare(&text);
        doc.at_density(density.unwrap_or(FLOOR));
        out.push((s, doc.items().iter().map(|it| it.fp).collect()));
    }
    Ok(out)
}

/// Re-analyses stored document `s` against the table as it is now (told the time of
/// `cause` when that is not stored yet): its revision when the result changed, whose
/// new blocks go into `fresh` for the documents revised after it.
pub(super) fn revise_one(
    store: &Store,
    engine: &mut Engine,
    (table, stage): (&TableFile, &mut dyn TableStage),
    (s, s_time, text): (u64, i64, &str),
    cause: Option<(u64, i64)>,
    fresh: &mut HashMap<u64, Arc<OriginText>>,
) -> Result<Option<Revised>> {
    let before = store.result(s)?.ok_or(DataDirError::MissingText(s))?;
    let mut doc = engine.prepare(text);
    let dates = Dates::new(store, s, s_time);
    if let Some((c, t)) = cause {
        dates.know(c, t);
    }
    let when = |x| dates.key(x);
    // The shingles it was selected with when applied.
    doc.at_density(before.density.unwrap_or(FLOOR));
    let after = match store.copy_of(s)? {
        // An exact copy follows its earlier document's blocks, not the table.
        Some(of) => copy_result(store, engine, &doc, (s, of), &when, fresh)?,
        None => {
            let found = stage.lookups(&doc, table, s).map_err(DataDirError::Stage)?;
            let mut after = engine.reanalyse_found(&doc, s, &found, &when);
            align_with(store, engine, &doc, &mut after, &when, fresh)?;
            after
        }
    };
    dates.check()?;
    if after == before {
        return Ok(None);
    }
    fresh.insert(s, Arc::new(engine.origin_text(text, &after.copied_blocks)));
    Ok(Some(Revised { seq: s, after, before }))
}

/// Whether `replayed` reproduces the result a document got when it was applied
/// (`first`, [`Store::first_result`]): equal, or, where one of its origins' results was
/// revised since (alignment reads an origin's current blocks), equal in everything
/// estimation made of the table (counts, per-shingle origins, and so the table's
/// dominant origin; the dominant origin by blocks follows the alignment). A result
/// stored before the adaptive density's extra entries were guests (schema 24,
/// [`Store::guests_from`]) was made by a rule replay does not follow: not compared.
pub(super) fn reproduces(store: &Store, replayed: &DocResult, first: Option<&DocResult>) -> Result<bool> {
    let Some(first) = first else { return Ok(false) };
    if replayed == first || first.seq < store.guests_from()? {
        return Ok(true);
    }
    let same_counts = (replayed.seq, replayed.tokens, replayed.shingles, replayed.selected, replayed.hits)
        == (first.seq, first.tokens, first.shingles, first.selected, first.hits);
    let same_origins = (&replayed.origin_counts, &replayed.selected_origins, replayed.density)
        == (&first.origin_counts, &first.selected_origins, first.density);
    if !(same_counts && same_origins) {
        return Ok(false);
    }
    for &(o, _) in &first.origin_counts {
        if o != first.seq && !store.revisions(o)?.is_empty() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// A document's analysis: its result, its near-duplicate and quotation findings (None
/// when the feature is off), its site's template records (empty without a site) and
/// its exact-copy record.
pub(super) type Analysed = (DocResult, Option<NearDupWrite>, Option<QuoteFind>, TemplateWrite, Exact);

/// The engine's three phases for the prepared document `doc`, `seq`, kept at the
/// table's threshold: 1 and 3 by `stage`, estimation here, in publication order
/// (`when`). Times them into `times` from `t`.
/// For a table elsewhere, the feedback lists what the take-overs revise, from
/// `revised` (given the origins taken over).
pub(super) fn table_phases(
    stage: &mut dyn TableStage,
    engine: &mut Engine,
    table: &mut TableFile,
    (doc, seq, when): (&mut engine::Prepared, u64, When<'_>),
    times: &mut StageTimes,
    t: &mut Instant,
    revised: impl FnOnce(&Config, &[u64]) -> Result<Vec<(u64, Vec<u64>)>>,
) -> Result<DocResult> {
    // The shingles the table's density threshold selects now.
    let (density, asks) = stage.density(table, seq).map_err(DataDirError::Stage)?;
    doc.at_density(density);
    let hits = stage.probe(engine, doc, table, seq, when).map_err(DataDirError::Stage)?;
    times.table += lap(t);
    let estimate = engine.estimate(doc, seq, &hits, when);
    times.estimation += lap(t);
    let mut feedback = engine.feedback(doc, &estimate);
    feedback.asks = asks;
    if stage.elsewhere() {
        let taken = stage.taken();
        if !taken.is_empty() {
            feedback.revise = revised(engine.config(), &taken)?;
        }
    }
    stage.score(engine, table, &feedback).map_err(DataDirError::Stage)?;
    times.table += lap(t);
    Ok(estimate.result)
}
