"""The Python package against the command line on the same corpus (issue 24).

Run by scripts/test.sh in a fresh virtual environment with the wheel installed;
TEXTORIGIN_BIN names the command-line binary of the same build.
"""

import itertools
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import textorigin

ROOT = Path(__file__).resolve().parents[3]
MAIL = ROOT / "tests" / "fixtures" / "mail-sample.jsonl"


def cli():
    binary = os.environ.get("TEXTORIGIN_BIN")
    assert binary, "TEXTORIGIN_BIN must name the textorigin binary of this build"
    return binary


def mail_docs():
    return [json.loads(line) for line in MAIL.read_text().splitlines() if line.strip()]


def normalised(view):
    """A view without its `source` (the CLI's file:line, Python's python:N)."""
    return {k: v for k, v in view.items() if k != "source"}


def generated(n, seed=7):
    """`n` documents of which later ones copy passages of earlier ones."""
    x = seed
    docs, texts = [], []
    for i in range(n):
        words = []
        for _ in range(3):
            x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
            if texts and x % 3:
                src = texts[(x >> 20) % len(texts)]
                at = (x >> 40) % max(1, len(src) - 30)
                words += src[at : at + 30]
            else:
                for _ in range(40):
                    x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
                    words.append(f"w{(x >> 33) % 6000}")
        texts.append(words)
        docs.append({"id": f"g{i}", "text": " ".join(words) + "."})
    return docs


def test_ingest_results_equal_the_command_lines_export(tmp_path):
    subprocess.run([cli(), "ingest", "--data", str(tmp_path / "cli"), "--table-size", "4MiB", str(MAIL)], check=True)
    exported = subprocess.run([cli(), "export", "--data", str(tmp_path / "cli")], check=True, capture_output=True, text=True)
    expected = [normalised(json.loads(line)) for line in exported.stdout.splitlines()]
    with textorigin.Collection(tmp_path / "py", table_size="4MiB") as c:
        got = [normalised(v) for v in c.ingest(mail_docs(), batch=37)]
        assert got == expected
        assert [normalised(v) for v in c.export()] == expected
        assert c.stats()["documents"] == len(expected)


def test_a_bad_document_fails_alone_as_in_the_command_line(tmp_path):
    docs = [{"id": "a", "text": "the first document has words"}, {"id": "b"}, "a plain text document of words"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(d if isinstance(d, dict) else {"text": d}) + "\n" for d in docs))
    run = subprocess.run([cli(), "ingest", "--data", str(tmp_path / "cli"), "--table-size", "4MiB", str(bad)], capture_output=True, text=True)
    assert run.returncode == 3
    assert "bad.jsonl:2: JSON object has neither `text` nor `html`\n" in run.stderr
    with textorigin.Collection(tmp_path / "report", table_size="4MiB") as c:
        out = list(c.ingest(docs))
        assert out[1] == {"error": "python:2 (id b): JSON object has neither `text` nor `html`"}
        assert [o.get("name") for o in out] == ["a", None, "python:3"]
    with textorigin.Collection(tmp_path / "raise", table_size="4MiB") as c:
        with pytest.raises(textorigin.DocumentError, match=r"python:2 \(id b\): JSON object has neither `text` nor `html`"):
            list(c.ingest(docs, errors="raise"))
        assert c.stats()["documents"] == 1, "the document before it is stored"
    # A failure that ends a batch stops the batches after it too.
    with textorigin.Collection(tmp_path / "raise-batch", table_size="4MiB") as c:
        with pytest.raises(textorigin.DocumentError):
            list(c.ingest(docs, errors="raise", batch=2))
        assert c.stats()["documents"] == 1
    with pytest.raises(TypeError):
        with textorigin.Collection(tmp_path / "type", table_size="4MiB") as c:
            list(c.ingest([42]))


def test_settings_are_the_command_lines(tmp_path):
    with pytest.raises(textorigin.Error, match="table_sise"):
        textorigin.Collection(tmp_path / "a", table_sise="4MiB")
    with pytest.raises(textorigin.Error, match="bogus"):
        textorigin.Collection(tmp_path / "b", table_size="bogus")
    with textorigin.Collection(tmp_path / "c", table_size="4MiB", quotations=False) as c:
        view = c.ingest(["a document with a few words in it"])[0]
        assert view["quotations"] is None, "quotation search is off: null, not []"
        assert c.stats()["quotations"] is False
    # The directory remembers; another switch is refused with the command's advice.
    with pytest.raises(textorigin.Error, match="rebuild"):
        textorigin.Collection(tmp_path / "c", quotations=True)
    # The lock: a second writer is refused while the first is open.
    with textorigin.Collection(tmp_path / "d", table_size="4MiB"):
        with pytest.raises(textorigin.Error):
            textorigin.Collection(tmp_path / "d")


