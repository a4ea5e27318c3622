#!/usr/bin/env python3
"""Every speed target of issue 82 in one run, each beside its peer, with met or not.

    bash ../shared/peers/build-bff.sh /tmp/bff          # once: bff, outside the project
    pip install gaoya datasketch                        # once: the near-duplicate peers
    bash scripts/fetch-corpora.sh /tmp/corpora          # once: the corpora below
    python3 scripts/targets.py --textorigin BIN --bff /tmp/bff/target/release/bff \\
        --corpora /tmp/corpora [--runs 3] [--skip-gcc]

Whole processes on this machine, fresh data directories, default sizes, medians of
--runs, the peer timed in the same call. The measurements are the repository's own
scripts and commands, each printed before it runs, so any figure can be rerun alone:
- the origins job (`--neardup off --quotes off`) against bff, >= 2x, and everything on
  against bff, >= 1x, on the versions, SPDX, news and SOTU corpora
  (`scripts/bff-compare.py`);
- the near-duplicates job (`--origins off --quotes off`) against gaoya, >= 1x, on news
  and SPDX (`scripts/neardup-compare.py`);
- all of GCC's change-log entries everything on (`textorigin bench --end-to-end`): the
  first 20,000 at >= 10,000 documents/s, the last full window of 10,000 >= 0.8x
  documents 50,001-60,000 (flat), and the cores busy;
- the 2nd-6th copies of the first 1,000 news articles against the first pass
  (`scripts/repeats.py`): exact copies <= 0.2x, near copies (1% of words replaced)
  <= 1.5x;
- the adaptive density against `--density paper` on each job (news articles): <= 1.1x.
"""

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
JOBS = {
    "origins": "--neardup off --quotes off",
    "near-duplicates": "--origins off --quotes off",
    "everything": "",
}
results = []


def run(cmd):
    """Runs `cmd` (printed first), returning its standard output; fails loudly."""
    print("$ " + shlex.join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}):\n{r.stderr[-3000:]}")
    print(r.stdout, end="", flush=True)
    return r.stdout


def target(name, value, goal, higher_is_better=True, unit="x"):
    met = value >= goal if higher_is_better else value <= goal
    sign = ">=" if higher_is_better else "<="
    results.append(f"| {name} | {value:.2f}{unit} | {sign} {goal}{unit} | {'met' if met else 'NOT met'} |")


def bff_ratio(out):
    m = re.search(r"^\| textorigin, default sizes \|.*\| ([0-9.]+)x \|$", out, re.M)
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--textorigin", required=True)
    ap.add_argument("--bff", required=True)
    ap.add_argument("--corpora", required=True, help="the folder scripts/fetch-corpora.sh fills")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip-gcc", action="store_true", help="leave out the run over all GCC entries (minutes)")
    a = ap.parse_args()
    c = lambda *p: os.path.join(a.corpora, *p)
    corpora = {
        "versions": c("versions", "versions.jsonl"),
        "SPDX": c("spdx", "spdx.jsonl"),
        "news": c("news", "newsarticles.jsonl"),
        "SOTU": c("sotu", "sotu.jsonl"),
    }
    py = sys.executable
    runs = str(a.runs)
    # Documents with no text are refused by `ingest` (a failed document fails the run),
    # and bff passes them: both are given the corpora without them.
    cleaned = tempfile.TemporaryDirectory()
    for name, path in corpora.items():
        corpora[name] = os.path.join(cleaned.name, os.path.basename(path))
        with open(path, encoding="utf-8") as f, open(corpora[name], "w", encoding="utf-8") as out:
            out.writelines(line for line in f if line.strip() and json.loads(line).get("text", "").strip())

    for name, path in corpora.items():
        for job, goal in (("origins", 2.0), ("everything", 1.0)):
            out = run([py, os.path.join(HERE, "bff-compare.py"), "--textorigin", a.textorigin, "--bff", a.bff,
                       "--runs", runs, "--textorigin-args", JOBS[job], path])
            target(f"{job} job against bff, {name}", bff_ratio(out), goal)

    for name in ("news", "SPDX"):
        out = run([py, os.path.join(HERE, "neardup-compare.py"), "--textorigin", a.textorigin, "--runs", runs,
                   "--textorigin-args", JOBS["near-duplicates"], corpora[name]])
        ours = float(re.search(r"^\| textorigin [^|]*\|[^|]*\| ([0-9.]+) \|", out, re.M).group(1))
        gaoya = re.search(r"^\| gaoya[^|]*\|[^|]*\| ([0-9.]+) \|", out, re.M)
        if gaoya is None:
            sys.exit("gaoya is not installed in this Python: pip install gaoya datasketch")
        target(f"near-duplicates job against gaoya, {name}", float(gaoya.group(1)) / ours, 1.0)

    if not a.skip_gcc:
        out = run([a.textorigin, "bench", "--end-to-end", c("gcc", "gcc_changelog.jsonl")])
        windows = [float(w) for w in re.findall(r"^documents \d+-\d+: ([0-9.]+) documents/s$", out, re.M)]
        first = 20_000 / (10_000 / windows[0] + 10_000 / windows[1])
        target("first 20,000 GCC entries, everything on", first, 10_000, unit=" documents/s")
        flat = float(re.search(r"^flat: .*: ([0-9.]+)x$", out, re.M).group(1))
        target("flat: the last full window against documents 50,001-60,000", flat, 0.8)
        busy = re.search(r"^cpu: .*: ([0-9.]+) of (\d+) cores busy$", out, re.M)
        results.append(f"| cores busy, all GCC entries everything on | {busy.group(1)} of {busy.group(2)} | both | - |")

    with tempfile.TemporaryDirectory() as tmp:
        news1000 = os.path.join(tmp, "news1000.jsonl")
        with open(corpora["news"], encoding="utf-8") as f, open(news1000, "w", encoding="utf-8") as out:
            out.writelines(line for _, line in zip(range(1000), f))
        for edit, goal, kind in (("0", 0.2, "exact"), ("0.01", 1.5, "near")):
            out = run([py, os.path.join(HERE, "repeats.py"), "--textorigin", a.textorigin, "--runs", runs,
                       "--edit", edit, news1000])
            copy = float(re.search(r"^passes 2-\d+, .*: [0-9.]+ s a copy, ([0-9.]+)x the first", out, re.M).group(1))
            target(f"{kind} copies, 2nd-6th a copy against the first", copy, goal, higher_is_better=False)

        for job, flags in JOBS.items():
            times = {"adaptive": [], "paper": []}
            for _ in range(a.runs):
                for density in times:
                    data = os.path.join(tmp, "density")
                    subprocess.run(["rm", "-rf", data], check=True)
                    cmd = [a.textorigin, "ingest", "--data", data, "--density", density, *shlex.split(flags),
                           corpora["news"]]
                    t0 = time.perf_counter()
                    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    times[density].append(time.perf_counter() - t0)
            print(f"$ {shlex.join(cmd[:-1] + ['NEWS'])} against --density paper: {times}")
            ratio = statistics.median(times["adaptive"]) / statistics.median(times["paper"])
            target(f"adaptive density against paper, {job} job, news", ratio, 1.1, higher_is_better=False)

    print()
    print("| target | measured | goal | |")
    print("| --- | --- | --- | --- |")
    print("\n".join(results))


if __name__ == "__main__":
    main()
