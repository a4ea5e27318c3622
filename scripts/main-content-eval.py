#!/usr/bin/env python3
# Main-content extraction, scored as the public extraction benchmarks score it (issue 80,
# item 4): per page, the bag of 4-token shingles of the extracted text against that of
# the hand-marked article body; precision, recall and F1 per page, then their means over
# the pages (and the F1 of the pooled shingle counts, "micro").
#
# The pages: newspaper4k's test set (its sdist on PyPI: tests/data/html with the article
# bodies its authors marked in tests/data/txt; news in English, Arabic, Chinese,
# Japanese, Thai, Spanish, Latvian, Korean, ...), fetched with pip. The candidates: this
# build's `--html main` and `--html all`, and each peer extractor installed in the
# Python running this script (trafilatura, readability-lxml, jusText, newspaper4k's
# own), all on the same pages.
#
#   B=$CARGO_TARGET_DIR/release/textorigin python3 scripts/main-content-eval.py WORKDIR [--pages DIR]
#
# --pages DIR: pages of your own, NAME.html beside NAME.txt (the marked body).
import collections, glob, json, os, re, shutil, subprocess, sys, tarfile, unicodedata

B = os.environ.get('B', 'textorigin')
work = sys.argv[1]
pages_dir = sys.argv[sys.argv.index('--pages') + 1] if '--pages' in sys.argv else None
os.makedirs(work, exist_ok=True)

if pages_dir is None:
    sdist = glob.glob(os.path.join(work, 'newspaper4k-*.tar.gz'))
    if not sdist:
        subprocess.run([sys.executable, '-m', 'pip', 'download', '--quiet', '--no-deps', '--no-binary', ':all:',
                        'newspaper4k==0.9.6', '-d', work], check=True)
        sdist = glob.glob(os.path.join(work, 'newspaper4k-*.tar.gz'))
    with tarfile.open(sdist[0]) as t:
        root = t.getnames()[0].split('/')[0]
        t.extractall(work, filter='data')
    pages_dir = os.path.join(work, 'pages')
    shutil.rmtree(pages_dir, ignore_errors=True)
    os.makedirs(pages_dir)
    data = os.path.join(work, root, 'tests', 'data')
    for txt in sorted(glob.glob(os.path.join(data, 'txt', '*.txt'))):
        stem = os.path.basename(txt)[:-4]
        html = os.path.join(data, 'html', stem + '.html')
        if os.path.exists(html):
            shutil.copy(html, os.path.join(pages_dir, stem + '.html'))
            shutil.copy(txt, os.path.join(pages_dir, stem + '.txt'))

pages = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(pages_dir, '*.html'))
               if os.path.exists(p[:-5] + '.txt'))
want = {p: open(os.path.join(pages_dir, p + '.txt'), encoding='utf-8', errors='replace').read() for p in pages}
html = {p: open(os.path.join(pages_dir, p + '.html'), 'rb').read() for p in pages}


def wide(ch):
    # Scripts written without spaces between words: each character is a token.
    return unicodedata.east_asian_width(ch) in 'WF' or '\u0e00' <= ch <= '\u0eff' or '\u1000' <= ch <= '\u109f'


def tokens(text):
    out = []
    for w in re.findall(r'\w+', unicodedata.normalize('NFKC', text).lower()):
        if any(wide(c) for c in w):
            out.extend(w)
        else:
            out.append(w)
    return out


def shingles(text, n=4):
    t = tokens(text)
    if len(t) < n:
        return collections.Counter([tuple(t)]) if t else collections.Counter()
    return collections.Counter(tuple(t[i:i + n]) for i in range(len(t) - n + 1))


def score(got):
    ps, rs, fs = [], [], []
    tp = fp = fn = 0
    for p in pages:
        g, w = shingles(got.get(p) or ''), shingles(want[p])
        both = sum((g & w).values())
        prec = both / sum(g.values()) if g else 0.0
        rec = both / sum(w.values()) if w else 0.0
        ps.append(prec); rs.append(rec); fs.append(2 * prec * rec / (prec + rec) if prec + rec else 0.0)
        tp += both; fp += sum(g.values()) - both; fn += sum(w.values()) - both
    mean = lambda v: sum(v) / len(v)
    micro = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return mean(fs), mean(ps), mean(rs), micro, fs


def ours(mode):
    data = os.path.join(work, 'data-' + mode)
    shutil.rmtree(data, ignore_errors=True)
    src = os.path.join(work, 'in')
    shutil.rmtree(src, ignore_errors=True)
    os.makedirs(src)
    for p in pages:
        shutil.copy(os.path.join(pages_dir, p + '.html'), os.path.join(src, p + '.html'))
    subprocess.run([B, 'ingest', '--data', data, '--html', mode, '--templates', 'off', '--table-size', '16MiB', src],
                   check=True, capture_output=True)
    out = subprocess.run([B, 'export', '--data', data, '--format', 'corpus', '--old-threshold', '2',
                          '--near-threshold', '1', '--all'], capture_output=True, text=True, check=True).stdout
    got = {}
    for line in out.splitlines():
        o = json.loads(line)
        got[o.get('name') or o.get('id')] = o['text']
    return got


def peers():
    found = {}
    try:
        import trafilatura
        found['trafilatura ' + trafilatura.__version__] = lambda h: trafilatura.extract(h) or ''
    except ImportError:
        pass
    try:
        from readability import Document
        import lxml.html
        def readability(h):
            summary = Document(h).summary()
            return lxml.html.fromstring(summary).text_content() if summary.strip() else ''
        found['readability-lxml'] = readability
    except ImportError:
        pass
    try:
        import justext
        def jt(h):
            ps = justext.justext(h, justext.get_stoplist('English'))
            return '\n'.join(p.text for p in ps if not p.is_boilerplate)
        found['jusText (English stoplist)'] = jt
    except ImportError:
        pass
    return found


rows = []
for mode in ('main', 'all'):
    rows.append((f'textorigin --html {mode}', score(ours(mode))))
for name, f in peers().items():
    got = {}
    for p in pages:
        try:
            got[p] = f(html[p].decode('utf-8', errors='replace'))
        except Exception as e:  # a peer that fails on a page scores 0 there
            print(f'{name}: {p}: {e}', file=sys.stderr)
            got[p] = ''
    rows.append((name, score(got)))
print(f'{len(pages)} pages ({pages_dir}); 4-token shingles, means over pages')
print(f'{"extractor":32} {"F1":>6} {"P":>6} {"R":>6} {"micro F1":>9}')
for name, (f1, p, r, micro, _) in rows:
    print(f'{name:32} {f1:6.3f} {p:6.3f} {r:6.3f} {micro:9.3f}')
if '--per-page' in sys.argv:
    print('per page F1:', ' '.join(f'{n}' for n, _ in rows))
    for i, p in enumerate(pages):
        print(f'{p:28}', ' '.join(f'{row[1][4][i]:.3f}' for row in rows))
