#!/usr/bin/env python3
"""Near-duplicates side by side: textorigin (every feature on) against gaoya and
datasketch (near-duplicates only) on one JSONL corpus, in one run.

    pip install gaoya datasketch       # once (PyPI)
    python3 scripts/neardup-compare.py --textorigin BIN CORPUS.jsonl [--runs 3] \
        [--textorigin-args "--origins off --quotes off"]     # the near-duplicates job

Each tool sees the documents in file order and, for each, first asks for the earlier
documents like it, then adds it ("query then insert"): what a stream needs. gaoya:
MinHashStringIndex(hash_size=32, jaccard_threshold=0.8, num_bands=25, band_size=5,
analyzer="word", lowercase=True, ngram_range=(8, 8)); datasketch: MinHashLSH(threshold
0.8, num_perm 128) over the same word 8-shingles. textorigin: `ingest` into a fresh data
directory (table, origins, near-duplicates, quotations, the store), timed as a whole
process, its default near-duplicate verdicts read back with `export`.

The truth: every pair of documents whose sets of lower-cased word 8-shingles have
Jaccard >= 0.9 (exact, from an inverted index of the shingles). Printed per tool: MB/s
(text bytes / median seconds) and recall of those pairs.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile
import time
from collections import defaultdict

WORD = re.compile(r"\w+")


def shingles(text, k=8):
    words = WORD.findall(text.lower())
    if len(words) < k:
        return {" ".join(words)} if words else set()
    return {" ".join(words[i : i + k]) for i in range(len(words) - k + 1)}


def truth_pairs(sets, threshold):
    index = defaultdict(list)
    for i, s in enumerate(sets):
        for sh in s:
            index[sh].append(i)
    shared = defaultdict(int)
    for docs in index.values():
        if len(docs) > 2000:  # a boilerplate shingle: pairs come from the others too
            continue
        for a in range(len(docs)):
            for b in range(a + 1, len(docs)):
                shared[(docs[a], docs[b])] += 1
    out = set()
    for (a, b), n in shared.items():
        if n / (len(sets[a]) + len(sets[b]) - n) >= threshold:
            out.add((a, b))
    return out


def recall(found, truth):
    return len(found & truth) / len(truth) if truth else 1.0


def run_gaoya(texts):
    from gaoya.minhash import MinHashStringIndex

    index = MinHashStringIndex(
        hash_size=32, jaccard_threshold=0.8, num_bands=25, band_size=5, analyzer="word", lowercase=True, ngram_range=(8, 8)
    )
    found = set()
    for i, t in enumerate(texts):
        for j in index.query(t):
            found.add((min(i, j), max(i, j)))
        index.insert_document(i, t)
    return found


def run_datasketch(texts):
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=0.8, num_perm=128)
    found = set()
    for i, t in enumerate(texts):
        m = MinHash(num_perm=128)
        for sh in shingles(t):
            m.update(sh.encode())
        for j in lsh.query(m):
            found.add((min(i, int(j)), max(i, int(j))))
        lsh.insert(str(i), m)
    return found


def run_textorigin(binary, corpus, ids, extra):
    with tempfile.TemporaryDirectory() as d:
        data = os.path.join(d, "data")
        t0 = time.perf_counter()
        # Exit status 3: some documents failed (an empty one), the others stored.
        done = subprocess.run([binary, "ingest", "--data", data, *extra, corpus], stderr=subprocess.DEVNULL)
        if done.returncode not in (0, 3):
            raise SystemExit(f"textorigin ingest failed with status {done.returncode}")
        seconds = time.perf_counter() - t0
        out = subprocess.run([binary, "export", "--data", data], check=True, capture_output=True, text=True).stdout
    # textorigin numbers the stored documents 1, 2, ... in file order, skipping empty ones.
    found = set()
    for line in out.splitlines():
        doc = json.loads(line)
        me = ids[doc["id"] - 1]
        for nd in doc.get("near_duplicates") or []:
            if "default" in nd.get("verdicts", []):
                other = ids[nd["id"] - 1]
                found.add((min(me, other), max(me, other)))
    return found, seconds


def timed(f, runs):
    times, result = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = f()
        times.append(time.perf_counter() - t0)
    return result, statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus")
    ap.add_argument("--textorigin", required=True, help="the textorigin binary")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threshold", type=float, default=0.9)
    ap.add_argument("--textorigin-args", default="", help='added to ingest, e.g. "--quotes off"')
    a = ap.parse_args()
    docs = [json.loads(l) for l in open(a.corpus, encoding="utf-8") if l.strip()]
    texts = [d.get("text", "") for d in docs]
    # The documents textorigin stores (it skips those without a word).
    ids = [i for i, t in enumerate(texts) if WORD.search(t)]
    mb = sum(len(t.encode()) for t in texts) / 1e6
    sets = [shingles(t) for t in texts]
    truth = truth_pairs(sets, a.threshold)
    print(f"{len(texts)} documents, {mb:.1f} MB, {len(truth)} pairs with Jaccard >= {a.threshold} (word 8-shingles)")
    print("| tool | what it does | median s | MB/s | recall at J >= %.1f | pairs reported |" % a.threshold)
    print("| --- | --- | --- | --- | --- | --- |")
    times = []
    found = None
    for _ in range(a.runs):
        found, s = run_textorigin(a.textorigin, a.corpus, ids, a.textorigin_args.split())
        times.append(s)
    s = statistics.median(times)
    parts = ["origins"] if "--origins off" not in a.textorigin_args else []
    parts += ["near-duplicates"] + ([] if "--quotes off" in a.textorigin_args else ["quotations"]) + ["store"]
    what = ", ".join(parts)
    print(f"| textorigin {a.textorigin_args} | {what} | {s:.2f} | {mb / s:.2f} | {recall(found, truth):.3f} | {len(found)} |")
    for name, f in [("gaoya", run_gaoya), ("datasketch", run_datasketch)]:
        try:
            found, s = timed(lambda: f(texts), a.runs)
        except ImportError as e:
            print(f"| {name} | not installed ({e}) | | | | |")
            continue
        print(f"| {name} | near-duplicates only | {s:.2f} | {mb / s:.2f} | {recall(found, truth):.3f} | {len(found)} |")


if __name__ == "__main__":
    main()
