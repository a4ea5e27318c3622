#!/usr/bin/env python3
"""Heavy repeats (issues 56 and 82): a corpus ingested once, then again and again under
new names, each pass a separate `ingest` process into the same fresh data directory, as
a feed that re-publishes its documents would arrive. Each later pass is a near copy: a
different --edit share of each document's words (1% unless told) replaced by words of
its own; `--edit 0` sends exact copies. Prints each pass's wall seconds (the median of
--runs) and the cost of passes 2 to --copies a copy against the first (issue 82's
targets: at most 1.5x for near copies, 0.2x for exact ones), and of passes 4 on (issue
56's figure).

    python3 scripts/repeats.py --textorigin BIN CORPUS.jsonl [--copies 6] [--runs 3] \\
        [--edit 0.01] [--textorigin-args "--table-size 64MiB"]

CORPUS.jsonl: one JSON object a line with a `text` (the rest is dropped; each pass
names the documents `pN-LINE`). Nothing is written outside a temporary directory.
"""

import argparse
import json
import os
import random
import shlex
import statistics
import subprocess
import tempfile
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--textorigin", required=True, help="the textorigin binary")
    ap.add_argument("corpus", help="a JSON lines corpus with a `text` field")
    ap.add_argument("--copies", type=int, default=6, help="passes in all (the first included)")
    ap.add_argument("--runs", type=int, default=3, help="runs of all passes, each into a fresh directory")
    ap.add_argument("--textorigin-args", default="--table-size 64MiB", help="added to every ingest")
    ap.add_argument("--edit", type=float, default=0.01, help="share of each document's words a later pass replaces")
    a = ap.parse_args()
    if not 0 <= a.edit < 1:
        ap.error("--edit must be at least 0 and below 1")
    if a.copies < 4:
        ap.error("--copies must be at least 4 (the figure is of passes 4 and after)")
    texts = []
    with open(a.corpus, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                texts.append(json.loads(line)["text"])
    seconds = [[] for _ in range(a.copies)]
    with tempfile.TemporaryDirectory() as tmp:
        passes = []
        for p in range(a.copies):
            path = os.path.join(tmp, f"pass{p + 1}.jsonl")
            with open(path, "w", encoding="utf-8") as f:
                for n, t in enumerate(texts):
                    f.write(json.dumps({"id": f"p{p + 1}-{n}", "text": edited(t, a.edit if p else 0, f"{p}-{n}")}) + "\n")
            passes.append(path)
        for run in range(a.runs):
            data = os.path.join(tmp, f"data{run}")
            for p, path in enumerate(passes):
                cmd = [a.textorigin, "ingest", "--data", data, *shlex.split(a.textorigin_args), path]
                t0 = time.perf_counter()
                r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                took = time.perf_counter() - t0
                if r.returncode != 0:
                    raise SystemExit(f"{shlex.join(cmd)} failed:\n{r.stderr}")
                seconds[p].append(took)
            subprocess.run(["rm", "-rf", data], check=True)
    mb = sum(len(t.encode()) for t in texts) / 1e6
    print(f"{len(texts)} documents, {mb:.1f} MB a pass; median of {a.runs} run(s), each pass a process")
    print("| pass | seconds | against the first |")
    print("| --- | --- | --- |")
    medians = [statistics.median(s) for s in seconds]
    for p, m in enumerate(medians):
        print(f"| {p + 1} | {m:.2f} | {m / medians[0]:.2f}x |")
    copies = statistics.mean(medians[1:])
    kind, target = ("exact", 0.2) if a.edit == 0 else (f"near ({a.edit:.0%} of words replaced)", 1.5)
    print(f"passes 2-{a.copies}, {kind} copies: {copies:.2f} s a copy, {copies / medians[0]:.2f}x the first "
          f"(target: at most {target}x)")
    later = statistics.mean(medians[3:])
    print(f"passes 4-{a.copies}: {later:.2f} s a copy, {later / medians[0]:.2f}x the first")


def edited(text, share, seed):
    """`text` with `share` of its words (at least one where share > 0) replaced, at places
    a generator seeded with `seed` picks: each copy of a document a different edit."""
    words = text.split(" ")
    if share == 0 or not words:
        return text
    rng = random.Random(seed)
    for i in rng.sample(range(len(words)), max(1, round(share * len(words)))):
        words[i] = f"edit{rng.randrange(10**9)}"
    return " ".join(words)


if __name__ == "__main__":
    main()
