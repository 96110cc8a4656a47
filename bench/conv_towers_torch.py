#!/usr/bin/python3
"""Plain-PyTorch reference for the convolutional CLIP image towers (docs/performance.md).

Builds OpenCLIP's ModifiedResNet and timm's ConvNeXt, ViTamin, FastViT MCi (MobileCLIP-S, in the un-fused
training-time form OpenCLIP runs it) and MCi ViT (MobileCLIP-B) as OpenCLIP's TimmModel wraps them,
from torch.nn building blocks (bench/torch_towers/, a module per tower family), loads the `visual.*`
tensors of a visalign model directory (for example `visalign clip random-model --arch RN50`), checks
that its image embeddings match `visalign clip embed` on a few PNGs, then times batch-32 image embeddings on N threads (wall
clock and process CPU time: on a shared machine images per CPU-second is the comparable figure).
Needs Debian's python3-torch, python3-numpy and python3-pil (bench/setup_torch.sh); not run by the tests.

  bench/conv_towers_torch.py --visalign build/src/cli/visalign --model models/RN50 [--threads 2]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
from PIL import Image
from torch import nn

from torch_towers.common import read_safetensors
from torch_towers.convnext import TIMM_CONVNEXT, ConvNeXtTower
from torch_towers.mobileclip import FastVitTrunk, MciVitTrunk
from torch_towers.resnet import ModifiedResNet
from torch_towers.vitamin import VitaminTower


class TimmTower(nn.Module):
    def __init__(self, trunk):
        super().__init__()
        self.trunk = trunk

    def forward(self, x):
        return self.trunk(x)


def build_tower(model_dir):
    cfg = json.load(open(os.path.join(model_dir, "open_clip_config.json")))
    m, v = cfg["model_cfg"], cfg["model_cfg"]["vision_cfg"]
    kwargs = v.get("timm_model_kwargs") or {}
    if v.get("timm_model_name", "").startswith("fastvit_mci"):
        tower = TimmTower(FastVitTrunk(v["timm_model_name"], kwargs, m["embed_dim"]))
    elif v.get("timm_model_name") == "vit_base_mci_224":
        tower = TimmTower(MciVitTrunk(kwargs, m["embed_dim"]))
    elif v.get("timm_model_name", "").startswith("vitamin"):
        tower = VitaminTower(v["timm_model_name"], v.get("timm_model_kwargs") or {}, v["image_size"], m["embed_dim"])
    elif "timm_model_name" in v:
        depths, dims = TIMM_CONVNEXT[v["timm_model_name"]]
        if v.get("timm_proj", "linear") != "linear" or v.get("timm_proj_bias"):
            sys.exit("only timm_proj linear without bias is built here")
        tower = ConvNeXtTower(kwargs.get("depths", depths), kwargs.get("dims", dims), 1e-6, m["embed_dim"])
    else:
        width = v.get("width", 64)
        tower = ModifiedResNet(v["layers"], width, width * 32 // v.get("head_width", 64), v["image_size"], m["embed_dim"])
    weights = [f for f in ("open_clip_model.safetensors", "model.safetensors") if os.path.exists(os.path.join(model_dir, f))][0]
    state = read_safetensors(os.path.join(model_dir, weights), "visual.")
    tower.load_state_dict(state, strict=True)
    return tower.eval(), cfg


def check_against_native(tower, cfg, visalign, model_dir, images=4):
    size = cfg["preprocess_cfg"]["size"]
    pre = cfg["preprocess_cfg"]
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        paths, pixels = [], []
        for i in range(images):
            rgb = rng.integers(0, 256, size=(size, size, 3), dtype=np.uint8)
            paths.append(os.path.join(tmp, f"img{i}.png"))
            Image.fromarray(rgb).save(paths[-1])
            x = (rgb.astype(np.float32) / 255.0 - np.array(pre["mean"], np.float32)) / np.array(pre["std"], np.float32)
            pixels.append(x.transpose(2, 0, 1))
        cmd = [visalign, "clip", "embed", "--clip-model", model_dir, "--json"]
        for p in paths:
            cmd += ["--image", p]
        native = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    ours = np.array([im["embedding"] for im in native["images"]], np.float32)
    with torch.no_grad():
        ref = tower(torch.from_numpy(np.stack(pixels))).numpy()
    unit = lambda a: a / np.linalg.norm(a, axis=1, keepdims=True)
    return float(np.abs(unit(ours) - unit(ref)).max()), float(np.abs(ours - ref).max() / np.abs(ref).max())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="visalign model directory (OpenCLIP layout)")
    ap.add_argument("--visalign", required=True, help="the visalign binary, for the parity check")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    tower, cfg = build_tower(a.model)
    normalized, relative = check_against_native(tower, cfg, a.visalign, a.model)
    size = cfg["preprocess_cfg"]["size"]
    x = torch.randn(a.batch, 3, size, size, generator=torch.Generator().manual_seed(1))
    times, cpu = [], []
    with torch.no_grad():
        tower(x)  # warm-up
        for _ in range(a.repeats):
            start, start_cpu = time.perf_counter(), time.process_time()
            tower(x)
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
    best = min(times)
    print(json.dumps({"model": a.model, "torch": torch.__version__, "threads": a.threads, "batch": a.batch,
                      "parity_max_abs_normalized": normalized, "parity_max_rel_unnormalized": relative,
                      "seconds_per_batch": times, "cpu_seconds_per_batch": cpu, "images_per_s_best": a.batch / best,
                      "images_per_s_mean": a.batch * len(times) / sum(times)}, indent=2))
    if normalized > 1e-4:
        sys.exit(f"native and PyTorch embeddings differ (max |normalised difference| {normalized:.2e})")


if __name__ == "__main__":
    main()
