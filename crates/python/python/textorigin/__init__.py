"""textorigin from Python: where each piece of a document's text came from.

A :class:`Collection` is a textorigin data directory (the same one the command line
and the daemon use). Documents go in as dicts (``id``, ``text`` or ``html``, ``url``,
``published_at``/``date``; every other field is kept as the document's ``meta``) or
as plain strings; each result comes out as the dict ``textorigin show --json``
prints::

    import textorigin

    with textorigin.Collection("data", table_size="64MiB", quotations=False) as c:
        for doc in c.ingest([{"id": "a", "text": "..."}, "another document"]):
            print(doc["id"], doc["dominant_origin"], doc["old_tokens"] / doc["tokens"])
        print(c.show("a")["copied_blocks"])

The analysis runs in Rust with the GIL released, on the same preparation threads as
``textorigin ingest``.
"""

from __future__ import annotations

import collections
import json
import os
import threading
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from ._textorigin import Error, Native

__all__ = ["Collection", "Document", "DocumentError", "Error", "annotate"]

#: A document: a dict of fields, or its text.
Document = Union[str, Dict[str, Any]]


class DocumentError(Error):
    """A document that could not be ingested; the message is the command line's."""


def _line(doc: Document) -> str:
    if isinstance(doc, str):
        return json.dumps({"text": doc})
    if isinstance(doc, dict):
        return json.dumps(doc, default=str)
    raise TypeError(f"a document is a str or a dict, not {type(doc).__name__}")


def _batches(items: Iterable[Any], size: int) -> Iterator[List[Any]]:
    """Lists of ``items``: the first small (the native side starts at once rather than
    after a whole batch was encoded), each twice the last, up to ``size``."""
    batch: List[Any] = []
    n = min(64, size)
    try:
        for item in items:
            batch.append(item)
            if len(batch) == n:
                yield batch
                batch = []
                n = min(2 * n, size)
    except Exception:
        # The items taken before the iterable raised are fed too (issue 53: a
        # generator that raised at row 4,000 left the rows of its last batch unstored).
        if batch:
            yield batch
        raise
    if batch:
        yield batch


# The summary columns that hold a document's id (or nothing).
_ID_COLUMNS = ("id", "dominant_origin", "near_duplicate_of", "exact_duplicate_of")


