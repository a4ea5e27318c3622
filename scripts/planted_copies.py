#!/usr/bin/env python3
"""Planted copies in held-out documents (issue 33), for any corpus: per length band of
the planted sentence (25-40, 40-80, 80+ letters and digits; kana and ideographs in a
corpus of CJK text), whole and with one term
changed, the share found as a copied block with the right origin and found as a copy
or a quotation; and the share of the unchanged held-out text marked copied. Prints a
markdown table.

    python3 scripts/planted_copies.py --bin TARGET/release/textorigin CORPUS [--terms unicode|words] [--bands words] [-- ENGINE FLAGS]

`--bands words`: bands of 10-19 and 20-40 words (runs of letters and digits) instead,
issue 36's targets for English. The right origin of a planted sentence is the earliest
collection document that holds it (a sentence can occur in several).

CORPUS: JSON lines (`text` fields) or a fortune file (entries between `%` lines, as
Debian's fortunes-zh: `apt-get download fortunes-zh`, then `dpkg-deb -x`). Shuffled
(seed 3): a fifth of the documents (at most 300) is held out, the rest (at most 1,200)
is the collection; each held-out one
gets a sentence of its band (ending in 。！？ in a corpus mostly in CJK characters,
a line of a corpus mostly in Thai, which has no full stop, else ending in .!?) of a
random collection document at its middle sentence boundary. Found as a copy: blocks with the
source as origin cover half of it; as a quotation: a quoting sentence overlapping it
names the source. Not run by CI.
"""

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import tempfile


