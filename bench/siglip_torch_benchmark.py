#!/usr/bin/python3
"""PyTorch reference for bench/siglip_benchmark.cc: the SigLIP-B/16 image tower built from plain
torch.nn modules (the module graph of timm's vit_base_patch16_siglip_224: patch Conv2d with bias, pos_embed,
12 pre-LN blocks with fused qkv and exact GELU, final LayerNorm, AttentionPoolLatent MAP head), loaded from
the same safetensors the native benchmark wrote. It first checks its embeddings of the same 32-image batch
against the native ones (check.safetensors), then times batch 32 on VISALIGN_BENCH_THREADS threads (2).
Run after the native benchmark: /usr/bin/python3 bench/siglip_torch_benchmark.py [DIR]
(Debian's python3-torch: bench/setup_torch.sh)."""
import json, os, struct, sys, time
import numpy as np
import torch
from torch import nn

DIR = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("VISALIGN_BENCH_SIGLIP_DIR", "/tmp/visalign-siglip-b16-bench")
THREADS = int(os.environ.get("VISALIGN_BENCH_THREADS", "2"))
W, HEADS, LAYERS, MLP, PATCH, EPS = 768, 12, 12, 3072, 16, 1e-6


def read_safetensors(path):  # F32 tensors only (what visalign writes)
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    return {k: torch.from_numpy(np.frombuffer(data, np.float32, int(np.prod(v["shape"])), v["data_offsets"][0])
                                .reshape(v["shape"]).copy())
            for k, v in header.items() if k != "__metadata__"}


def attention(q, k, v):  # [B, H, Nq, d], [B, H, Nk, d]: softmax(q d^-1/2 kT) v
    return torch.softmax((q * q.shape[-1] ** -0.5) @ k.transpose(-2, -1), dim=-1) @ v


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(W, eps=EPS), nn.LayerNorm(W, eps=EPS)
        self.qkv, self.proj = nn.Linear(W, 3 * W), nn.Linear(W, W)
        self.fc1, self.fc2 = nn.Linear(W, MLP), nn.Linear(MLP, W)

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).reshape(b, n, 3, HEADS, W // HEADS).permute(2, 0, 3, 1, 4)
        x = x + self.proj(attention(q, k, v).transpose(1, 2).reshape(b, n, W))
        return x + self.fc2(nn.functional.gelu(self.fc1(self.norm2(x))))


class SiglipVision(nn.Module):
    def __init__(self, tokens):
        super().__init__()
        self.patch = nn.Conv2d(3, W, PATCH, PATCH)
        self.pos = nn.Parameter(torch.zeros(1, tokens, W))
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm = nn.LayerNorm(W, eps=EPS)
        self.latent = nn.Parameter(torch.zeros(1, 1, W))
        self.q, self.kv, self.pool_proj = nn.Linear(W, W), nn.Linear(W, 2 * W), nn.Linear(W, W)
        self.pool_norm = nn.LayerNorm(W, eps=EPS)
        self.pool_fc1, self.pool_fc2 = nn.Linear(W, MLP), nn.Linear(MLP, W)

    def forward(self, pixels):
        x = self.patch(pixels).flatten(2).transpose(1, 2) + self.pos
        for blk in self.blocks:
            x = blk(x)
        x = self.norm(x)
        b, n, _ = x.shape
        q = self.q(self.latent).reshape(1, 1, HEADS, W // HEADS).transpose(1, 2).expand(b, -1, -1, -1)
        k, v = self.kv(x).reshape(b, n, 2, HEADS, W // HEADS).permute(2, 0, 3, 1, 4)
        y = self.pool_proj(attention(q, k, v).transpose(1, 2).reshape(b, 1, W))
        y = y + self.pool_fc2(nn.functional.gelu(self.pool_fc1(self.pool_norm(y))))
        return y[:, 0]


def load(weights):
    t = "visual.trunk."
    m = SiglipVision(weights[t + "pos_embed"].shape[1])
    names = {"patch.weight": "patch_embed.proj.weight", "patch.bias": "patch_embed.proj.bias", "pos": "pos_embed",
             "norm.weight": "norm.weight", "norm.bias": "norm.bias", "latent": "attn_pool.latent"}
    for ours, theirs in [("q", "q"), ("kv", "kv"), ("pool_proj", "proj"), ("pool_norm", "norm"),
                         ("pool_fc1", "mlp.fc1"), ("pool_fc2", "mlp.fc2")]:
        for p in ("weight", "bias"):
            names[f"{ours}.{p}"] = f"attn_pool.{theirs}.{p}"
    for i in range(LAYERS):
        for ours, theirs in [("norm1", "norm1"), ("qkv", "attn.qkv"), ("proj", "attn.proj"), ("norm2", "norm2"),
                             ("fc1", "mlp.fc1"), ("fc2", "mlp.fc2")]:
            for p in ("weight", "bias"):
                names[f"blocks.{i}.{ours}.{p}"] = f"blocks.{i}.{theirs}.{p}"
    m.load_state_dict({ours: weights[t + theirs] for ours, theirs in names.items()}, strict=True)
    return m.eval()


def main():
    torch.set_num_threads(THREADS)
    model = load(read_safetensors(os.path.join(DIR, "open_clip_model.safetensors")))
    check = read_safetensors(os.path.join(DIR, "check.safetensors"))
    pixels = check["pixels"].reshape(-1, 3, 224, 224)
    with torch.inference_mode():
        out = model(pixels)
        native = check["embeddings"]
        diff = (out - native).abs().max().item()
        ndiff = (nn.functional.normalize(out, dim=-1) - nn.functional.normalize(native, dim=-1)).abs().max().item()
        print(f"max |torch - native|: unnormalised {diff:.3g}, normalised {ndiff:.3g}")
        if ndiff > 1e-4:
            sys.exit("outputs differ: not timing")
        times = []
        deadline = time.perf_counter() + 30
        while time.perf_counter() < deadline or len(times) < 3:
            start = time.perf_counter()
            model(pixels)
            times.append(time.perf_counter() - start)
    batch = pixels.shape[0]
    print(f"torch {torch.__version__}, {THREADS} threads, batch {batch}: {len(times)} runs, "
          f"median {np.median(times) * 1e3:.0f} ms = {batch / np.median(times):.2f} images/s "
          f"(best {batch / min(times):.2f})")


if __name__ == "__main__":
    main()
