#!/usr/bin/env python3
"""Annotates a dataset's rows with where their text came from (issue 24).

Each row gets `old_fraction` (the share of its tokens found in earlier rows),
`dominant_origin` and `near_duplicate_of` (ids of earlier rows, or None) and
`textorigin_id` (its own id). With Hugging Face `datasets` installed, a dataset is
annotated with `Dataset.map`-style columns; without it, rows are streamed from a JSONL
file as dicts and written out as JSONL.

    pip install ./crates/python              # from the checkout
    python3 examples/python/annotate_dataset.py corpus.jsonl annotated.jsonl [--data DIR]
"""

import argparse
import json
import sys
import tempfile

import textorigin


def rows_from_jsonl(path):
    with open(path) as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", help="JSONL with a text field per line")
    ap.add_argument("out", help="annotated JSONL")
    ap.add_argument("--data", help="data directory (default: a temporary one)")
    ap.add_argument("--text", default="text", help="the field that holds the text")
    a = ap.parse_args()
    data = a.data or tempfile.mkdtemp(prefix="textorigin-")
    try:
        import datasets  # optional: a Hugging Face dataset when installed
    except ImportError:
        datasets = None
    with textorigin.Collection(data) as c:
        if datasets is not None:
            ds = datasets.load_dataset("json", data_files=a.corpus, split="train")
            annotated = list(textorigin.annotate(c, iter(ds), text=a.text))
            ds = datasets.Dataset.from_list(annotated)
            ds.to_json(a.out)
            n = len(ds)
        else:
            n = 0
            with open(a.out, "w") as out:
                for row in textorigin.annotate(c, rows_from_jsonl(a.corpus), text=a.text):
                    out.write(json.dumps(row) + "\n")
                    n += 1
    print(f"annotated {n} rows into {a.out} (data directory {data})", file=sys.stderr)


if __name__ == "__main__":
    main()
