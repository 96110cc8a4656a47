#!/usr/bin/env python3
"""Regenerates data/hues/model_catalog.csv, the model-family catalog of the 162 published Hues and Cues models.

Usage: scripts/hues_model_catalog.py OPEN_CLIP_PRETRAINED_PY PEER_RESULTS_DIR > data/hues/model_catalog.csv

OPEN_CLIP_PRETRAINED_PY is open_clip's src/open_clip/pretrained.py (mlfoundations/open_clip), PEER_RESULTS_DIR the
Results/ folder of Jorgvt/HuesAndCues, whose sub-folders are the published model names "<model>-<pretrained>".
Each name is split into open_clip's (model, pretrained) pair by matching it against open_clip's pretrained list
(every published name matches exactly one pair), then the families follow from the rules below (docs/hues.md,
"Model-family catalog"). Needs only the Python standard library: pretrained.py is parsed, never imported.
"""
import ast
import csv
import os
import re
import sys

# (pattern on the open_clip model name, architecture family); the first match wins. A family is a model line,
# whatever its version: EVA01 and EVA02 are EVA-CLIP, SigLIP2 is SigLIP, MobileCLIP2 is MobileCLIP (the paper's one
# checkable family figure, MobileCLIP on Mineral words, Mahalanobis 0.036, is the mean over all 10 MobileCLIP and
# MobileCLIP2 models; docs/reproduction.md).
ARCHITECTURE_RULES = [
    (r"^RN\d", "ResNet"),
    (r"^convnext_", "ConvNeXt"),
    (r"^coca_", "CoCa"),
    (r"^EVA0", "EVA-CLIP"),
    (r"^MobileCLIP", "MobileCLIP"),
    (r"^PE-Core-", "PE-Core"),
    (r"^ViTamin-", "ViTamin"),
    (r"^nllb-clip-", "NLLB-CLIP"),
    (r"SigLIP", "SigLIP"),
    (r"CLIPA", "CLIPA"),
    (r"roberta-", "ViT+RoBERTa"),
    (r"^ViT-", "ViT"),
]

# (pattern on the open_clip pretrained tag, dataset family); the first match wins.
DATASET_RULES = [
    (r"^openai$", "OpenAI-WIT"),
    (r"^yfcc15m$", "YFCC15M"),
    (r"^cc12m$", "CC12M"),
    (r"laion400m", "LAION-400M"),
    (r"laion_aesthetic", "LAION-Aesthetics"),
    (r"mscoco_finetuned", "LAION-2B+MSCOCO"),
    (r"laion2b|laion5b", "LAION-2B/5B"),
    (r"^commonpool_", "CommonPool"),
    (r"datacomp", "DataComp"),
    (r"^dfn", "DFN"),
    (r"metaclip", "MetaCLIP"),
    (r"^webli$", "WebLI"),
    (r"^meta$", "PE-Meta"),
    (r"^merged2b", "Merged-2B"),
    (r"^(v1|mrl)$", "LAION-COCO-NLLB"),
]


def pretrained_pairs(path):
    """The (model, pretrained tag) pairs of open_clip's _PRETRAINED table, read from the source text."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    tables = {}  # module-level `_NAME = dict(tag=..., ...)` assignments
    pretrained = None
    for node in tree.body:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            continue
        name = node.targets[0].id
        if isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "dict":
            tables[name] = [k.arg for k in node.value.keywords if k.arg]
        if name == "_PRETRAINED":
            pretrained = node.value
    pairs = []
    for key, value in zip(pretrained.keys, pretrained.values):
        model = ast.literal_eval(key)
        if isinstance(value, ast.Name):
            tags = tables[value.id]
        else:
            tags = [k.arg for k in value.keywords if k.arg]
        pairs += [(model, tag) for tag in tags]
    return pairs


def family(rules, text, what):
    for pattern, name in rules:
        if re.search(pattern, text):
            return name
    sys.exit(f"no {what} rule matches {text!r}")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    by_name = {}
    for model, tag in pretrained_pairs(sys.argv[1]):
        by_name.setdefault(f"{model}-{tag}", []).append((model, tag))
    names = sorted(d for d in os.listdir(sys.argv[2]) if os.path.isfile(os.path.join(sys.argv[2], d, "results.csv")))
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["model", "architecture", "dataset", "open_clip_model", "pretrained"])
    for name in names:
        matches = by_name.get(name, [])
        if len(matches) != 1:
            sys.exit(f"{name}: {len(matches)} open_clip (model, pretrained) pairs match, expected exactly 1")
        model, tag = matches[0]
        out.writerow([name, family(ARCHITECTURE_RULES, model, "architecture"), family(DATASET_RULES, tag, "dataset"),
                      model, tag])


if __name__ == "__main__":
    main()
