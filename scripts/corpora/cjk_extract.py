#!/usr/bin/env python3
"""Chinese, Japanese and Thai text from Debian packages into JSONL (issue 33).

    cjk_extract.py fortunes FILE OUT.jsonl    # fortunes-zh: one document an entry
    cjk_extract.py reference FILE.txt.gz OUT.jsonl   # debian-reference-ja: paragraphs
                                                     # grouped into documents of 300+ characters
    cjk_extract.py messages DIR OUT.jsonl     # Thai: the translated messages of Firefox's
                                              # (.ftl) and LibreOffice's (.mo) language packs
                                              # under DIR, grouped as the paragraphs above

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


def messages(root):
    """Thai messages (20+ Thai letters) of the .ftl and .mo files under `root`, markup
    and placeholders taken out, one paragraph each."""
    import gettext
    import os

    thai = re.compile(r"[\u0e01-\u0e5b]")
    found = []
    for d, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            path = os.path.join(d, name)
            if name.endswith(".ftl"):
                values = [m.group(1) for m in re.finditer(r"^\s*[\w.-]+\s*=\s*(.+)$", open(path, encoding="utf-8").read(), re.M)]
            elif name.endswith(".mo"):
                with open(path, "rb") as f:
                    values = [v for v in gettext.GNUTranslations(f)._catalog.values() if isinstance(v, str)]
            else:
                continue
            for v in values:
                v = re.sub(r"\{[^}]*\}|<[^>]*>|~|%\w+|\$\w+", " ", v)
                v = re.sub(r"\s+", " ", v).strip()
                if len(thai.findall(v)) >= 20:
                    found.append(v)
    paras = list(dict.fromkeys(found))  # each message once
    docs, cur = [], []
    for para in paras:
        cur.append(para)
        if sum(len(p) for p in cur) >= 300:
            docs.append("\n\n".join(cur))
            cur = []
    return docs


def main():
    kind, src, out = sys.argv[1:4]
    docs = {"fortunes": fortunes, "reference": reference, "messages": messages}[kind](src)
    stem = kind
    with open(out, "w") as f:
        for i, d in enumerate(docs):
            f.write(json.dumps({"id": f"{stem}-{i}", "text": d}, ensure_ascii=False) + "\n")
    print(f"{out}: {len(docs)} documents", file=sys.stderr)


if __name__ == "__main__":
    main()
