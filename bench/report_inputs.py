#!/usr/bin/env python3
"""Results folders for the report's size and speed check (docs/performance.md, "Report"):
162 Hues and Cues models, 8 VIOLIN models and 6 ACVA models, made from the fixture folders in
tests/data/report/ by copying their models under new names with deterministically perturbed
numbers. The files keep the results contract's layout, so `visalign report` reads them as it reads
real outputs; the numbers mean nothing.

    bench/report_inputs.py OUT_DIR     -> OUT_DIR/{violin,hues,acva}/
"""
import copy
import csv
import io
import json
import os
import random
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, '..', 'tests', 'data', 'report')
ARCHS = ['RN50', 'RN101', 'RN50x4', 'ViT-B-32', 'ViT-B-16', 'ViT-L-14', 'ViT-H-14', 'ViT-g-14', 'ViT-bigG-14',
         'convnext_base_w', 'convnext_large_d', 'EVA02-B-16', 'EVA02-L-14', 'coca_ViT-B-32', 'ViT-SO400M-14']
DATASETS = ['openai', 'laion400m_e32', 'laion2b_s34b_b79k', 'datacomp_xl_s13b_b90k', 'commonpool_xl_s13b_b90k',
            'dfn2b', 'metaclip_400m', 'webli', 'yfcc15m', 'cc12m', 'merged2b_s4b_b131k']
RNG = random.Random(17)


def jitter(value, scale=0.15):
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return value
    return min(1.0, max(0.0, value * (1 + RNG.uniform(-scale, scale))))


def read_csv(path):
    with open(path, newline='') as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def write_csv(path, header, rows):
    out = io.StringIO()
    csv.writer(out, lineterminator='\n').writerows([header] + rows)
    with open(path, 'w') as f:
        f.write(out.getvalue())


def write_items(path, items):
    with open(path, 'w') as f:
        for item in items:
            f.write(json.dumps(item, separators=(',', ':')) + '\n')


def read_items(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def hues(out):
    src = os.path.join(FIXTURES, 'hues')
    summary = json.load(open(os.path.join(src, 'summary.json')))
    header, rows = read_csv(os.path.join(src, 'summary.csv'))
    items = read_items(os.path.join(src, 'items.jsonl'))
    names = [f'{a}-{d}' for a in ARCHS for d in DATASETS][:162]
    models, csv_rows, new_items = [], [], []
    for i, name in enumerate(names):
        m = copy.deepcopy(summary['models'][i % len(summary['models'])])
        m['model'] = name
        for key in ('mahalanobis', 'hotelling'):
            m[key]['fail_rate'] = jitter(m[key]['fail_rate'])
        for c in m['categories']:
            c['mahalanobis_fail_rate'] = jitter(c['mahalanobis_fail_rate'])
            c['hotelling_fail_rate'] = jitter(c['hotelling_fail_rate'])
        models.append(m)
        row = list(rows[i % len(rows)])
        row[header.index('model')] = name
        row[header.index('mahalanobis_fail_rate')] = repr(m['mahalanobis']['fail_rate'])
        row[header.index('hotelling_fail_rate')] = repr(m['hotelling']['fail_rate'])
        csv_rows.append(row)
        for item in items[:100]:
            new_items.append(dict(item, model=name))
    summary['models'] = models
    # Inputs as absolute paths (the fixture's are relative to its folder); every model reads one of
    # the fixture's prediction files, so the board figures draw 162 models' top 5.
    inputs = summary['inputs']
    for key in ('humans', 'humans_exclusions', 'macro_map'):
        if 'path' in inputs.get(key, {}):
            inputs[key]['path'] = os.path.abspath(os.path.join(src, inputs[key]['path']))
    files = [dict(p, path=os.path.abspath(os.path.join(src, p['path']))) for p in inputs['predictions']]
    inputs['predictions'] = [dict(files[i % len(files)], model=name) for i, name in enumerate(names)]
    os.makedirs(out)
    json.dump(summary, open(os.path.join(out, 'summary.json'), 'w'), indent=2)
    write_csv(os.path.join(out, 'summary.csv'), header, csv_rows)
    write_items(os.path.join(out, 'items.jsonl'), new_items)


def violin(out):
    src = os.path.join(FIXTURES, 'violin')
    summary = json.load(open(os.path.join(src, 'summary.json')))
    header, rows = read_csv(os.path.join(src, 'summary.csv'))
    items = read_items(os.path.join(src, 'items.jsonl'))
    base = [r for r in rows if r[header.index('model')] == 'ground-truth']
    names = [f'model-{k}' for k in range(1, 9)]
    csv_rows, json_rows, new_items = [], [], []
    metric_columns = [c for c in header if c not in ('scope', 'model', 'variation', 'language', 'notation')
                      and not c.startswith('n_') and c != 'coverage']
    for name in names:
        for r in base:
            row = list(r)
            row[header.index('model')] = name
            for c in metric_columns:
                cell = row[header.index(c)]
                if cell:
                    row[header.index(c)] = repr(RNG.uniform(0, 0.1))
            csv_rows.append(row)
        for r in summary['rows']:
            if r['model'] == 'ground-truth':
                json_rows.append(dict(r, model=name))
        for item in items:
            if item['model'] == 'ground-truth':
                new_items.append(dict(item, model=name, pre_mean=RNG.uniform(0, 0.1),
                                      path=os.path.abspath(os.path.join(src, item['path']))))
    summary['rows'] = json_rows
    os.makedirs(out)
    json.dump(summary, open(os.path.join(out, 'summary.json'), 'w'), indent=2)
    write_csv(os.path.join(out, 'summary.csv'), header, csv_rows)
    write_items(os.path.join(out, 'items.jsonl'), new_items)


def acva(out):
    src = os.path.join(FIXTURES, 'acva')
    summary = json.load(open(os.path.join(src, 'summary.json')))
    header, rows = read_csv(os.path.join(src, 'summary.csv'))
    models, csv_rows = [], []
    for k in range(6):
        m = copy.deepcopy(summary['models'][k % len(summary['models'])])
        m['model'] = f'acva-model-{k + 1}'
        m['pass_rate'] = jitter(m['pass_rate'])
        for c in m['by_category'].values():
            c['pass_rate'] = jitter(c['pass_rate'])
        models.append(m)
        row = list(rows[k % len(rows)])
        row[header.index('model')] = m['model']
        row[header.index('pass_rate')] = repr(m['pass_rate'])
        csv_rows.append(row)
    summary['models'] = models
    os.makedirs(out)
    json.dump(summary, open(os.path.join(out, 'summary.json'), 'w'), indent=2)
    write_csv(os.path.join(out, 'summary.csv'), header, csv_rows)
    shutil.copy(os.path.join(src, 'items.jsonl'), os.path.join(out, 'items.jsonl'))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    if os.path.exists(out):
        shutil.rmtree(out)
    hues(os.path.join(out, 'hues'))
    violin(os.path.join(out, 'violin'))
    acva(os.path.join(out, 'acva'))


if __name__ == '__main__':
    main()
