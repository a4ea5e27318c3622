#!/usr/bin/env python3
"""Near-duplicates of lightly edited copies (issue 35): textorigin's defaults against
the defaults of the dedup tools our users know, on one corpus with planted copies.

    pip install datasketch gaoya       # once (PyPI), outside the project
    python3 scripts/neardup-planted.py --textorigin BIN CORPUS.jsonl [--planted 200] \
        [--textorigin-args "--near-k 5 --near-threshold 0.7"]

N documents of at least 100 words are chosen (seed 35) and copied once per rate (1%,
2.5%, 5%, 10% of their words replaced, at random positions, by words seen nowhere
else); the copies follow the corpus in a random order. Each tool sees the documents in
order and, for each, asks for the earlier documents like it, then adds it. The settings
(each tool's documented defaults; text-dedup's and datatrove's run through datasketch's
MinHash with their shingles, permutations and bands, which is what they compute):
- textorigin: `ingest` into a fresh data directory with every feature on (shingles of
  3 terms, threshold 0.7, pairs near it decided exactly), its default verdicts read
  back with `export`;
- text-dedup (`text_dedup.minhash`): lower-cased words split at non-alphanumerics,
  5-grams, 250 permutations, threshold 0.7 (bands by datasketch's optimal parameters);
- datatrove (`MinhashDedupSignature`): 5-grams, 14 buckets of 8 hashes (LSH threshold
  (1/14)^(1/8) = 0.72);
- datasketch (`MinHashLSH()`): threshold 0.9, 128 permutations, over the same 5-grams;
- gaoya (`MinHashStringIndex`): word 8-grams, 25 bands of 5, threshold 0.8.

Printed per tool: the share of copies of each rate reported as near-duplicates of
their original, the precision (reported pairs whose exact Jaccard of the tool's own
shingles is at least its threshold; textorigin's shingles are approximated by
lower-cased words), and the seconds of the run. Not run by CI.
"""

import argparse
import importlib.util
import json
import os
import random
import re
import subprocess
import tempfile
import time

# gaoya's run (its stream of queries then inserts) is neardup-compare.py's.
_spec = importlib.util.spec_from_file_location("neardup_compare", os.path.join(os.path.dirname(__file__), "neardup-compare.py"))
neardup_compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(neardup_compare)

WORD = re.compile(r"\w+")
NON_ALNUM = re.compile(r"[^A-Za-z_0-9]")
RATES = [0.01, 0.025, 0.05, 0.10]


def plant(texts, n, seed=35):
    rng = random.Random(seed)
    eligible = [i for i, t in enumerate(texts) if len(WORD.findall(t)) >= 100]
    originals = rng.sample(eligible, n)
    copies = []
    for o in originals:
        spans = [m.span() for m in WORD.finditer(texts[o])]
        for r, rate in enumerate(RATES):
            at = sorted(rng.sample(range(len(spans)), max(1, round(len(spans) * rate))))
            out, last = [], 0
            for w, a in enumerate(at):
                s, e = spans[a]
                out += [texts[o][last:s], f"zqedit{len(copies)}x{w}"]
                last = e
            out.append(texts[o][last:])
            copies.append(("".join(out), o, r))
    rng.shuffle(copies)
    all_texts = list(texts)
    placed = []
    for text, o, r in copies:
        placed.append((len(all_texts), o, r))
        all_texts.append(text)
    return all_texts, placed


def grams(words, k):
    if len(words) < k:
        return {" ".join(words)} if words else set()
    return {" ".join(words[i : i + k]) for i in range(len(words) - k + 1)}


def words_textdedup(t):
    return [w for w in NON_ALNUM.split(t.lower()) if w]


def words_plain(t):
    return WORD.findall(t.lower())


def jaccard(a, b):
    u = len(a | b)
    return len(a & b) / u if u else 0.0


def run_minhash(texts, k, words, num_perm, threshold=None, params=None):
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=threshold or 0.9, num_perm=num_perm, params=params)
    found = set()
    for i, t in enumerate(texts):
        m = MinHash(num_perm=num_perm)
        m.update_batch([g.encode() for g in grams(words(t), k)])
        for j in lsh.query(m):
            found.add((int(j), i))
        lsh.insert(str(i), m)
    return found


