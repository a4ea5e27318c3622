#!/usr/bin/env python3
"""Chinese and Japanese text from Debian packages into JSONL (issue 33).

    cjk_extract.py fortunes FILE OUT.jsonl    # fortunes-zh: one document an entry
    cjk_extract.py reference FILE.txt.gz OUT.jsonl   # debian-reference-ja: paragraphs
                                                     # grouped into documents of 300+ characters

No dates: the documents keep the order they have in the file.
"""

import gzip
import json
import re
import sys


def fortunes(path):
    raw = open(path, encoding="utf-8", errors="replace").read()
    raw = re.sub(r"\x1b\[[0-9;]*m", "", raw)  # the colour codes of the poem files
    return [d.strip() for d in raw.split("\n%\n") if len(d.strip()) >= 40]


def reference(path):
    raw = gzip.open(path, "rt", encoding="utf-8", errors="replace").read()
    docs, cur = [], []
    for para in re.split(r"\n\s*\n", raw):
        para = para.strip()
        if not para:
            continue
        cur.append(para)
        if sum(len(p) for p in cur) >= 300:
            docs.append("\n\n".join(cur))
            cur = []
    if cur:
        docs.append("\n\n".join(cur))
    return docs


def main():
    kind, src, out = sys.argv[1:4]
    docs = fortunes(src) if kind == "fortunes" else reference(src)
    stem = kind
    with open(out, "w") as f:
        for i, d in enumerate(docs):
            f.write(json.dumps({"id": f"{stem}-{i}", "text": d}, ensure_ascii=False) + "\n")
    print(f"{out}: {len(docs)} documents", file=sys.stderr)


if __name__ == "__main__":
    main()