class Collection:
    """A data directory, opened (or created) for writing.

    ``settings`` are the command line's, by their TOML names: ``table_size="64MiB"``,
    ``index_size``, ``k``, ``selection``, ``eviction``, ``estimation``, ``seed``,
    ``propagate``, ``align``, ``origins``, ``near_duplicates``, ``quotations`` (``False``: that
    feature off), ``templates``, ``site_field`` (the metadata field naming a site),
    ``exact_copies`` (``False``: a document with the terms of an earlier one is analysed
    as any other, not answered from it), and the tables ``neardup`` and ``quotes`` as dicts. A directory
    remembers them, as with the command line. The directory is locked while open:
    use the collection as a context manager, or call :meth:`close`.

    ``read_only=True`` opens an existing directory without its lock, beside a running
    ``textorigin serve`` or another writer (as ``textorigin query`` does): :meth:`show`,
    :meth:`query`, :meth:`stats` and the iterations read every document stored so far
    (each call, or each iteration at its start, catches up with the writer); the
    ingesting methods raise :class:`Error`. It takes no settings.
    """

    def __init__(self, path: Union[str, "os.PathLike[str]"], *, read_only: bool = False, **settings: Any) -> None:
        self._native = Native(os.fspath(path), json.dumps(settings) if settings else None, read_only)
        self._named = 0

    def __enter__(self) -> "Collection":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Flushes and closes the data directory (closing twice does nothing)."""
        self._native.close()

    def _ingest(
        self,
        docs: Iterable[Document],
        errors: str,
        batch: int,
        threads: Optional[int],
        results: str,
        force: bool = False,
    ) -> Iterator[Tuple[bool, str]]:
        """(ok, result or reason) per document, in order. Three stages overlap: a thread
        turns the documents into JSON batches and feeds them to one native ingestion
        (which runs on threads of its own, the GIL released), and the caller has Rust
        read the results of the documents stored so far (the views) and decodes them
        while the ingestion goes on; at most two batches wait for the ingestion."""
        if errors not in ("report", "raise"):
            raise ValueError(f"errors must be 'report' or 'raise', not {errors!r}")
        if results not in ("view", "summary", "id"):
            raise ValueError(f"results must be 'view', 'summary' or 'id', not {results!r}")
        threads = threads or os.cpu_count() or 1
        stop = threading.Event()
        failure: List[BaseException] = []
        ingestion = self._native.ingestion(self._named + 1, threads, errors == "raise", force)

        def encode() -> None:
            try:
                for chunk in _batches(docs, batch):
                    lines = [_line(d) for d in chunk]
                    if stop.is_set() or not ingestion.feed(lines):
                        return
                    self._named += len(lines)  # what was fed, consumed or not
            except BaseException as e:  # raised to the caller after the documents before it
                failure.append(e)
            finally:
                ingestion.close()

        encoder = threading.Thread(target=encode, daemon=True)
        encoder.start()
        stored = failed = 0
        try:
            while True:
                out = ingestion.take()
                if out is None:
                    break
                views = iter(self._native.views([seq for seq, _ in out if seq is not None], results, threads))
                for seq, why in out:
                    if seq is None:
                        if errors == "raise":
                            raise DocumentError(why)
                        failed += 1
                        yield False, why
                    else:
                        stored += 1
                        yield True, next(views)
            encoder.join()
            if failure:
                # Issue 53: the caller is told how far the documents got.
                failure[0].add_note(
                    f"textorigin: the {stored + failed} document(s) taken before this error were ingested "
                    f"({stored} stored, {failed} failed) and none after it; ingesting the same documents "
                    "again skips those stored"
                )
                raise failure[0]
        finally:
            stop.set()
            ingestion.close()
            encoder.join()
            ingestion.finish()

    def ingest(
        self,
        docs: Iterable[Document],
        *,
        errors: str = "report",
        results: str = "view",
        batch: int = 2048,
        threads: Optional[int] = None,
        force: bool = False,
    ) -> List[Dict[str, Any]]:
        """Stores and analyses ``docs`` in order and returns their results, one a
        document, once all are stored (:meth:`ingest_iter` yields them as they come,
        for a stream too large to hold its results). Arguments as :meth:`ingest_iter`.
        """
        return list(self.ingest_iter(docs, errors=errors, results=results, batch=batch, threads=threads, force=force))

    def ingest_files(
        self,
        paths: Iterable[Union[str, "os.PathLike[str]"]],
        *,
        threads: Optional[int] = None,
        force: bool = False,
    ) -> Dict[str, Any]:
        """Stores and analyses files and directories as ``textorigin ingest`` does, in
        every format it reads: text, HTML (read as the collection says: its main
        content by default), JSON lines, WARC and WET (a page a record, named and linked
        by its URL), Parquet (a row a document, the ``text`` and ``id`` columns), each
        also gzip- or zstd-compressed. Returns the counts: ``stored``,
        ``stored_before`` (not stored again unless ``force=True``), ``failed``, and
        ``errors`` (the failures' messages); :meth:`show` and :meth:`export` give the
        results.
        """
        return json.loads(
            self._native.ingest_files([os.fspath(p) for p in paths], threads or os.cpu_count() or 1, force)
        )

    def ingest_iter(
        self,
        docs: Iterable[Document],
        *,
        errors: str = "report",
        results: str = "view",
        batch: int = 2048,
        threads: Optional[int] = None,
        force: bool = False,
    ) -> Iterator[Dict[str, Any]]:
        """Stores and analyses ``docs`` in order, yielding each one's result as it is
        stored: lazily, so nothing is stored until the results are taken (iterate it to
        the end, or use :meth:`ingest`, which does).

        A document stored before (the same ``id``, or the same place in an ingestion of
        a collection opened anew when it has none, and the same text, ``url`` and date)
        is not stored again, as with the command line: its stored result is yielded.
        ``force=True`` stores it again.

        A document that cannot be ingested (no text, malformed, too much metadata)
        fails alone, as in the command line: with ``errors="report"`` its place in the
        output is ``{"error": message}``; with ``errors="raise"`` a
        :class:`DocumentError` is raised there, the documents before it stored and
        none after it.
        Each result is the document's view (``results="view"``, what ``show --json``
        prints), its summary row (``"summary"``: what ``export --format csv`` writes),
        or ``{"id": ID}`` alone (``"id"``: nothing read back, the fastest; ``show`` and
        ``export`` give the rest later). Documents go to Rust ``batch`` at a time;
        ``threads`` preparation threads (default: one a core).
        """
        for ok, payload in self._ingest(docs, errors, batch, threads, results, force):
            yield json.loads(payload) if ok else {"error": payload}

    def query(self, doc: Document) -> Dict[str, Any]:
        """Analyses ``doc`` against the collection without storing it."""
        return json.loads(self._native.query(_line(doc)))

    def show(self, name_or_id: Union[str, int]) -> Dict[str, Any]:
        """A stored document's result (what ``textorigin show --json`` prints): by id
        (an ``int``, or ``"#42"``) or by name. Each copied block has its passage in its
        origin (``source``: token and byte spans of the origin's :meth:`text`), and
        ``similarity`` the share of the document's words each source accounts for."""
        key = f"#{name_or_id}" if isinstance(name_or_id, int) else name_or_id
        return json.loads(self._native.show(key))

    def text(self, name_or_id: Union[str, int]) -> str:
        """A stored document's text, which its byte spans are of."""
        key = f"#{name_or_id}" if isinstance(name_or_id, int) else name_or_id
        return self._native.text(key)

    def side_by_side(self, name_or_id: Union[str, int], source: Union[str, int, None] = None) -> Dict[str, Any]:
        """A document beside one of its sources (by default the one it copied the most
        words from), as ``show --side-by-side --json``: ``percent``, ``similarity``,
        ``pairs`` (byte spans of each copied passage in both texts and the edited words
        of each), with both texts (``text``, ``source_text``)."""
        key = f"#{name_or_id}" if isinstance(name_or_id, int) else name_or_id
        other = f"#{source}" if isinstance(source, int) else source
        return json.loads(self._native.side_by_side(key, other))

    def export(self, batch: int = 256) -> Iterator[Dict[str, Any]]:
        """Every stored document's result in order (what ``textorigin export`` writes)."""
        return self._paged(self._native.export_after, batch)

    def _paged(self, fetch: Any, batch: int) -> Iterator[Dict[str, Any]]:
        after = 0
        while True:
            rows = fetch(after, batch)
            if not rows:
                return
            for seq, row in rows:
                after = seq
                yield json.loads(row)

    def decisions(
        self, *, near_threshold: Optional[float] = None, old_threshold: float = 0.9, batch: int = 256
    ) -> Iterator[Dict[str, Any]]:
        """Every stored document's keep or drop decision in order, with its rule and
        cluster (what ``textorigin export --format decisions`` writes, at the same
        thresholds; ``near_threshold`` by default the collection's near-duplicate
        threshold, as there)."""
        return self._paged(lambda after, n: self._native.decisions_after(after, n, near_threshold, old_threshold), batch)

    def attributes(
        self,
        *,
        near_threshold: Optional[float] = None,
        old_threshold: float = 0.9,
        attribute: str = "textorigin_copied_spans",
        batch: int = 256,
    ) -> Iterator[Dict[str, Any]]:
        """Every stored document's Dolma attributes in order (what ``textorigin export
        --format attributes`` writes: the copied spans in characters under
        ``attribute``, and ``textorigin_drop``, ``textorigin_old_fraction`` and
        ``textorigin_cluster`` at the same thresholds as :meth:`decisions`)."""
        return self._paged(
            lambda after, n: self._native.decisions_after(after, n, near_threshold, old_threshold, attribute), batch
        )

    def near_duplicates(self, batch: int = 256) -> Iterator[Dict[str, Any]]:
        """Every stored document that has earlier near-duplicates, in order, with them
        (what ``textorigin neardups NAME --json`` prints: id, name and
        ``near_duplicates``, each with its id, name, resemblance and verdicts)."""
        return (v for v in self._paged(self._native.near_duplicates_after, batch) if v["near_duplicates"])

    def summaries(self, batch: int = 1024) -> Iterator[Dict[str, Any]]:
        """Every stored document's summary row in order (the columns of ``textorigin
        export --format csv``: id, seq, tokens, old_fraction, dominant_origin,
        near_duplicate_of, exact_duplicate_of, quotations; None where the CSV cell is
        empty). ``id`` and the columns that name another document carry the input's
        ids (a number where the input's was one); ``seq`` is textorigin's number."""
        return self._paged(self._native.summaries_after, batch)

    def to_arrow(self) -> Any:
        """The summary rows (:meth:`summaries`) as a ``pyarrow.Table`` (needs
        ``pyarrow``). Documents are named by the input's ids, as the rows are: the
        columns ``id``, ``dominant_origin``, ``near_duplicate_of`` and
        ``exact_duplicate_of`` are nullable ``int64`` when every input id was an
        integer, else strings (an integer id then as its text), null where there is
        none; ``seq`` is textorigin's own number. ``.to_pandas(types_mapper=pandas.ArrowDtype)``
        keeps nullable integers so (plain ``.to_pandas()`` turns them into floats, as
        pandas does)."""
        try:
            import pyarrow
        except ImportError as e:
            raise ImportError("Collection.to_arrow needs pyarrow: pip install pyarrow") from e
        rows = list(self.summaries())
        if not rows:
            return pyarrow.Table.from_pylist(rows)
        ids_are_numbers = all(type(r["id"]) is int for r in rows)
        if not ids_are_numbers:
            for r in rows:
                for key in _ID_COLUMNS:
                    if r[key] is not None:
                        r[key] = str(r[key])

        def kind(key: str) -> Any:
            # Issue 53: a column of ids with nulls came out as floats (NaN).
            if key in _ID_COLUMNS:
                return pyarrow.int64() if ids_are_numbers else pyarrow.string()
            values = [r[key] for r in rows if r[key] is not None]
            if key == "seq" or (values and all(type(v) is int for v in values)):
                return pyarrow.int64()
            if values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
                return pyarrow.float64()
            return pyarrow.array(values).type if values else pyarrow.string()

        schema = pyarrow.schema([(key, kind(key)) for key in rows[0]])
        return pyarrow.Table.from_pylist(rows, schema=schema)

    def documents(self, batch: int = 1024) -> Iterator[Dict[str, Any]]:
        """Every stored document's row in order (what ``textorigin list --json`` prints:
        id, name, source, tokens, old tokens, copied blocks, dominant origin)."""
        return self._paged(self._native.documents_after, batch)

    def stats(self) -> Dict[str, Any]:
        """What ``textorigin stats --json`` prints."""
        return json.loads(self._native.stats())


def annotate(
    collection: Collection,
    rows: Iterable[Dict[str, Any]],
    *,
    text: str = "text",
    batch: int = 2048,
) -> Iterator[Dict[str, Any]]:
    """Ingests ``rows`` (dicts with a ``text`` field, as a dataset's rows) and yields
    each row with the columns ``old_fraction``, ``dominant_origin`` and
    ``near_duplicate_of`` (earlier documents, or ``None``: by the dataset's own ``id``
    when its rows have one, else by textorigin's id), ``textorigin_dominant_origin``
    and ``textorigin_near_duplicate_of`` (textorigin's ids of the same), and
    ``textorigin_id`` (its own id; ``None`` with ``error`` when it failed)."""
    # One ingestion for all the rows (its pipeline runs on); each result is for the
    # oldest row handed to it and not yet answered.
    pending: "collections.deque[Dict[str, Any]]" = collections.deque()

    def docs() -> Iterator[Dict[str, Any]]:
        for row in rows:
            pending.append(row)
            yield dict(row, text=row[text]) if text != "text" else row

    # The dataset's id (as text) -> textorigin's id, for the rows of this call and the
    # earlier documents looked up (by their stored name, which is the id they came with).
    ours: Dict[str, int] = {}

    def textorigin_id(theirs: Any) -> Optional[int]:
        if theirs is None:
            return None
        key = str(theirs)
        if key not in ours:
            ours[key] = collection.show(key)["id"]
        return ours[key]

    for ok, payload in collection._ingest(docs(), "report", batch, None, "summary"):
        row = pending.popleft()
        out = dict(row)
        if ok:
            # The summary names documents by the input's ids, itself also by `seq`.
            s = json.loads(payload)
            ours[str(s["id"])] = s["seq"]
            by_theirs = "id" in row
            dominant, near = textorigin_id(s["dominant_origin"]), textorigin_id(s["near_duplicate_of"])
            out.update(
                textorigin_id=s["seq"],
                old_fraction=s["old_fraction"],
                dominant_origin=s["dominant_origin"] if by_theirs else dominant,
                near_duplicate_of=s["near_duplicate_of"] if by_theirs else near,
                textorigin_dominant_origin=dominant,
                textorigin_near_duplicate_of=near,
            )
        else:
            out.update(
                textorigin_id=None,
                old_fraction=None,
                dominant_origin=None,
                near_duplicate_of=None,
                textorigin_dominant_origin=None,
                textorigin_near_duplicate_of=None,
                error=payload,
            )
        yield out
