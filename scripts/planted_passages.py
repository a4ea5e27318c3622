#!/usr/bin/env python3
"""Planted passages (issue 54, item 3): a collection is ingested, then documents made of
unrelated text with a passage of 40-200 words of one collection document inside,
verbatim or with one word in eight changed at random places, are queried (`query
--json`: analysed, not stored). Per planted passage: the share of its letters and
digits inside the single largest block naming a right source (the document it was
taken from, or an earlier one holding the whole passage), the share inside any block
naming one, and the number of blocks over it.

With --edited-earlier (issue 79, item 2) only passages that no earlier document holds
whole but an earlier one holds with light edits (half or more of the passage's 8-word
shingles, not all) are planted, from a corpus of versions of texts: the table names the
edited earlier version; a right source is one holding the passage exactly. It also
prints how often the largest block names an edited earlier holder instead.

    scripts/planted_passages.py --bin target/release/textorigin --corpus sotu.jsonl \\
        --filler sa.jsonl [--attribution passage|earliest] [--plants 100] [--edited-earlier]
"""
import argparse, json, os, random, re, subprocess, tempfile

ap = argparse.ArgumentParser()
ap.add_argument('--bin', required=True)
ap.add_argument('--corpus', required=True)
ap.add_argument('--filler', required=True, help='JSON lines of unrelated text around the passages')
ap.add_argument('--attribution', default='passage')
ap.add_argument('--plants', type=int, default=100)
ap.add_argument('--seed', type=int, default=54)
ap.add_argument('--edited-earlier', action='store_true')
a = ap.parse_args()
rng = random.Random(a.seed)
docs = [json.loads(l) for l in open(a.corpus)]
filler = [json.loads(l)['text'] for l in open(a.filler)]
work = tempfile.mkdtemp()
data = os.path.join(work, 'data')
subprocess.run([a.bin, 'ingest', '--data', data, '--attribution', a.attribution, '--table-size', '256MiB', a.corpus],
               check=True, capture_output=True)
listed = json.loads(subprocess.run([a.bin, 'list', '--data', data, '--json'], capture_output=True, text=True, check=True).stdout)
id_of = {d['name']: d['id'] for d in listed}
alnum = lambda s: sum(c.isalnum() for c in s)
texts = [d['text'] for d in docs]
norm = lambda t: re.findall(r'\w+', t.lower())
shingles = lambda ws: {' '.join(ws[j:j + 8]) for j in range(len(ws) - 7)}
memo = {}
doc_shingles = lambda j: memo.setdefault(j, shingles(norm(texts[j])))
words_memo = {}
doc_words = lambda j: words_memo.setdefault(j, ' '.join(norm(texts[j])))
results = {'verbatim': [], 'edited': []}
named_edited = {'verbatim': 0, 'edited': 0}
for n in range(a.plants * (200 if a.edited_earlier else 1)):
    if len(results['verbatim']) == a.plants:
        break
    i = rng.randrange(len(docs))
    words = texts[i].split(' ')
    # A passage from a sentence's start.
    starts = [j for j in range(1, len(words) - 40) if words[j - 1].endswith('.')]
    if not starts:
        continue
    s = rng.choice(starts)
    length = rng.randint(40, 200)
    passage = words[s:s + length]
    right = {id_of[docs[i]['id']]} | {id_of[d['id']] for d in docs[:i] if ' '.join(passage) in d['text']}
    edited_holders = set()
    if a.edited_earlier:
        # Compared as the engine tokenizes: words, case-folded, punctuation left out.
        mine = shingles(norm(' '.join(passage)))
        holding = lambda j: 2 * len(mine & doc_shingles(j)) >= len(mine)
        exact = lambda j: mine <= doc_shingles(j) and ' '.join(norm(' '.join(passage))) in doc_words(j)
        right |= {id_of[d['id']] for j, d in enumerate(docs[:i]) if holding(j) and exact(j)}
        edited_holders = {id_of[d['id']] for j, d in enumerate(docs[:i]) if holding(j) and not exact(j)}
        if len(right) > 1 or not edited_holders:
            continue
    for kind in results:
        p = list(passage)
        if kind == 'edited':
            p = [('zqx%d' % k) if rng.random() < 1 / 8 else w for k, w in enumerate(p)]
        before = ' '.join(rng.choice(filler).split()[:120])
        after = ' '.join(rng.choice(filler).split()[:120])
        text = before + '\n\n' + ' '.join(p) + '\n\n' + after
        lo = len((before + '\n\n').encode()); hi = lo + len(' '.join(p).encode())
        q = subprocess.run([a.bin, 'query', '--data', data, '--json', '-'], input=json.dumps({'text': text}),
                           capture_output=True, text=True, check=True)
        v = json.loads(q.stdout)
        raw = text.encode()
        total = alnum(raw[lo:hi].decode(errors='ignore'))
        over = [(b, alnum(raw[max(b['start_byte'], lo):min(b['end_byte'], hi)].decode(errors='ignore')))
                for b in v['copied_blocks'] if b['start_byte'] < hi and b['end_byte'] > lo]
        good = [c for b, c in over if b['origin']['id'] in right]
        largest = max(over, key=lambda x: x[1], default=(None, 0))[0]
        if largest is not None and largest['origin']['id'] in edited_holders:
            named_edited[kind] += 1
        # Letters and digits of the unrelated text around it inside blocks.
        outside = sum(alnum(raw[b['start_byte']:b['end_byte']].decode(errors='ignore')) for b in v['copied_blocks']) - sum(c for _, c in over)
        results[kind].append((max(good, default=0) / total, sum(good) / total, len(over), outside / max(1, alnum(before + after))))
for kind, r in results.items():
    n = len(r)
    print(f"{a.attribution} {kind}: {n} passages; in one block of a right source {sum(x[0] for x in r) / n:.4f}; "
          f"credited to a right source {sum(x[1] for x in r) / n:.4f}; at most two blocks {sum(x[2] <= 2 for x in r) / n:.3f}; "
          f"one block {sum(x[2] == 1 for x in r) / n:.3f}; unrelated text in blocks {sum(x[3] for x in r) / n:.4f}"
          + (f"; largest block names an edited earlier holder {named_edited[kind]} of {n}" if a.edited_earlier else ""))
