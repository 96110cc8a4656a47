#!/usr/bin/env python3
"""Results folders for the report's size and speed check (docs/performance.md, "Report"):
162 Hues and Cues models (and their nonsense baseline), 8 VIOLIN models and 6 ACVA models, made
from the fixture folders in tests/data/report/ by copying their models under new names with
deterministically perturbed numbers. The files keep the results contract's layout, so
`visalign report` reads them as it reads real outputs; the numbers mean nothing.

    bench/report_inputs.py OUT_DIR     -> OUT_DIR/{violin,hues,nonsense,acva}/
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
HUES_MODELS = [f'{a}-{d}' for a in ARCHS for d in DATASETS][:162]
RNG = random.Random(17)


def jitter(value, scale=0.15):
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return value
    return min(1.0, max(0.0, value * (1 + RNG.uniform(-scale, scale))))


def read_csv(path):
    with open(path, newline='') as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def read_items(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


class Folder:
    """A fixture results folder: summary.json, summary.csv's header and rows, items.jsonl."""

    def __init__(self, name):
        self.src = os.path.join(FIXTURES, name)
        with open(os.path.join(self.src, 'summary.json')) as f:
            self.summary = json.load(f)
        self.header, self.rows = read_csv(os.path.join(self.src, 'summary.csv'))
        self.items = read_items(os.path.join(self.src, 'items.jsonl'))

    def source(self, path):
        return os.path.abspath(os.path.join(self.src, path))

    def write(self, out):
        os.makedirs(out)
        with open(os.path.join(out, 'summary.json'), 'w') as f:
            json.dump(self.summary, f, indent=2)
        text = io.StringIO()
        csv.writer(text, lineterminator='\n').writerows([self.header] + self.rows)
        with open(os.path.join(out, 'summary.csv'), 'w') as f:
            f.write(text.getvalue())
        with open(os.path.join(out, 'items.jsonl'), 'w') as f:
            for item in self.items:
                f.write(json.dumps(item, separators=(',', ':')) + '\n')


def copy_models(folder, names, perturb, columns, items_per_model):
    """Replaces summary.json's models and summary.csv's rows by copies under `names` (copy k of
    the fixture's model k mod n): perturb(model) changes a copy's numbers, columns {column: f(model)}
    the cells of its summary.csv row; each copy gets the first items_per_model items, renamed."""
    models, rows, items = [], [], []
    for k, name in enumerate(names):
        model = copy.deepcopy(folder.summary['models'][k % len(folder.summary['models'])])
        model['model'] = name
        perturb(model)
        models.append(model)
        row = list(folder.rows[k % len(folder.rows)])
        row[folder.header.index('model')] = name
        for column, cell in columns.items():
            row[folder.header.index(column)] = cell(model)
        rows.append(row)
        items += [dict(item, model=name) for item in folder.items[:items_per_model]]
    folder.summary['models'], folder.rows, folder.items = models, rows, items


def hues(out):
    folder = Folder('hues')

    def perturb(m):
        for key in ('mahalanobis', 'hotelling'):
            m[key]['fail_rate'] = jitter(m[key]['fail_rate'])
        for c in m['categories']:
            c['mahalanobis_fail_rate'] = jitter(c['mahalanobis_fail_rate'])
            c['hotelling_fail_rate'] = jitter(c['hotelling_fail_rate'])

    copy_models(folder, HUES_MODELS, perturb,
                {'mahalanobis_fail_rate': lambda m: repr(m['mahalanobis']['fail_rate']),
                 'hotelling_fail_rate': lambda m: repr(m['hotelling']['fail_rate'])}, 100)
    # Inputs as absolute paths (the fixture's are relative to its folder); every model reads one of
    # the fixture's prediction files, so the board figures draw 162 models' top 5.
    inputs = folder.summary['inputs']
    for key in ('humans', 'humans_exclusions', 'macro_map'):
        if 'path' in inputs.get(key, {}):
            inputs[key]['path'] = folder.source(inputs[key]['path'])
    files = [dict(p, path=folder.source(p['path'])) for p in inputs['predictions']]
    inputs['predictions'] = [dict(files[i % len(files)], model=name) for i, name in enumerate(HUES_MODELS)]
    folder.write(out)


def nonsense(out):
    folder = Folder('nonsense')
    copy_models(folder, HUES_MODELS, lambda m: m.update(entropy_bits=jitter(m['entropy_bits'] / 4) * 4),
                {'entropy_bits': lambda m: repr(m['entropy_bits'])}, 16)
    folder.write(out)


def violin(out):
    folder = Folder('violin')
    header = folder.header
    base = [r for r in folder.rows if r[header.index('model')] == 'ground-truth']
    metric_columns = [c for c in header if c not in ('scope', 'model', 'variation', 'language', 'notation')
                      and not c.startswith('n_') and c != 'coverage']
    rows, json_rows, items = [], [], []
    for name in [f'model-{k}' for k in range(1, 9)]:
        for r in base:
            row = list(r)
            row[header.index('model')] = name
            for c in metric_columns:
                if row[header.index(c)]:
                    row[header.index(c)] = repr(RNG.uniform(0, 0.1))
            rows.append(row)
        json_rows += [dict(r, model=name) for r in folder.summary['rows'] if r['model'] == 'ground-truth']
        items += [dict(item, model=name, pre_mean=RNG.uniform(0, 0.1), path=folder.source(item['path']))
                  for item in folder.items if item['model'] == 'ground-truth']
    folder.summary['rows'], folder.rows, folder.items = json_rows, rows, items
    folder.write(out)


def acva(out):
    folder = Folder('acva')

    def perturb(m):
        m['pass_rate'] = jitter(m['pass_rate'])
        for c in m['by_category'].values():
            c['pass_rate'] = jitter(c['pass_rate'])

    items = folder.items
    copy_models(folder, [f'acva-model-{k + 1}' for k in range(6)], perturb,
                {'pass_rate': lambda m: repr(m['pass_rate'])}, 0)
    folder.items = items  # the fixture's judged images, as written
    folder.write(out)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    if os.path.exists(out):
        shutil.rmtree(out)
    for name, make in (('hues', hues), ('nonsense', nonsense), ('violin', violin), ('acva', acva)):
        make(os.path.join(out, name))


if __name__ == '__main__':
    main()
