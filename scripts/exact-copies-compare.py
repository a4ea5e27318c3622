#!/usr/bin/env python3
"""What answering exact copies from their earlier documents changes (issue 82, answer
3): each corpus ingested twice into fresh data directories, with exact copies on (the
default) and `--exact-copies off`, and the two exports compared document by document.
Prints, a corpus a line: the exact copies, the documents whose export differs (the
field `exact_copy_of` aside) and in which fields, the old tokens, and the quotations of
the documents that are not copies: quoting sentences lost and gained, sources lost
that were copies, other sources lost, sources gained.

    python3 scripts/exact-copies-compare.py BIN [CORPUS[,CORPUS...]:TABLE ...]

Without corpora, the golden cases' (tests/cli/golden.rs): mail at 24KiB, GCC at
12KiB, the examples and licences at 48KiB, run from the repository's root.
"""

import collections
import json
import os
import subprocess
import sys
import tempfile

GOLDEN = [
    "tests/fixtures/mail-sample.jsonl:24KiB",
    "tests/fixtures/gcc-sample.jsonl:12KiB",
    "examples/docs,tests/fixtures/spdx-sample.jsonl:48KiB",
]


def export(binary, inputs, table, extra):
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "data")
        subprocess.run([binary, "ingest", "--data", data, "--table-size", table, *extra, *inputs],
                       check=True, capture_output=True)
        out = subprocess.run([binary, "export", "--data", data], check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def quoted(doc):
    """(quoting sentences by start byte, (start byte, source id) pairs) of a document."""
    quotes = doc["quotations"] or []
    return {q["start_byte"] for q in quotes}, {(q["start_byte"], s["id"]) for q in quotes for s in q["sources"]}


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    binary = sys.argv[1]
    for case in sys.argv[2:] or GOLDEN:
        corpora, table = case.rsplit(":", 1)
        inputs = corpora.split(",")
        on, off = export(binary, inputs, table, []), export(binary, inputs, table, ["--exact-copies", "off"])
        copies = {d["id"] for d in on if "exact_copy_of" in d}
        fields, differ, q = collections.Counter(), 0, collections.Counter()
        for a, b in zip(on, off):
            a = {k: v for k, v in a.items() if k != "exact_copy_of"}
            diff = [k for k in a if a[k] != b.get(k)]
            differ += bool(diff)
            fields.update(diff)
            if a["id"] in copies:
                continue
            (sa, pa), (sb, pb) = quoted(a), quoted(b)
            lost = pb - pa
            q["sentences lost"] += len(sb - sa)
            q["sentences gained"] += len(sa - sb)
            q["sources lost, copies"] += sum(1 for _, s in lost if s in copies)
            q["sources lost, others"] += sum(1 for _, s in lost if s not in copies)
            q["sources gained"] += len(pa - pb)
        old = (sum(d["old_tokens"] for d in off), sum(d["old_tokens"] for d in on))
        print(f"{corpora} ({table}): {len(on)} documents, {len(copies)} exact copies; {differ} differ "
              f"({dict(fields)}); old tokens {old[0]} -> {old[1]}; quotations: {dict(q)}")


if __name__ == "__main__":
    main()