def documents(path):
    raw = open(path, encoding="utf-8", errors="replace").read()
    if path.endswith(".jsonl"):
        return [json.loads(l)["text"].strip() for l in raw.splitlines() if l.strip()]
    raw = re.sub(r"\x1b\[[0-9;]*m", "", raw)
    return [d.strip() for d in raw.split("\n%\n")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--terms", default="unicode")
    ap.add_argument("--bands", default="characters", choices=["characters", "words"])
    ap.add_argument("corpus")
    ap.add_argument("flags", nargs="*")
    a = ap.parse_args()
    docs = [d for d in documents(a.corpus) if len(d) >= 80]
    rnd = random.Random(3)
    rnd.shuffle(docs)
    held_n = min(300, len(docs) // 5)
    coll, held = docs[: min(1200, len(docs) - held_n)], docs[len(docs) - held_n :]
    work = tempfile.mkdtemp(prefix="textorigin-planted-")

    def jsonl(name, rows):
        path = os.path.join(work, name)
        with open(path, "w") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        return path

    def ingest(data, path, *flags):
        subprocess.run([a.bin, "ingest", "--data", data, *flags, path], check=True, capture_output=True)

    def export(data):
        out = subprocess.run([a.bin, "export", "--data", data], capture_output=True, text=True, check=True).stdout
        return [json.loads(l) for l in out.splitlines()]

    base = os.path.join(work, "base")
    ingest(base, jsonl("coll.jsonl", [{"id": f"c{i}", "text": t} for i, t in enumerate(coll)]), "--terms", a.terms, *a.flags)
    plain = os.path.join(work, "plain")
    shutil.copytree(base, plain)
    ingest(plain, jsonl("held.jsonl", [{"id": f"h{i}", "text": t} for i, t in enumerate(held)]))
    old = sum(v["old_tokens"] for v in export(plain) if v["name"].startswith("h"))
    tok = sum(v["tokens"] for v in export(plain) if v["name"].startswith("h"))
    # Sentences end at 。！？ in a corpus mostly in CJK characters, else at .!?
    share = lambda lo, hi: sum(1 for t in coll for c in t if lo <= c <= hi) / sum(len(t) for t in coll)
    # (The Japanese Debian Reference is a fifth kana and ideographs, the rest commands,
    # paths and untranslated English: a quarter would take it for a Latin corpus and
    # plant its table-of-contents lines.)
    cjk = share("\u3040", "\u9fff") > 0.1
    thai = share("\u0e01", "\u0e5b") > 0.25
    ends = "。！？" if cjk else ".!?"
    sentence = re.compile(r"[^\n]{25,400}" if thai else rf"[^{ends}]{{25,400}}[{ends}]")  # hard-wrapped lines too
    sents = [(i, s.strip()) for i, t in enumerate(coll) for s in sentence.findall(t)]
    # Length bands in characters that are letters or digits: the planted sentence, whole
    # or with one term changed (a Latin word, or one ideograph).
    bands = [(25, 40), (40, 80), (80, 400)] if a.bands == "characters" else [(10, 20), (20, 41)]
    # (Thai: two letters, a word's worth, as no spaces show where its words are.)
    word = re.compile(r"[\u4e00-\u9fff]" if cjk else r"[\u0e01-\u0e2e]{2}" if thai else r"[A-Za-z]{3,}")

    def size(s):
        # Letters and digits; in a CJK corpus its kana and ideographs only (the issue's
        # "25 CJK characters"); with word bands, runs of letters and digits.
        if a.bands == "words":
            return len(re.findall(r"\w+", s))
        if cjk:
            return sum(1 for c in s if "\u3040" <= c <= "\u9fff")
        return len(re.sub(r"[\s\W_]", "", s))

    print(f"{os.path.basename(a.corpus)} ({len(coll)} collection, {len(held)} held out), terms={a.terms} {' '.join(a.flags)}; "
          f"held-out text marked copied {100 * old / tok:.2f}% ({old}/{tok} terms)")
    print(f"| band ({a.bands}) | planted | found as a copy | as a copy or quotation | one term changed: as a copy | as a copy or quotation |")
    print("| --- | --- | --- | --- | --- | --- |")
    for lo, hi in bands:
        fit = [(i, s) for i, s in sents if lo <= size(s) < hi]
        if not fit:
            continue
        row = []
        for edit in (False, True):
            rows, planted, first_holder = [], [], []
            for i, t in enumerate(held):
                src, s = fit[rnd.randrange(len(fit))]
                if edit:
                    ws = list(word.finditer(s))
                    if ws:
                        m = ws[len(ws) // 2]
                        s = s[: m.start()] + ("变" if cjk else "ฬฦ" if thai else "zzzq") + s[m.end() :]
                cut = [m.end() for m in re.finditer(rf"[{ends}\n]", t)]
                if thai:
                    s = "\n" + s + "\n"
                at = cut[len(cut) // 2] if cut else len(t)
                rows.append({"id": f"p{i}", "text": t[:at] + s + t[at:]})
                planted.append((src, at, at + len(s)))
                whole = s.strip()
                first_holder.append(1 + next((j for j in range(src + 1) if whole in coll[j]), src))
            pl = os.path.join(work, f"planted-{lo}-{edit}")
            shutil.copytree(base, pl)
            ingest(pl, jsonl(f"planted-{lo}-{edit}.jsonl", rows))
            copy = either = 0
            for v in export(pl):
                if not v["name"].startswith("p"):
                    continue
                k = int(v["name"][1:])
                src, a0, b0 = planted[k]
                text = rows[k]["text"]
                sa, sb = len(text[:a0].encode()), len(text[:b0].encode())
                # The earliest collection document holding the sentence.
                want = first_holder[k]
                cov = sum(max(0, min(sb, b["end_byte"]) - max(sa, b["start_byte"]))
                          for b in v["copied_blocks"] if b["origin"]["id"] == want)
                as_copy = cov >= 0.5 * (sb - sa)
                as_quote = any(max(0, min(sb, q["end_byte"]) - max(sa, q["start_byte"])) > 0
                               and any(x["id"] == want for x in q["sources"]) for q in v["quotations"])
                copy += as_copy
                either += as_copy or as_quote
            n = len(rows)
            row += [f"{copy / n:.3f}", f"{either / n:.3f}"]
            shutil.rmtree(pl, ignore_errors=True)
        print(f"| {lo}-{hi} | {len(held)} | " + " | ".join(row) + " |")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
