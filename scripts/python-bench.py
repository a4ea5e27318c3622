#!/usr/bin/env python3
"""Python ingestion against `textorigin ingest` on the same corpus (issue 24): each a
whole process into a fresh data directory, in turn, median of --runs.

    bash scripts/python.sh                       # builds the wheel into a venv, once
    $CARGO_TARGET_DIR/python-venv/bin/python scripts/python-bench.py \\
        --textorigin $CARGO_TARGET_DIR/release/textorigin CORPUS.jsonl [--runs 3] [-- INGEST ARGS]

Python: a process that reads the JSONL (json.loads a line), gives the dicts to
`Collection.ingest` and takes every result dict (`--results view|summary|id`). The two
run in turn (a pair a run). Printed: seconds of each, MB/s of text, and Python's speed
as a share of the command line's: the median of the pairs' ratios (a pair's two runs
see the same machine, which drifts here by as much as the gap measured).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PY = """
import json, sys, textorigin
path, data, results = sys.argv[1], sys.argv[2], sys.argv[3]
settings = json.loads(sys.argv[4])
with open(path) as f, textorigin.Collection(data, **settings) as c:
    docs = (json.loads(line) for line in f if line.strip())
    n = sum(1 for _ in c.ingest_iter(docs, results=results))
print(n, file=sys.stderr)
"""


def timed(cmd):
    start = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--textorigin", required=True)
    ap.add_argument("corpus")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--table-size", default=None, help="e.g. 64MiB (both tools)")
    ap.add_argument("--results", default="view", choices=["view", "summary", "id"], help="what Python's ingest yields")
    a = ap.parse_args()
    text_bytes = 0
    with open(a.corpus) as f:
        for line in f:
            if line.strip():
                text_bytes += len(json.loads(line).get("text", "").encode())
    settings = {"table_size": a.table_size} if a.table_size else {}
    flags = ["--table-size", a.table_size] if a.table_size else []
    cli, py = [], []
    for _ in range(a.runs):
        for which in ("cli", "py"):
            d = tempfile.mkdtemp()
            data = os.path.join(d, "data")
            if which == "cli":
                cli.append(timed([a.textorigin, "ingest", "--data", data, *flags, a.corpus]))
            else:
                py.append(timed([sys.executable, "-c", PY, a.corpus, data, a.results, json.dumps(settings)]))
            shutil.rmtree(d)
    c, p = statistics.median(cli), statistics.median(py)
    mb = text_bytes / 1e6
    print(f"{a.corpus}: {mb:.1f} MB of text, median of {a.runs}")
    print("| tool | min s | median s | max s | MB/s |")
    print("| --- | --- | --- | --- | --- |")
    print(f"| textorigin ingest | {min(cli):.2f} | {c:.2f} | {max(cli):.2f} | {mb / c:.2f} |")
    print(f"| Python Collection.ingest(results={a.results!r}) | {min(py):.2f} | {p:.2f} | {max(py):.2f} | {mb / p:.2f} |")
    share = statistics.median(c_ / p_ for c_, p_ in zip(cli, py))
    print(f"Python at {100 * share:.0f}% of the command line's speed, median of the pairs (target: at least 90%)")


if __name__ == "__main__":
    main()