def run_textorigin(binary, texts, extra):
    with tempfile.TemporaryDirectory() as d:
        corpus = os.path.join(d, "corpus.jsonl")
        with open(corpus, "w", encoding="utf-8") as f:
            for i, t in enumerate(texts):
                f.write(json.dumps({"id": f"d{i}", "text": t}) + "\n")
        data = os.path.join(d, "data")
        # Exit status 3: some documents failed (an empty one), the others stored.
        done = subprocess.run([binary, "ingest", "--data", data, *extra, corpus], stderr=subprocess.DEVNULL)
        if done.returncode not in (0, 3):
            raise SystemExit(f"textorigin ingest failed with status {done.returncode}")
        out = subprocess.run([binary, "export", "--data", data], check=True, capture_output=True, text=True).stdout
    found = set()
    for line in out.splitlines():
        doc = json.loads(line)
        me = int(doc["name"][1:])
        for nd in doc.get("near_duplicates") or []:
            if "default" in nd.get("verdicts", []):
                found.add((int(nd["name"][1:]), me))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus")
    ap.add_argument("--textorigin", required=True, help="the textorigin binary")
    ap.add_argument("--planted", type=int, default=200)
    ap.add_argument("--textorigin-args", default="", help="added to ingest")
    a = ap.parse_args()
    texts = [json.loads(l).get("text", "") for l in open(a.corpus, encoding="utf-8") if l.strip()]
    texts = [t for t in texts if WORD.search(t)]
    texts, placed = plant(texts, a.planted)
    extra = a.textorigin_args.split()
    tools = [
        ("textorigin " + (a.textorigin_args or "defaults"), lambda: run_textorigin(a.textorigin, texts, extra), 3, words_plain, 0.7),
        ("text-dedup (5-grams, 250 perms, 0.7)", lambda: run_minhash(texts, 5, words_textdedup, 250, 0.7), 5, words_textdedup, 0.7),
        ("datatrove (5-grams, 14x8)", lambda: run_minhash(texts, 5, words_plain, 112, params=(14, 8)), 5, words_plain, 0.72),
        ("datasketch (5-grams, 128 perms, 0.9)", lambda: run_minhash(texts, 5, words_plain, 128, 0.9), 5, words_plain, 0.9),
        ("gaoya (8-grams, 25x5, 0.8)", lambda: neardup_compare.run_gaoya(texts), 8, words_plain, 0.8),
    ]
    print(f"{len(texts)} documents ({len(placed)} planted copies of {a.planted} originals)")
    head = " | ".join(f"{100 * r:g}% found" for r in RATES)
    print(f"| tool | {head} | precision | pairs reported | seconds |")
    print("| --- |" + " --- |" * (len(RATES) + 3))
    for name, run, k, words, threshold in tools:
        t0 = time.perf_counter()
        try:
            found = run()
        except ImportError as e:
            print(f"| {name} | not installed: {e} |")
            continue
        seconds = time.perf_counter() - t0
        if name.startswith("textorigin"):
            k = next((int(x) for f, x in zip(extra, extra[1:]) if f == "--near-k"), k)
            threshold = next((float(x) for f, x in zip(extra, extra[1:]) if f == "--near-threshold"), threshold)
        sets = {}

        def shingles(i):
            if i not in sets:
                sets[i] = grams(words(texts[i]), k)
            return sets[i]

        right = sum(jaccard(shingles(x), shingles(y)) >= threshold for x, y in found)
        recall = []
        for r in range(len(RATES)):
            mine = [(o, at) for at, o, rate in placed if rate == r]
            recall.append(sum((o, at) in found for o, at in mine) / len(mine))
        cells = " | ".join(f"{x:.3f}" for x in recall)
        precision = right / len(found) if found else 1.0
        print(f"| {name} | {cells} | {precision:.3f} | {len(found)} | {seconds:.1f} |")


if __name__ == "__main__":
    main()