def test_a_near_duplicates_only_collection_finds_no_origins(tmp_path):
    text = " ".join(f"word{i % 97} term{i % 13}" for i in range(300))
    with textorigin.Collection(tmp_path / "n", table_size="4MiB", origins=False) as c:
        first, again = c.ingest([text, text])
        assert again["origins_off"] is True and again["copied_blocks"] == [] and again["dominant_origin"] is None
        assert [d["id"] for d in again["near_duplicates"]] == [first["id"]], again["near_duplicates"]
        assert c.stats()["origins"] is False
    with pytest.raises(textorigin.Error, match="--origins on"):
        textorigin.Collection(tmp_path / "n", origins=True)


def test_an_exact_copy_is_answered_from_its_earlier_document(tmp_path):
    text = " ".join(f"word{i % 97} term{i % 13}" for i in range(300))
    with textorigin.Collection(tmp_path / "e", table_size="4MiB") as c:
        first, again = c.ingest([text, text.upper()])
        assert again["exact_copy_of"]["id"] == first["id"], again
        assert again["old_tokens"] == again["tokens"] and "exact_copy_of" not in first
    with textorigin.Collection(tmp_path / "f", table_size="4MiB", exact_copies=False) as c:
        first, again = c.ingest([text, text])
        assert "exact_copy_of" not in again and again["old_tokens"] == again["tokens"]
    with pytest.raises(textorigin.Error, match="--exact-copies off"):
        textorigin.Collection(tmp_path / "e", exact_copies=False)


def test_metadata_show_query_and_annotate(tmp_path):
    docs = generated(60)
    docs[0].update(title="The first", tags=["x"])
    with textorigin.Collection(tmp_path / "d", table_size="4MiB") as c:
        list(c.ingest(docs))
        first = c.show("g0")
        assert first["meta"] == {"tags": ["x"], "title": "The first"}
        assert c.show(1) == first and c.show("#1") == first
        q = c.query({"text": docs[5]["text"]})
        assert q["id"] is None and q["old_tokens"] == q["tokens"], "a stored text, queried, is all old"
        rows = list(textorigin.annotate(c, [{"body": docs[3]["text"], "n": 1}, {"body": ""}], text="body"))
    assert rows[0]["n"] == 1 and rows[0]["old_fraction"] == 1.0
    assert rows[0]["near_duplicate_of"] == 4 and rows[0]["textorigin_id"] == 61
    assert rows[1]["textorigin_id"] is None and "empty document" in rows[1]["error"]


def test_the_gil_is_released_while_documents_are_analysed(tmp_path):
    docs = generated(3000)
    ticks = []
    done = threading.Event()

    def count():
        n = 0
        while not done.is_set():
            n += 1
            if n % 2000 == 0:
                ticks.append(time.monotonic())

    with textorigin.Collection(tmp_path / "d", table_size="16MiB") as c:
        lines = [textorigin._line(d) for d in docs]
        counter = threading.Thread(target=count)
        counter.start()
        start = time.monotonic()
        ingestion = c._native.ingestion(1, 2)
        ingestion.feed(lines)
        ingestion.close()
        results = [o for batch in iter(ingestion.take, None) for o in batch]
        end = time.monotonic()
        done.set()
        counter.join()
    assert all(seq is not None for seq, _ in results) and len(results) == 3000
    during = [t for t in ticks if start <= t <= end]
    gaps = [b - a for a, b in zip([start] + during, during + [end])]
    assert end - start > 0.2, "a call long enough to tell"
    assert max(gaps) < (end - start) / 4, f"the counting thread ran during the call: longest pause {max(gaps):.3f} s of {end - start:.3f} s"


def test_the_annotation_example_runs(tmp_path):
    corpus = tmp_path / "c.jsonl"
    docs = generated(40)
    corpus.write_text("".join(json.dumps({"body": d["text"], "n": i}) + "\n" for i, d in enumerate(docs + docs[:2])))
    example = ROOT / "examples" / "python" / "annotate_dataset.py"
    out = tmp_path / "out.jsonl"
    subprocess.run([sys.executable, str(example), str(corpus), str(out), "--text", "body", "--data", str(tmp_path / "d")], check=True)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 42 and rows[0]["textorigin_id"] == 1
    assert (rows[40]["near_duplicate_of"], rows[41]["near_duplicate_of"]) == (1, 2), "the repeated first two rows"
    assert rows[40]["old_fraction"] == 1.0 and rows[40]["dominant_origin"] == 1


