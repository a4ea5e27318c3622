#!/usr/bin/env python3
# Makes tests/fixtures/parquet/*.parquet from pages of Python's documentation (the WARC
# fixture's server), as a Hugging Face dataset would hold them.
import sys, glob, os, datetime
import pyarrow as pa, pyarrow.parquet as pq
sys.path.insert(0, '/tmp')
root = '/tmp/docroot/usr/share/doc/python3.11/html/library'
pages = sorted(glob.glob(root + '/*.html'))[:40]
import html as h, re
def text_of(p):
    s = open(p, encoding='utf-8').read()
    m = re.search(r'<div class="body" role="main">(.*?)<div class="sphinxsidebar"', s, re.S)
    body = m.group(1) if m else s
    body = re.sub(r'<script.*?</script>|<style.*?</style>', ' ', body, flags=re.S)
    t = re.sub(r'<[^>]+>', ' ', body)
    t = h.unescape(t)
    return re.sub(r'[ \t]+', ' ', re.sub(r'\n\s*\n+', '\n', t)).strip()
rows = []
for i, p in enumerate(pages):
    name = os.path.basename(p)
    rows.append({
        'id': 1000 + i,
        'text': text_of(p)[:6000],
        'url': f'https://docs.python.org/3.11/library/{name}',
        'date': datetime.datetime(2023, 2, 8, 12, 0, i, tzinfo=datetime.timezone.utc),
        'title': name[:-5],
        'score': i / 10,
    })
# A row with no text, one with html instead.
rows.append({'id': 2000, 'text': None, 'url': None, 'date': None, 'title': 'empty', 'score': None})
t = pa.Table.from_pylist(rows)
t = t.append_column('html', pa.array([None] * (len(rows) - 1) + ['<p>Some <b>html</b> text here.</p>']))
pq.write_table(t, '/work/main/tests/fixtures/parquet/pydocs.parquet', compression='snappy', row_group_size=16)
pq.write_table(t.slice(0, 3).drop_columns(['html']), '/work/main/tests/fixtures/parquet/pydocs-zstd.parquet', compression='zstd')
print(t.schema, t.num_rows)
