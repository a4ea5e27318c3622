#!/usr/bin/env python3
"""textorigin against allenai/bff (the Bloom-filter n-gram dedup of the Dolma pipeline)
on one JSONL corpus, both cores, whole processes, in one run (issue 23).

    bash ../shared/peers/build-bff.sh /tmp/bff       # once: builds bff outside the project
    python3 scripts/bff-compare.py --textorigin BIN --bff /tmp/bff/target/release/bff \\
        CORPUS.jsonl [--runs 3] [--textorigin-args "--neardup off --quotes off"]

bff reads gzipped JSONL: the corpus is split into two gzipped halves (its `-t 2` works
a file per thread) and run as its README says, with a 64 MiB filter:
`bff --bloom-filter-file F --bloom-filter-size 67108864 --expected-ngram-count
14000000 --output-directory OUT --annotate-attribute-only -t 2 half1.jsonl.gz
half2.jsonl.gz` (the count sets bff's number of hash functions: 14,000,000 gives 27
for 64 MiB, as in ../shared/peers/README.md; a count near a small corpus's words gives
hundreds, and bff is then tens of times slower). textorigin: `ingest` of the same corpus into a fresh data
directory, at its default sizes and at bff's memory (`--table-size 48MiB --index-size
16MiB`: 64 MiB of table and indexes), with `--textorigin-args` added to both (the
feature switches of a job, once they exist). Each command runs --runs times, in turn
(bff, textorigin default, textorigin 64 MiB, bff, ...); printed: the median wall
seconds, MB/s of the corpus's text and the ratio to bff (above 1: faster than bff).
Nothing is written outside a temporary directory.
"""

import argparse
import gzip
import json
import os
import shlex
import shutil
import statistics
import subprocess
import tempfile
import time


def timed(cmd):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - t0
    if r.returncode != 0 or "panicked" in r.stderr:
        raise SystemExit(f"{cmd[0]} failed:\n{r.stderr[-2000:]}")
    return seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("--textorigin", required=True, help="the textorigin binary")
    ap.add_argument("--bff", required=True, help="the bff binary (../shared/peers/build-bff.sh)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--expected-ngram-count", type=int, default=14_000_000, help="bff's, which sets its hash functions")
    ap.add_argument("--textorigin-args", default="", help="flags added to every textorigin ingest")
    a = ap.parse_args()

    work = tempfile.mkdtemp(prefix="bff-compare-")
    try:
        lines = [l for l in open(a.corpus, encoding="utf-8") if l.strip()]
        text_bytes = sum(len(json.loads(l).get("text", "").encode()) for l in lines)
        halves = []
        for i, part in enumerate([lines[: len(lines) // 2], lines[len(lines) // 2 :]]):
            p = os.path.join(work, f"half{i + 1}.jsonl.gz")
            with gzip.open(p, "wt", encoding="utf-8") as f:
                f.writelines(part)
            halves.append(p)
        extra = shlex.split(a.textorigin_args)

        def bff():
            out = os.path.join(work, "bff-out")
            shutil.rmtree(out, ignore_errors=True)
            os.makedirs(out)  # bff writes into it, and does not create it
            filt = os.path.join(work, "filter.bin")
            if os.path.exists(filt):
                os.remove(filt)
            return [a.bff, "--bloom-filter-file", filt, "--bloom-filter-size", str(64 << 20),
                    "--expected-ngram-count", str(a.expected_ngram_count), "--output-directory", out,
                    "--annotate-attribute-only", "-t", "2", *halves]

        def textorigin(sizes):
            data = os.path.join(work, "data")
            shutil.rmtree(data, ignore_errors=True)
            return [a.textorigin, "ingest", "--data", data, *sizes, *extra, a.corpus]

        commands = {
            "bff -t 2, 64 MiB filter": bff,
            "textorigin, default sizes": lambda: textorigin([]),
            "textorigin, 64 MiB (48 MiB table + 16 MiB indexes)": lambda: textorigin(["--table-size", "48MiB", "--index-size", "16MiB"]),
        }
        times = {name: [] for name in commands}
        for _ in range(a.runs):
            for name, make in commands.items():
                times[name].append(timed(make()))
        base = statistics.median(times["bff -t 2, 64 MiB filter"])
        print(f"corpus: {a.corpus}: {len(lines)} documents, {text_bytes / 1e6:.1f} MB of text; {a.runs} runs each")
        print("| command | wall seconds, median (min-max) | MB/s | speed against bff |")
        print("| --- | --- | --- | --- |")
        for name, ts in times.items():
            m = statistics.median(ts)
            print(f"| {name} | {m:.2f} ({min(ts):.2f}-{max(ts):.2f}) | {text_bytes / 1e6 / m:.1f} | {base / m:.2f}x |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