def test_a_collection_never_closed_is_closed_when_collected(tmp_path):
    import gc

    c = textorigin.Collection(tmp_path / "d", table_size="4MiB")
    list(c.ingest(generated(20)))
    del c
    gc.collect()
    # Reopened as it was left: no "not closed cleanly" (which asks for a rebuild).
    with textorigin.Collection(tmp_path / "d") as again:
        assert again.stats()["documents"] == 20
    run = subprocess.run([cli(), "stats", "--json", "--data", str(tmp_path / "d")], check=True, capture_output=True, text=True)
    assert json.loads(run.stdout)["table"]["in_use"] is False


def test_an_ingestion_left_or_interrupted_lets_the_collection_go_on(tmp_path):
    docs = generated(300)
    with textorigin.Collection(tmp_path / "d", table_size="4MiB") as c:
        # A document Python cannot send: the ones before it come out, then the error.
        out = []
        with pytest.raises(TypeError):
            for v in c.ingest_iter(docs[:5] + [42] + docs[5:10], batch=2):
                out.append(v["id"])
        assert out == [1, 2, 3, 4], "the documents of the batches before the bad one"
        # A generator left half-way (its documents never end): what was fed is stored,
        # and the next one goes on.
        endless = ({"text": docs[i % 300]["text"]} for i in itertools.count())
        first = c.ingest_iter(endless, batch=16)
        assert next(first)["id"] == 5
        second = c.ingest_iter(docs[:1])
        with pytest.raises(textorigin.Error, match="another ingestion is running"):
            next(second)
        first.close()
        stored = c.stats()["documents"]
        assert stored >= 5
        assert c.ingest(docs[:1], force=True)[0]["id"] == stored + 1
        # Closing the collection while an ingestion waits for its reader.
        third = c.ingest_iter(docs[1:50], batch=8, force=True)
        next(third)
        c.close()
    with textorigin.Collection(tmp_path / "d") as again:
        assert again.stats()["documents"] >= stored + 2


def test_chinese_text_is_found_copied_by_character(tmp_path):
    """Issue 33: a Chinese sentence copied into another document is a copied block with
    its origin, with character offsets into the text, and the `terms` setting is the
    command line's (`words`, the rule before, finds nothing)."""
    sentence = "工程师们更换了全部十一根钢缆，重建了南侧引桥，并安装了新的排水系统。"
    docs = [
        {"id": "report", "text": "旧港大桥重新通车。" + sentence + "市长为大桥剪彩。"},
        {"id": "roundup", "text": "本周的本地新闻从海滨开始。" + sentence + "图书馆延长了开放时间。"},
    ]
    with textorigin.Collection(tmp_path / "u", table_size="4MiB") as c:
        list(c.ingest(docs))
        v = c.show("roundup")
        blocks = [b for b in v["copied_blocks"] if b["origin"]["name"] == "report"]
        assert blocks and sentence[:-1] in blocks[0]["text"], v["copied_blocks"]
        text = docs[1]["text"]
        start = len(text.encode()[: blocks[0]["start_byte"]].decode())
        assert text[start:].startswith(blocks[0]["text"]), "byte offsets on character boundaries"
    with textorigin.Collection(tmp_path / "w", table_size="4MiB", terms="words") as c:
        list(c.ingest(docs))
        assert c.show("roundup")["copied_blocks"] == []


def test_a_rerun_stores_nothing_twice_unless_forced(tmp_path):
    """Issue 35: the same rows again (a re-run of a script) are not stored twice; their
    stored results come back, as the command line skips what it stored before."""
    docs = generated(30)
    with textorigin.Collection(tmp_path / "c", table_size="4MiB") as c:
        first = list(c.ingest(docs))
    with textorigin.Collection(tmp_path / "c") as c:
        again = list(c.ingest(docs))
        assert again == first
        assert c.stats()["documents"] == 30
        forced = list(c.ingest(docs[:3], force=True))
        assert [v["id"] for v in forced] == [31, 32, 33]
        assert c.stats()["documents"] == 33
    # Rows without ids are named by their place in an ingestion of a collection
    # opened anew: a script run again gives them the same names.
    unnamed = [{"text": d["text"]} for d in docs[:5]]
    with textorigin.Collection(tmp_path / "u", table_size="4MiB") as c:
        a = [v["id"] for v in c.ingest(unnamed)]
    with textorigin.Collection(tmp_path / "u") as c:
        assert [v["id"] for v in c.ingest(unnamed)] == a
        assert c.stats()["documents"] == 5


