#!/usr/bin/env python3
# Planted copies between two documentation sites (issue 54's target): pages of site A
# (Python's library docs) are ingested, then pages of site B (Django's reference and
# topics), every other one with a paragraph, a section or a whole page of an A page
# planted in B's template. Prints, per kind, the share of the planted text's letters
# and digits inside copied blocks naming the planted A page.
#
#   apt-get download python3.11-doc python-django-doc && dpkg-deb -x ... /tmp/docroot(2)
#   B=target/release/textorigin scripts/planted_sites.py WORKDIR [main|all]
#
# Sites from elsewhere: A_PAGES and B_PAGES (globs) in the environment.
import json, os, random, re, html as h, shutil, subprocess, sys, glob
B = os.environ['B']; work = sys.argv[1]; mode = sys.argv[2] if len(sys.argv) > 2 else 'main'
random.seed(54)
A = sorted(glob.glob(os.environ.get('A_PAGES', '/tmp/docroot/usr/share/doc/python3.11/html/library/*.html')))
Bp = sorted(glob.glob(os.environ.get('B_PAGES', '/tmp/docroot2/usr/share/doc/python-django-doc/html/ref/**/*.html'), recursive=True)
            + (glob.glob('/tmp/docroot2/usr/share/doc/python-django-doc/html/topics/**/*.html', recursive=True) if 'B_PAGES' not in os.environ else []))
shutil.rmtree(work, ignore_errors=True); os.makedirs(work + '/a'); os.makedirs(work + '/b')
for p in A: shutil.copy(p, work + '/a/' + os.path.basename(p))
def norm(s): return re.sub(r'\s+', ' ', h.unescape(re.sub(r'<[^>]+>', ' ', s))).strip()
def body(page):
    m = re.search(r'<div class="body" role="main">(.*?)</div>\s*</div>\s*</div>\s*<div class="sphinxsidebar"', page, re.S)
    return m.group(1) if m else None
planted = {}
for i, p in enumerate(Bp):
    page = open(p, encoding='utf-8').read()
    name = f'b{i:03d}.html'
    if i % 2 == 0 and i // 2 < 90:
        src = random.choice(A); sp = open(src, encoding='utf-8').read()
        kind = ['paragraph', 'section', 'page'][(i // 2) % 3]
        if kind == 'paragraph':
            ps = [x for x in re.findall(r'<p>.*?</p>', sp, re.S) if 40 <= len(norm(x).split()) <= 200]
            if not ps: continue
            snippet = random.choice(ps)
        elif kind == 'section':
            # A heading and the paragraphs after it.
            ss = re.findall(r'<h[23]>.*?</h[23]>.*?(?=<h[23]>|</section>)', sp, re.S)
            ss = [x for x in ss if 60 <= len(norm(x).split()) <= 800]
            if not ss: continue
            snippet = random.choice(ss)
        else:
            snippet = body(sp)
            if not snippet:
                m = re.search(r'<div class="body" role="main">(.*?)<div class="sphinxsidebar"', sp, re.S)
                snippet = m and m.group(1)
            if not snippet or len(norm(snippet).split()) > 8000: continue
        # Into B's main content, after its first heading.
        m = re.search(r'</h1>', page)
        if not m: continue
        page = page[:m.end()] + '\n<div class="planted">' + snippet + '</div>\n' + page[m.end():]
        planted[name] = (os.path.basename(src), kind, norm(snippet))
    open(work + '/b/' + name, 'w').write(page)
data = work + '/data'
args = [B, 'ingest', '--data', data, '--table-size', '256MiB'] + (['--html', 'all'] if mode == 'all' else [])
subprocess.run(args + [work + '/a', work + '/b'], check=True, capture_output=True)
docs = json.loads(subprocess.run([B, 'list', '--data', data, '--json'], capture_output=True, text=True, check=True).stdout)
by_source = {os.path.basename(d['source']): d for d in docs if '/a/' in d['source']}
texts = {}
out = subprocess.run([B, 'export', '--data', data, '--format', 'corpus', '--old-threshold', '2', '--near-threshold', '1'], capture_output=True, text=True, check=True).stdout
for line in out.splitlines():
    o = json.loads(line); texts[o['id'] if 'id' in o else o['name']] = o['text']
dups = {}
for line in subprocess.run([B, 'export', '--data', data, '--format', 'decisions', '--old-threshold', '2', '--near-threshold', '1'], capture_output=True, text=True, check=True).stdout.splitlines():
    o = json.loads(line)
    if o.get('of'): dups[o['id']] = o['of']
names = {d['id']: d['name'] for d in docs}
tot = cred = 0; one_block = 0; n = 0; per = {}
for d in docs:
    base = os.path.basename(d['source'])
    if '/b/' not in d['source'] or base not in planted: continue
    src, kind, want = planted[base]
    text = texts.get(d['name']) or texts.get(d['id'])
    if text is None:
        # Dropped from the corpus as an exact duplicate: the text of what it duplicates.
        of = dups.get(d['id'])
        text = texts.get(names.get(of))
    if text is None: print('no text for', d['name']); continue
    # Located by letters and digits alone (markup and spacing differ).
    idx = [k for k, ch in enumerate(text) if ch.isalnum()]
    alnum = ''.join(text[k] for k in idx)
    want_a = ''.join(ch for ch in want if ch.isalnum())
    if kind == 'page':
        # The whole page: its main content, which is the A page's stored text.
        want_a = ''.join(ch for ch in texts[by_source[src]['name']] if ch.isalnum())
    a = alnum.find(want_a[:40]); b = alnum.find(want_a[-40:], max(a, 0))
    if a < 0 or b < 0: print('not found', d['name'], kind); continue
    b += 40
    A0, B0 = idx[a], idx[b - 1] + 1
    orig = text
    show = json.loads(subprocess.run([B, 'show', '--data', data, '#%d' % d['id'], '--json'], capture_output=True, text=True).stdout)
    right = by_source[src]['id']
    c = 0; blocks = 0
    for bl in show['copied_blocks']:
        s, e = max(bl['start_byte'], A0), min(bl['end_byte'], B0)
        if s < e:
            blocks += 1
            if bl['origin']['id'] == right: c += sum(ch.isalnum() for ch in orig[s:e])
    size = sum(ch.isalnum() for ch in orig[A0:B0])
    tot += size; cred += c; n += 1
    per.setdefault(kind, [0, 0, 0]); per[kind][0] += size; per[kind][1] += c; per[kind][2] += 1
print(f'mode={mode} planted pages={n} credited to the right source={cred/max(tot,1)*100:.2f}% of {tot} letters and digits')
for k, (t_, c_, n_) in per.items(): print(f'  {k}: {n_} pages, {c_/max(t_,1)*100:.2f}%')
