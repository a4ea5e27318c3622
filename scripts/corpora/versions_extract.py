#!/usr/bin/env python3
"""Heavy reuse: many versions of the same long texts (issue 36).

Downloads the source distributions of several releases of a few Python packages from
PyPI (every release up to a cut-off date, thinned to at most PER_PACKAGE of them,
evenly) and writes their long text files (change logs, READMEs, the documentation's
.rst/.md/.txt pages of 2 KB or more) as documents, oldest release first, each dated by
its release's upload time:
  {"id": "pytest-7.0.0/doc/en/changelog.rst", "text": ..., "published_at": "2022-02-03"}
A file that did not change from the release before is written once (a copy of the
whole text is the near-duplicate job's, not this corpus's point). Each release mostly
repeats the one before: about half of all shingles or more are copied.

Usage: versions_extract.py OUT.jsonl [CACHE_DIR]
"""
import io
import json
import sys
import tarfile
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

PACKAGES = ["attrs", "requests", "pytest", "pip"]
CUTOFF = "2026-01-01"
PER_PACKAGE = 12
MIN_BYTES = 2048
NAMES = ("changelog", "changes", "history", "news", "readme", "authors")
SUFFIXES = (".rst", ".md", ".txt")


def releases(name):
    index = f"https://pypi.org/pypi/{name}/json"
    with urllib.request.urlopen(index, timeout=60) as r:
        data = json.load(r)
    out = []
    for version, files in data["releases"].items():
        sdists = [f for f in files if f["packagetype"] == "sdist" and not f.get("yanked")]
        if not sdists or any(c.isalpha() for c in version.replace("post", "")):
            continue  # no source distribution, or a pre-release
        f = sdists[0]
        if f["upload_time"][:10] < CUTOFF:
            # (A registry mirror may answer with addresses relative to the index's.)
            out.append((f["upload_time"], version, urllib.parse.urljoin(index, f["url"]), f["filename"]))
    out.sort()
    if len(out) > PER_PACKAGE:
        step = (len(out) - 1) / (PER_PACKAGE - 1)
        out = [out[round(i * step)] for i in range(PER_PACKAGE)]
    return out


def members(path):
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as z:
            for n in z.namelist():
                yield n, lambda n=n: z.read(n)
    else:
        with tarfile.open(path) as t:
            for m in t.getmembers():
                if m.isfile():
                    yield m.name, lambda m=m: t.extractfile(m).read()


def wanted(name):
    low = name.lower()
    base = low.rsplit("/", 1)[-1]
    if "/tests/" in low or "/testing/" in low or "/_vendor/" in low or "/vendor/" in low:
        return False
    return base.startswith(NAMES) or ("/doc" in low and base.endswith(SUFFIXES))


def main():
    out = Path(sys.argv[1])
    cache = Path(sys.argv[2] if len(sys.argv) > 2 else out.parent / "sdists")
    cache.mkdir(parents=True, exist_ok=True)
    docs = []
    for pkg in PACKAGES:
        last = {}
        for uploaded, version, url, filename in releases(pkg):
            path = cache / filename
            if not path.exists():
                with urllib.request.urlopen(url, timeout=300) as r:
                    path.write_bytes(r.read())
            for name, read in members(path):
                rel = name.split("/", 1)[-1]
                if not wanted("/" + rel):
                    continue
                data = read()
                if len(data) < MIN_BYTES:
                    continue
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError:
                    continue
                if last.get(rel) == text:
                    continue
                last[rel] = text
                docs.append((uploaded, f"{pkg}-{version}/{rel}", text))
    docs.sort(key=lambda d: (d[0], d[1]))
    with out.open("w") as f:
        for uploaded, id_, text in docs:
            f.write(json.dumps({"id": id_, "text": text, "published_at": uploaded[:10]}) + "\n")
    print(f"{out}: {len(docs)} documents, {sum(len(d[2]) for d in docs) / 1e6:.1f} MB of text")


if __name__ == "__main__":
    main()