def test_ingest_stores_without_being_iterated(tmp_path):
    """Issue 35: ``r = c.ingest(rows)`` stored nothing until ``r`` was iterated; it is
    eager now, and the lazy form says so in its name."""
    docs = generated(12)
    with textorigin.Collection(tmp_path / "c", table_size="4MiB") as c:
        r = c.ingest(docs)
        assert c.stats()["documents"] == 12
        assert [v["id"] for v in r] == list(range(1, 13))
        lazy = c.ingest_iter(generated(3, seed=9))
        assert c.stats()["documents"] == 12, "nothing before it is iterated"
        assert len(list(lazy)) == 3 and c.stats()["documents"] == 15


def test_annotate_names_origins_by_the_datasets_ids(tmp_path):
    """Issue 35: ``annotate``'s ``dominant_origin`` was textorigin's internal id; with
    rows that have ids it is the dataset's, ours beside it."""
    docs = [dict(d, id=f"row-{i}") for i, d in enumerate(generated(10))]
    with textorigin.Collection(tmp_path / "c", table_size="4MiB") as c:
        list(c.ingest(docs[:8]))
        # A copy of the first row, all of whose text originated there (a later row's
        # text is partly copied from earlier ones, so its copy's dominant origin can be
        # either: issue 36 counts it by the earliest sources).
        again = [dict(docs[0], id="copy-of-0"), dict(docs[9])]
        out = list(textorigin.annotate(c, again))
    assert out[0]["near_duplicate_of"] == "row-0" and out[0]["textorigin_near_duplicate_of"] == 1
    assert out[0]["dominant_origin"] == "row-0" and out[0]["textorigin_dominant_origin"] == 1
    assert out[1]["textorigin_id"] == 10


def test_errors_name_the_rows_own_id(tmp_path):
    """Issue 35: a failed row was named ``python:8`` only; its own id is named too."""
    with textorigin.Collection(tmp_path / "c", table_size="4MiB") as c:
        out = c.ingest([{"id": "ok-1", "text": "a few words here"}, {"id": "article-42", "text": "   "}, {"id": 7, "html": 3}])
    assert "error" not in out[0]
    assert "python:2 (id article-42)" in out[1]["error"], out[1]
    assert "python:3 (id 7)" in out[2]["error"], out[2]


def test_decisions_and_documents_equal_the_command_lines(tmp_path):
    """Issue 35: the decisions and the list, as the command line gives them."""
    docs = generated(40) + generated(3)
    with textorigin.Collection(tmp_path / "c", table_size="4MiB") as c:
        c.ingest(docs, force=True)
        decisions = list(c.decisions(batch=7))
        strict = list(c.decisions(near_threshold=0.99, old_threshold=0.5))
        rows = list(c.documents(batch=5))
        with pytest.raises(textorigin.Error, match="near threshold 0.5 is below"):
            list(c.decisions(near_threshold=0.5))
    def cli_lines(*args):
        out = subprocess.run([cli(), *args, "--data", str(tmp_path / "c")], check=True, capture_output=True, text=True)
        return out.stdout
    assert decisions == [json.loads(l) for l in cli_lines("export", "--format", "decisions").splitlines()]
    assert strict == [json.loads(l) for l in cli_lines("export", "--format", "decisions", "--near-threshold", "0.99", "--old-threshold", "0.5").splitlines()]
    assert rows == json.loads(cli_lines("list", "--json"))
    assert [d["decision"] for d in decisions[40:]] == ["drop"] * 3, "the repeated first three"


