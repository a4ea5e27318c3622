#!/usr/bin/env python3
"""A document's path through the code, measured: which source files of the project
the run of one command enters, and how often the flow goes back to a file it left.

Runs the real binary under valgrind's callgrind (which records every call with the
file of its caller and of its callee, from the debug information) on two documents,
the second a copy of the first with a sentence added, so that the run takes every
stage: preparation, the table, alignment, near-duplicates, quotations, the store.
Then it reads the call graph between the project's files (`crates/*/src`, `src`), and
between their folders (a module by concern: `storage/store`, `intake`, `engine`):

- entered: the files (folders) with at least one function run;
- calls between: distinct (caller, callee) pairs of different files (folders);
- back and forth: pairs that call each other (A calls into B and B calls into A), the
  flows that return to a module they left. A trait method or a closure defined in A
  and called from B's generic code counts as B calling A (postcard's encoder calling
  a type's derived `Serialize`): such pairs are listed by name to be read.

`ingest` is measured as one process over a fresh data directory; `serve` as the
daemon on a fresh data directory, the documents dropped into its spool, stopped by
SIGTERM once they are stored. Usage:

    scripts/document-path.py BIN [BIN ...]        # one column per binary
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

FIRST = (
    "The committee met on Tuesday to weigh the plan for the river crossing. "
    "It is too early to tell, the chair said, whether the plan will pass. "
    "Residents who spoke at the hearing asked for a second study of the traffic "
    "on the old bridge, and the engineers said the study would take a year."
)
SECOND = FIRST + " A vote is expected in the spring, after the study is read."


def documents(folder: Path) -> Path:
    path = folder / "docs.jsonl"
    with path.open("w") as f:
        for i, text in enumerate([FIRST, SECOND]):
            f.write(json.dumps({"id": f"doc{i + 1}", "text": text}) + "\n")
    return path


def project_file(name: str) -> str | None:
    """The project's source file a callgrind file name is, or None."""
    m = re.search(r"((?:crates/[^/]+/)?src/.+\.rs)$", name)
    if not m or "/.cargo/" in name or "/rustc/" in name:
        return None
    return m.group(1)


def folder(f: str) -> str:
    """A file's module by concern: the folder it is in."""
    return f.rsplit("/", 1)[0]


def read_graph(out: Path):
    """(files with functions run, {(caller file, callee file): calls})."""
    names: dict[str, str] = {}
    entered: set[str] = set()
    edges: dict[tuple[str, str], int] = defaultdict(int)
    fl = fn_file = cfi = None
    pending = None

    def file_of(kind_value: str) -> str:
        m = re.match(r"\((\d+)\)(?: (.*))?", kind_value)
        if not m:
            return kind_value
        if m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), "")

    for line in out.read_text(errors="replace").splitlines():
        if line.startswith("fl="):
            fl = file_of(line[3:])
        elif line.startswith(("fi=", "fe=")):
            fl = file_of(line[3:])
        elif line.startswith("fn="):
            fn_file = fl
            f = project_file(fn_file or "")
            if f:
                entered.add(f)
        elif line.startswith(("cfi=", "cfl=")):
            cfi = file_of(line[4:])
        elif line.startswith("cfn="):
            pending = (project_file(fn_file or ""), project_file(cfi or fn_file or ""))
            cfi = None
        elif line.startswith("calls=") and pending:
            a, b = pending
            if a and b and a != b:
                edges[(a, b)] += int(line.split("=")[1].split()[0])
            pending = None
    return entered, edges


def callgrind(cmd: list[str], out: Path, env=None, wait=None) -> None:
    full = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--trace-children=no"] + cmd
    if wait is None:
        subprocess.run(full, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        return
    p = subprocess.Popen(full, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        wait()
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=600)


def measure(binary: str, mode: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        docs = documents(tmp)
        data = tmp / "data"
        out = tmp / "callgrind.out"
        if mode == "ingest":
            callgrind([binary, "ingest", "--data", str(data), str(docs)], out)
        else:
            spool = tmp / "spool"
            spool.mkdir()

            def wait():
                # The daemon under valgrind is slow to start: the spool file goes in
                # once its status file is written, and the run ends once both
                # are applied (the status file counts them).
                deadline = time.time() + 900
                status = data / "daemon.json"
                while not status.exists() and time.time() < deadline:
                    time.sleep(1)
                # The spool contract: written into tmp/, renamed into new/.
                for d in ("tmp", "new"):
                    (spool / d).mkdir(exist_ok=True)
                (spool / "tmp" / "docs.jsonl").write_text(docs.read_text())
                (spool / "tmp" / "docs.jsonl").rename(spool / "new" / "docs.jsonl")
                while time.time() < deadline:
                    try:
                        if json.loads(status.read_text()).get("documents_applied_this_run", 0) >= 2:
                            break
                    except (OSError, ValueError):
                        pass
                    time.sleep(1)
                time.sleep(2)

            callgrind([binary, "serve", "--data", str(data), "--spool", str(spool)], out, wait=wait)
        entered, edges = read_graph(out)
    result = {}
    for level, unit in (("files", lambda f: f), ("folders", folder)):
        units = {unit(f) for f in entered}
        between = {(unit(a), unit(b)) for a, b in edges if unit(a) != unit(b)}
        both = sorted({tuple(sorted(e)) for e in between if (e[1], e[0]) in between})
        result[level] = {"entered": sorted(units), "calls between": len(between), "back and forth": both}
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binaries", nargs="+")
    ap.add_argument("--mode", choices=["ingest", "serve", "both"], default="both")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    a = ap.parse_args()
    modes = ["ingest", "serve"] if a.mode == "both" else [a.mode]
    results = {b: {m: measure(b, m) for m in modes} for b in a.binaries}
    if a.json:
        print(json.dumps(results, indent=2))
        return 0
    for m in modes:
        for level in ("files", "folders"):
            print(f"## {m}, by {level}")
            print(f"| binary | {level} entered | calls between them (pairs) | pairs calling each other |")
            print("| --- | --- | --- | --- |")
            for b in a.binaries:
                r = results[b][m][level]
                print(f"| {b} | {len(r['entered'])} | {r['calls between']} | {len(r['back and forth'])} |")
            for b in a.binaries:
                print(f"\n{b}, {m}: {level} calling each other")
                for x, y in results[b][m][level]["back and forth"]:
                    print(f"  {x} <-> {y}")
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
