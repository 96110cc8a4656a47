#!/usr/bin/env python3
"""Regenerates data/clip/open_clip_model_configs.json: the OpenCLIP model configs of the catalog's architectures.

Usage: scripts/open_clip_model_configs.py OPEN_CLIP_MODEL_CONFIGS_DIR data/hues/model_catalog.csv \
           > data/clip/open_clip_model_configs.json

OPEN_CLIP_MODEL_CONFIGS_DIR is open_clip's src/open_clip/model_configs/ (mlfoundations/open_clip, the commit the
catalog was made from). For every distinct `open_clip_model` of the catalog, its <name>.json is included unchanged
(a bare model_cfg), so `visalign hues models` can decide native support with the same parser that loads a model
folder. Needs only the Python standard library.
"""
import csv
import json
import os
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    configs_dir, catalog = sys.argv[1], sys.argv[2]
    with open(catalog, encoding="utf-8", newline="") as f:
        names = sorted({row["open_clip_model"] for row in csv.DictReader(f)})
    configs = {}
    for name in names:
        with open(os.path.join(configs_dir, name + ".json"), encoding="utf-8") as f:
            configs[name] = json.load(f)
    json.dump({"source": "mlfoundations/open_clip src/open_clip/model_configs (MIT License, data/clip/LICENSE)",
               "configs": configs}, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