def test_attributes_near_duplicates_and_summaries_equal_the_command_lines(tmp_path):
    """Issue 35: attributes, near-duplicates and the CSV's rows (and as Arrow)."""
    docs = generated(30)
    edited = dict(docs[4], id="g4-edited", text=docs[4]["text"].replace("w", "v", 2))
    docs += [edited, dict(docs[7], id="g7-again")]
    with textorigin.Collection(tmp_path / "c", table_size="4MiB") as c:
        c.ingest(docs)
        attributes = list(c.attributes(batch=4, attribute="copied"))
        near = list(c.near_duplicates(batch=6))
        summaries = list(c.summaries(batch=9))
        table = c.to_arrow()

    def cli_lines(*args):
        out = subprocess.run([cli(), *args, "--data", str(tmp_path / "c")], check=True, capture_output=True, text=True)
        return out.stdout.splitlines()

    assert attributes == [json.loads(l) for l in cli_lines("export", "--format", "attributes", "--attribute", "copied")]
    assert [n["name"] for n in near] == ["g4-edited", "g7-again"], near
    for n in near:
        assert n == json.loads("\n".join(cli_lines("neardups", n["name"], "--json")))
    assert near[0]["near_duplicates"][0]["name"] == "g4" and near[0]["near_duplicates"][0]["resemblance"] >= 0.7
    csv_rows = cli_lines("export", "--format", "csv")
    assert csv_rows[0].split(",") == list(summaries[0].keys())
    assert len(summaries) == len(csv_rows) - 1 == 32
    # Issue 79, item 1: documents are named by the input's ids (`id` was textorigin's
    # number, and a join on it matched the wrong rows); the number is `seq`.
    assert summaries[-1]["id"] == "g7-again" and summaries[-1]["seq"] == 32
    assert summaries[-1]["exact_duplicate_of"] == "g7"
    assert table.num_rows == 32 and table.column_names == list(summaries[0].keys())
    import pyarrow

    assert table.schema.field("seq").type == pyarrow.int64()
    for column in ("id", "dominant_origin", "near_duplicate_of", "exact_duplicate_of"):
        assert table.schema.field(column).type == pyarrow.string(), table.schema
        assert table.column(column).to_pylist() == [s[column] for s in summaries]
    assert table.column("near_duplicate_of").null_count > 0


def test_numeric_input_ids_are_integer_columns(tmp_path):
    """Issue 53 and 79: ids that were integers stay nullable int64 columns (not floats
    with NaN), and they are the input's ids, not textorigin's numbers."""
    import pyarrow

    docs = [dict(d, id=1000 + i) for i, d in enumerate(generated(12))]
    docs.append(dict(docs[3], id=5))
    with textorigin.Collection(tmp_path / "n", table_size="4MiB") as c:
        c.ingest(docs)
        table = c.to_arrow()
    for column in ("id", "dominant_origin", "near_duplicate_of", "exact_duplicate_of"):
        assert table.schema.field(column).type == pyarrow.int64(), table.schema
    assert table.column("id").to_pylist() == [d["id"] for d in docs]
    assert table.column("exact_duplicate_of").to_pylist()[-1] == 1003
    assert table.column("near_duplicate_of").null_count > 0


def test_an_iterable_that_raises_says_how_many_documents_were_stored(tmp_path):
    """Issue 53: a generator raising at row 4,000 left 1,984 documents stored, the rest
    of its last batch dropped, and the exception said nothing of it. Every row before
    the error is stored, the exception's note says how many, and a re-run goes on."""
    docs = generated(300)

    def rows(until):
        for i in range(until):
            yield {"id": f"r{i}", "text": docs[i % 300]["text"] + f" row {i}"}
        raise ValueError("the source failed")

    with textorigin.Collection(tmp_path / "d", table_size="4MiB", near_duplicates=False, quotations=False) as c:
        with pytest.raises(ValueError, match="the source failed") as e:
            c.ingest(rows(700), results="id")
        note = " ".join(getattr(e.value, "__notes__", []))
        assert "the 700 document(s) taken before this error were ingested (700 stored, 0 failed)" in note, note
        assert c.stats()["documents"] == 700
        again = c.ingest(itertools.islice(rows(800), 800), results="id")
        assert [r["id"] for r in again[:700]] == list(range(1, 701)), "stored before: skipped, their ids given"
        assert c.stats()["documents"] == 800


