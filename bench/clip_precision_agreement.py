#!/usr/bin/python3
"""How much --precision bf16 / bf16x3 change Hues and Cues results: top-5 cells per word vs fp32.

For each model directory, runs `visalign hues run --nonsense` (116 words, 480 cells) once per
precision (board cache off, so each computes the board with its own precision) and reports, for each
reduced precision, the share of words whose top-5 cells are identical to fp32's (as a set, and in the
same order), and the cosine distance of its word embeddings to fp32's (`clip embed`).

Run: bench/clip_precision_agreement.py --visalign build/visalign MODEL_DIR [MODEL_DIR ...]
On a CPU without AVX512_BF16/AMX it says so and exits 0 (bf16 is refused there).
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
TOP_K = 5
REDUCED = ("bf16", "bf16x3")


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"error: {' '.join(cmd[:6])} ... failed: {proc.stderr.strip()}")
    return proc.stdout


def top_cells(visalign, model, precision, out):
    run([visalign, "--json", "hues", "run", "--clip-model", model, "--precision", precision, "--nonsense",
         "--no-cache", "--name", "m", "--out", str(out)])
    top = {}
    with open(out) as f:
        for line in f:
            record = json.loads(line)
            top[record["word"]] = [c["cell"] for c in record["top"]][:TOP_K]
    return top


def embeddings(visalign, model, precision, texts):
    args = sum((["--text", t] for t in texts), [])
    out = json.loads(run([visalign, "--json", "clip", "embed", "--clip-model", model, "--precision", precision] + args))
    return np.array([t["embedding"] for t in out["texts"]], dtype=np.float64)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--visalign", default=str(REPO / "build" / "visalign"))
    p.add_argument("models", nargs="+")
    args = p.parse_args()
    probe = subprocess.run([args.visalign, "clip", "info", "--clip-model", args.models[0], "--precision", "bf16"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        print(f"bf16: not available on this CPU ({probe.stderr.strip()})")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models:
            fp32 = top_cells(args.visalign, model, "fp32", Path(tmp) / "fp32.jsonl")
            a = embeddings(args.visalign, model, "fp32", sorted(fp32))
            for precision in REDUCED:
                low = top_cells(args.visalign, model, precision, Path(tmp) / f"{precision}.jsonl")
                words = sorted(fp32)
                same_set = sum(set(fp32[w]) == set(low[w]) for w in words)
                same_order = sum(fp32[w] == low[w] for w in words)
                b = embeddings(args.visalign, model, precision, words)
                dist = 1 - np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
                print(f"{model} {precision}: {len(words)} words; top-{TOP_K} cells identical as a set {same_set} "
                      f"({100 * same_set / len(words):.1f} %), in the same order {same_order} "
                      f"({100 * same_order / len(words):.1f} %); word embeddings vs fp32 cosine distance "
                      f"median {np.median(dist):.2e}, max {dist.max():.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