def test_files_of_every_format_are_ingested_as_the_command_line_does(tmp_path):
    """Issue 54: a WARC a crawler wrote and a Parquet dataset, through Python."""
    fixtures = ROOT / "tests" / "fixtures"
    with textorigin.Collection(tmp_path / "data", table_size="4MiB") as c:
        r = c.ingest_files([fixtures / "warc" / "pydocs-small.warc.gz", fixtures / "parquet" / "pydocs.parquet"])
        assert (r["stored"], r["failed"]) == (3 + 41, 0), r
        page = c.show("127.0.0.1:8766/library/queue.html")
        assert page["url"] == "http://127.0.0.1:8766/library/queue.html"
        assert c.show("1000")["url"] == "https://docs.python.org/3.11/library/2to3.html"
        again = c.ingest_files([fixtures / "warc" / "pydocs-small.warc.gz"])
        assert (again["stored"], again["stored_before"]) == (0, 3), again
        # Zstandard pages (polars' default) are read too.
        zstd = c.ingest_files([fixtures / "parquet" / "pydocs-zstd.parquet"])
        assert zstd["failed"] == 0 and zstd["stored"] + zstd["stored_before"] > 0, zstd


def test_a_served_directory_is_read_beside_the_daemon(tmp_path):
    """Issue 55: a data directory a daemon serves opens read-only (the writer's open
    says it is in use), and every read sees the documents stored up to the call."""
    data, spool = tmp_path / "d", tmp_path / "d" / "spool"
    for sub in ("tmp", "new"):
        (spool / sub).mkdir(parents=True)
    daemon = subprocess.Popen([cli(), "serve", "--data", str(data), "--table-size", "4MiB"], stderr=subprocess.DEVNULL)
    docs = generated(12)

    def drop(i):
        tmp = spool / "tmp" / f"doc{i}.txt"
        tmp.write_text(docs[i]["text"])
        tmp.rename(spool / "new" / f"doc{i}.txt")

    def stored(c, name):
        try:
            return c.show(name)
        except textorigin.Error:
            return None

    def wait(c, name):
        until = time.time() + 60
        while (v := stored(c, name)) is None:
            assert time.time() < until, f"{name} was not stored by the daemon"
            time.sleep(0.05)
        return v

    def reader():
        until = time.time() + 60
        while True:
            try:
                return textorigin.Collection(data, read_only=True)
            except textorigin.Error:
                assert time.time() < until, "the daemon did not create its data directory"
                time.sleep(0.05)

    try:
        with reader() as c:
            with pytest.raises(textorigin.Error, match="in use"):
                textorigin.Collection(data)
            with pytest.raises(textorigin.Error, match="read-only"):
                c.ingest([{"text": "one two three four five six seven eight nine ten"}])
            for i in range(6):
                drop(i)
            wait(c, "doc5")
            assert [r["name"] for r in c.documents()] == [f"doc{i}" for i in range(6)]
            # Each document the daemon stores is seen by the next query, at once.
            for i in range(6, 12):
                drop(i)
                wait(c, f"doc{i}")
                q = c.query({"text": docs[i]["text"]})
                assert q["old_tokens"] == q["tokens"], (i, q["old_tokens"], q["tokens"])
                assert q["dominant_origin"]["name"] == f"doc{i}"
            assert c.stats()["documents"] == 12
            assert len(list(c.export())) == 12
    finally:
        daemon.terminate()
        daemon.wait(timeout=60)
    # The daemon's directory is whole after the read-only reader: it opens for writing.
    with textorigin.Collection(data) as c:
        assert len(list(c.documents())) == 12


def test_show_places_each_block_in_its_source_and_side_by_side_pairs_them(tmp_path):
    """Issue 55: a block's passage in its source (byte spans of the source's text), the
    similarity to each source, and the two texts side by side with the edits."""
    source = (
        "The old harbour bridge reopened to traffic on Monday morning after twenty-six months of repairs "
        "that cost the city almost twice the original estimate, and the engineers replaced all eleven cables."
    )
    copy = "A reader wrote in. " + source.replace("almost twice", "nearly twice") + " The end of it."
    with textorigin.Collection(tmp_path / "d", table_size="4MiB") as c:
        c.ingest([{"id": "src", "text": source}, {"id": "cpy", "text": copy}])
        v = c.show("cpy")
        block = v["copied_blocks"][0]
        span = block["source"]
        assert c.text("src")[span["start_byte"] : span["end_byte"]].startswith("The old harbour bridge")
        assert v["similarity"][0]["origin"]["name"] == "src" and 0 < v["similarity"][0]["percent"] < 100
        s = c.side_by_side("cpy")
        assert s["source"]["name"] == "src" and s["percent"] == v["similarity"][0]["percent"]
        (pair,) = s["pairs"]
        assert [s["text"][a:b] for a, b in pair["edits"]] == ["nearly"]
        assert [s["source_text"][a:b] for a, b in pair["source_edits"]] == ["almost"]
