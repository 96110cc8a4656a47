#!/usr/bin/python3
"""visalign's native CLIP against PyTorch on the same CPU, threads, model file and inputs.

The PyTorch side is a plain torch.nn ViT CLIP written from the OpenCLIP architecture description
(pre-LN residual blocks, nn.MultiheadAttention with fused in_proj, exact GELU, class-token and
argmax-eot pooling, projections), loading the same safetensors file through a header parser of our
own (no open_clip, no safetensors package). It computes all context positions of every text, as
open_clip does. Before timing, its outputs are checked against `visalign clip embed` (normalised
embeddings within 1e-4).

Timed, interleaved (visalign, PyTorch, visalign, ...), best of --repeats:
  * images: --images 224x224 PNGs (varied content; 224² so that resizing is the identity and both
    sides see the same pixels), visalign as a whole `clip embed` process (load, decode, preprocess,
    JSON output included), PyTorch as the forward pass alone;
  * texts: a 100-caption mix (mean ~35 of 77 positions, 25 truncated) and the 116 Hues and Cues
    words (100 clues + 16 nonsense words; 1-3 tokens);
  * the fp32 GEMM ceiling: dnnl_sgemm on 2048x2048x2048 through ctypes (the oneDNN visalign uses);
  * --precision bf16 where the CPU has AVX512_BF16/AMX (else "not available on this CPU").

Set-up (once, needs root): bench/setup_torch.sh (Debian python3-torch, OpenBLAS as libblas.so.3).
Run: bench/clip_vs_pytorch.py --visalign build/visalign [--threads 2] [--repeats 3] [--model DIR]
Without --model a random-weight ViT-B-32 (`visalign clip random-model --arch ViT-B-32`) is written
to a temporary directory.
"""
import argparse
import csv
import ctypes
import json
import os
import platform
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MATCH_TOLERANCE = 1e-4  # normalised embeddings, visalign vs PyTorch (fp32)
GEMM_SIZE = 2048
IMAGE_SIZE = 224


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--visalign", default=str(REPO / "build" / "visalign"), help="visalign binary")
    p.add_argument("--model", help="OpenCLIP-layout model directory (default: random ViT-B-32 in a temp dir)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3, help="interleaved runs per measurement (best is reported)")
    p.add_argument("--images", type=int, default=32, help="images per batch")
    p.add_argument("--json", help="also write all figures to this file")
    return p.parse_args()


# ---- environment ------------------------------------------------------------------------------

def cpu_description():
    model, flags = "unknown", []
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and model == "unknown":
                model = line.split(":", 1)[1].strip()
            elif line.startswith("flags") and not flags:
                flags = line.split(":", 1)[1].split()
    wanted = ["avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8"]
    return model, [f for f in wanted if f in flags]


def blas_under_torch():
    """The BLAS library torch's process maps, and OpenBLAS's core type when it is OpenBLAS."""
    import torch  # noqa: F401  (loads libblas.so.3)
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1] if "/" in line else ""
            if "blas" in path.lower():
                libs.add(os.path.realpath(path))
    core = None
    for lib in sorted(libs):
        try:
            handle = ctypes.CDLL(lib)
            get_core = handle.openblas_get_corename
            get_core.restype = ctypes.c_char_p
            get_config = handle.openblas_get_config
            get_config.restype = ctypes.c_char_p
            core = f"{get_core().decode()} ({get_config().decode()})"
            break
        except (OSError, AttributeError):
            continue
    return sorted(libs), core


# ---- safetensors and the torch model ------------------------------------------------------------

def read_safetensors(path):
    import numpy as np
    import torch
    dtypes = {"F32": np.float32, "F16": np.float16, "F64": np.float64}
    with open(path, "rb") as f:
        (header_len,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(header_len))
        data = f.read()
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        if info["dtype"] == "BF16":
            raw = np.frombuffer(data[begin:end], dtype=np.uint16).astype(np.uint32) << 16
            values = raw.view(np.float32)
        else:
            values = np.frombuffer(data[begin:end], dtype=dtypes[info["dtype"]]).astype(np.float32)
        tensors[name] = torch.from_numpy(values.reshape(info["shape"]).copy())
    return tensors


def build_torch_clip(model_dir):
    import torch
    from torch import nn

    cfg = json.loads((Path(model_dir) / "open_clip_config.json").read_text())["model_cfg"]
    v, t = cfg["vision_cfg"], cfg["text_cfg"]
    act = nn.GELU if not cfg.get("quick_gelu", False) else None
    if act is None:
        raise SystemExit("error: quick_gelu models are not supported by this benchmark (model_cfg.quick_gelu)")

    class Block(nn.Module):
        def __init__(self, width, heads, mlp):
            super().__init__()
            self.ln_1 = nn.LayerNorm(width)
            self.attn = nn.MultiheadAttention(width, heads)
            self.ln_2 = nn.LayerNorm(width)
            self.mlp = nn.Sequential()
            self.mlp.add_module("c_fc", nn.Linear(width, mlp))
            self.mlp.add_module("gelu", act())
            self.mlp.add_module("c_proj", nn.Linear(mlp, width))

        def forward(self, x, mask=None):  # x: [L, N, D], as open_clip's nn.MultiheadAttention layout
            h = self.ln_1(x)
            x = x + self.attn(h, h, h, need_weights=False, attn_mask=mask)[0]
            return x + self.mlp(self.ln_2(x))

    class Transformer(nn.Module):
        def __init__(self, width, layers, heads, mlp):
            super().__init__()
            self.resblocks = nn.ModuleList([Block(width, heads, mlp) for _ in range(layers)])

        def forward(self, x, mask=None):
            for b in self.resblocks:
                x = b(x, mask)
            return x

    class Clip(nn.Module):
        def __init__(self):
            super().__init__()
            vw, tw = v["width"], t["width"]
            patch, size = v["patch_size"], v["image_size"]
            grid = size // patch
            self.visual = nn.Module()
            self.visual.conv1 = nn.Conv2d(3, vw, patch, patch, bias=False)
            self.visual.class_embedding = nn.Parameter(torch.empty(vw))
            self.visual.positional_embedding = nn.Parameter(torch.empty(grid * grid + 1, vw))
            self.visual.ln_pre = nn.LayerNorm(vw)
            self.visual.transformer = Transformer(vw, v["layers"], v.get("heads", vw // v.get("head_width", 64)),
                                                  int(vw * v.get("mlp_ratio", 4.0)))
            self.visual.ln_post = nn.LayerNorm(vw)
            self.visual.proj = nn.Parameter(torch.empty(vw, cfg["embed_dim"]))
            self.token_embedding = nn.Embedding(t["vocab_size"], tw)
            self.positional_embedding = nn.Parameter(torch.empty(t["context_length"], tw))
            self.transformer = Transformer(tw, t["layers"], t["heads"], int(tw * t.get("mlp_ratio", 4.0)))
            self.ln_final = nn.LayerNorm(tw)
            self.text_projection = nn.Parameter(torch.empty(tw, cfg["embed_dim"]))
            self.logit_scale = nn.Parameter(torch.empty(()))
            ctx = t["context_length"]
            self.register_buffer("attn_mask", torch.full((ctx, ctx), float("-inf")).triu(1), persistent=False)

        def encode_image(self, pixels):
            x = self.visual.conv1(pixels).flatten(2).transpose(1, 2)  # [N, grid², width]
            cls = self.visual.class_embedding.expand(x.shape[0], 1, -1)
            x = torch.cat([cls, x], dim=1) + self.visual.positional_embedding
            x = self.visual.ln_pre(x).transpose(0, 1)
            x = self.visual.transformer(x).transpose(0, 1)
            return self.visual.ln_post(x[:, 0]) @ self.visual.proj

        def encode_text(self, ids):  # ids: [N, context], all positions computed (as open_clip)
            x = (self.token_embedding(ids) + self.positional_embedding).transpose(0, 1)
            x = self.transformer(x, self.attn_mask).transpose(0, 1)
            x = self.ln_final(x)
            return x[torch.arange(x.shape[0]), ids.argmax(dim=-1)] @ self.text_projection

    model = Clip()
    weights = read_safetensors(Path(model_dir) / "open_clip_model.safetensors")
    missing, unexpected = model.load_state_dict(weights, strict=False)
    if missing or unexpected:
        raise SystemExit(f"error: the torch model and {model_dir} disagree: missing {missing[:3]}, "
                         f"unexpected {unexpected[:3]}")
    model.eval()
    return model, cfg


# ---- inputs -------------------------------------------------------------------------------------

CAPTION_WORDS = ("a photo of the red green blue small large old young man woman dog cat street city tree "
                 "river mountain sky sunset bright dark light wooden table chair window house car bicycle "
                 "with and on in under near beside holding wearing colorful striped pale deep warm cold "
                 "morning evening garden kitchen beach forest field flowers painting sculpture").split()


def caption_mix():
    """100 captions: 25 longer than the context (truncated to 77), 75 of 4-40 words (mean ~35 of 77)."""
    texts, state = [], 20240501
    for i in range(100):
        state = (state * 1103515245 + 12345) % (1 << 31)
        words = 90 if i % 4 == 0 else 4 + state % 37
        picked = [CAPTION_WORDS[(state // 7 + k * 13) % len(CAPTION_WORDS)] for k in range(words)]
        texts.append(" ".join(picked))
    return texts


def hues_words():
    with open(REPO / "data" / "hues" / "words.csv", newline="") as f:
        words = [row["word_en"].lower() for row in csv.DictReader(f)]
    with open(REPO / "data" / "hues" / "nonsense16.csv", newline="") as f:
        words += [row["word"] for row in csv.DictReader(f)]
    return words


def write_images(directory, count):
    import numpy as np
    from PIL import Image
    paths = []
    yy, xx = np.mgrid[0:IMAGE_SIZE, 0:IMAGE_SIZE].astype(np.float32) / IMAGE_SIZE
    for i in range(count):
        phase = i * 0.37
        r = 0.5 + 0.5 * np.sin(6.28 * (xx * (1 + i % 5) + phase))
        g = 0.5 + 0.5 * np.cos(6.28 * (yy * (1 + i % 3) - phase))
        b = (xx * yy * (i + 1)) % 1.0
        rgb = (np.stack([r, g, b], axis=-1) * 255).round().astype(np.uint8)
        path = Path(directory) / f"img_{i:03d}.png"
        Image.fromarray(rgb).save(path)
        paths.append(str(path))
    return paths


def pixels_for(paths, preprocess):
    import numpy as np
    import torch
    from PIL import Image
    mean = np.array(preprocess["mean"], dtype=np.float32).reshape(3, 1, 1)
    std = np.array(preprocess["std"], dtype=np.float32).reshape(3, 1, 1)
    rows = []
    for p in paths:
        x = np.asarray(Image.open(p).convert("RGB"), dtype=np.float32).transpose(2, 0, 1) / np.float32(255)
        rows.append((x - mean) / std)
    return torch.from_numpy(np.stack(rows))


# ---- running visalign ---------------------------------------------------------------------------

def run_visalign(args, model_dir, extra, precision="fp32"):
    """One whole `visalign clip embed` process: (wall seconds, max RSS MB, parsed JSON). The RSS comes
    from /usr/bin/time: a child forked from this (large) Python process would inherit its high-water mark."""
    cmd = [args.visalign, "--threads", str(args.threads), "--json", "clip", "embed", "--clip-model", model_dir,
           "--precision", precision] + extra
    with tempfile.NamedTemporaryFile("r") as rss:
        start = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss.name] + cmd, capture_output=True)
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"error: {' '.join(cmd[:8])} ... failed ({proc.returncode}): {proc.stderr.decode().strip()}")
        return wall, int(rss.read().split()[-1]) / 1024, json.loads(proc.stdout)


def token_ids(args, texts, context):
    import torch
    rows = []
    for t in texts:
        out = subprocess.run([args.visalign, "--json", "clip", "tokenize", t, "--context-length", str(context)],
                             check=True, capture_output=True, text=True).stdout
        ids = json.loads(out)["ids"]
        rows.append(ids + [0] * (context - len(ids)))
    return torch.tensor(rows, dtype=torch.long)


def embeddings(result, kind):
    import numpy as np
    return np.array([item["embedding"] for item in result[kind]], dtype=np.float64)


def normalized(m):
    import numpy as np
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def cosine_distances(a, b):
    import numpy as np
    return 1.0 - np.sum(normalized(a) * normalized(b), axis=1)


def gemm_ceiling(threads, repeats):
    """Best GFLOPS of dnnl_sgemm on a GEMM_SIZE³ problem (oneDNN's OpenMP threads = `threads`)."""
    import numpy as np
    lib = ctypes.CDLL("libdnnl.so.2")
    f = ctypes.c_float
    i64 = ctypes.c_int64
    p = ctypes.POINTER(ctypes.c_float)
    lib.dnnl_sgemm.argtypes = [ctypes.c_char, ctypes.c_char, i64, i64, i64, f, p, i64, p, i64, f, p, i64]
    n = GEMM_SIZE
    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    c = np.zeros((n, n), dtype=np.float32)
    ptr = lambda x: x.ctypes.data_as(p)  # noqa: E731
    best = float("inf")
    for _ in range(repeats + 1):  # the first call warms up (JIT, page faults)
        start = time.perf_counter()
        lib.dnnl_sgemm(b"N", b"N", n, n, n, 1.0, ptr(a), n, ptr(b), n, 0.0, ptr(c), n)
        best = min(best, time.perf_counter() - start)
    return 2.0 * n ** 3 / best / 1e9


def main():
    args = parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)  # oneDNN (ctypes) and torch's OpenMP
    os.environ.setdefault("OPENBLAS_NUM_THREADS", str(args.threads))
    # OpenBLAS 0.3.21's run-time detection falls back to its SSE3 "Prescott" kernels on this
    # Xeon once torch is loaded; name the AVX-512 (or AVX2) kernels explicitly.
    _, cpu_flags = cpu_description()
    os.environ.setdefault("OPENBLAS_CORETYPE", "SkylakeX" if "avx512f" in cpu_flags else "Haswell")
    import numpy as np
    import torch
    torch.set_num_threads(args.threads)
    torch.set_grad_enabled(False)

    cpu, flags = cpu_description()
    blas_libs, blas_core = blas_under_torch()
    load1, load5, load15 = os.getloadavg()
    print(f"CPU: {cpu}; flags: {' '.join(flags)}; {os.cpu_count()} CPUs; threads {args.threads}")
    print(f"load average at start: {load1:.2f} {load5:.2f} {load15:.2f}")
    print(f"torch {torch.__version__} (Python {platform.python_version()}); BLAS under torch: "
          f"{', '.join(blas_libs) or 'none mapped'}; OpenBLAS core: {blas_core or 'not OpenBLAS'}")
    if not blas_core or blas_core.startswith("Prescott"):
        print("warning: torch is not on OpenBLAS with AVX2/AVX-512 kernels (run bench/setup_torch.sh): its numbers are not representative")

    tmp = tempfile.TemporaryDirectory(prefix="visalign_vs_torch_")
    model_dir = args.model
    if model_dir is None:
        model_dir = str(Path(tmp.name) / "vit-b-32")
        subprocess.run([args.visalign, "clip", "random-model", "--arch", "ViT-B-32", "--out", model_dir], check=True,
                       stdout=subprocess.DEVNULL)
    torch_model, cfg = build_torch_clip(model_dir)
    preprocess = json.loads((Path(model_dir) / "open_clip_config.json").read_text())["preprocess_cfg"]
    if cfg["vision_cfg"]["image_size"] != IMAGE_SIZE:
        raise SystemExit(f"error: model image_size {cfg['vision_cfg']['image_size']} (expected {IMAGE_SIZE})")
    image_paths = write_images(tmp.name, args.images)
    pixels = pixels_for(image_paths, preprocess)
    context = cfg["text_cfg"]["context_length"]
    sets = {"captions": caption_mix(), "hues words": hues_words()}
    ids = {name: token_ids(args, texts, context) for name, texts in sets.items()}
    for name, t in ids.items():
        positions = (t.argmax(dim=1) + 1).float()
        print(f"{name}: {len(t)} texts, mean {positions.mean():.1f} of {context} positions, "
              f"{int((positions == context).sum())} at the full context")

    # 1. Same outputs first.
    image_args = sum((["--image", p] for p in image_paths), [])
    _, _, vis_images = run_visalign(args, model_dir, image_args)
    ref_images = torch_model.encode_image(pixels).double().numpy()
    diff = float(np.max(np.abs(normalized(embeddings(vis_images, "images")) - normalized(ref_images))))
    text_args = {name: sum((["--text", t] for t in texts), []) for name, texts in sets.items()}
    vis_texts = {name: run_visalign(args, model_dir, a)[2] for name, a in text_args.items()}
    for name in sets:
        ref = torch_model.encode_text(ids[name]).double().numpy()
        diff = max(diff, float(np.max(np.abs(normalized(embeddings(vis_texts[name], "texts")) - normalized(ref)))))
    print(f"outputs: visalign vs torch.nn, max |difference| of normalised embeddings {diff:.2e} "
          f"(tolerance {MATCH_TOLERANCE:g})")
    if diff > MATCH_TOLERANCE:
        raise SystemExit("error: outputs differ; timings would compare different computations")

    bf16 = subprocess.run([args.visalign, "clip", "info", "--clip-model", model_dir, "--precision", "bf16"],
                          capture_output=True, text=True)
    bf16_ok = bf16.returncode == 0
    bf16_note = "" if bf16_ok else bf16.stderr.strip().splitlines()[-1]

    # 2. Timings, interleaved.
    results = {"cpu": cpu, "flags": flags, "threads": args.threads, "blas": blas_libs, "openblas_core": blas_core,
               "torch": torch.__version__, "load_average_start": [load1, load5, load15], "max_abs_diff": diff}
    work = [("images", image_args, lambda: torch_model.encode_image(pixels), args.images)]
    work += [(name, text_args[name], (lambda t=ids[name]: torch_model.encode_text(t)), len(sets[name])) for name in sets]
    ceiling = 0.0
    bf16_embeddings = {}
    for name, vis_args, torch_fn, count in work:
        best = {"visalign fp32": float("inf"), "torch fp32": float("inf"), "visalign bf16": float("inf")}
        rss = {}
        torch_fn()  # warm-up
        for _ in range(args.repeats):
            wall, rss["visalign fp32"], _ = run_visalign(args, model_dir, vis_args)
            best["visalign fp32"] = min(best["visalign fp32"], wall)
            start = time.perf_counter()
            torch_fn()
            best["torch fp32"] = min(best["torch fp32"], time.perf_counter() - start)
            if bf16_ok:
                wall, rss["visalign bf16"], out = run_visalign(args, model_dir, vis_args, "bf16")
                best["visalign bf16"] = min(best["visalign bf16"], wall)
                bf16_embeddings[name] = out
            ceiling = max(ceiling, gemm_ceiling(args.threads, 1))
        rate = {k: count / v for k, v in best.items() if v != float("inf")}
        line = (f"{name:11s} x{count}: visalign fp32 {rate['visalign fp32']:7.1f}/s, torch fp32 {rate['torch fp32']:7.1f}/s "
                f"-> {rate['visalign fp32'] / rate['torch fp32']:.2f}x")
        if bf16_ok:
            line += (f"; visalign bf16 {rate['visalign bf16']:7.1f}/s -> "
                     f"{rate['visalign bf16'] / rate['torch fp32']:.2f}x torch fp32")
        else:
            line += "; bf16: not available on this CPU"
        print(line + "; max RSS " + ", ".join(f"{k} {v:.0f} MB" for k, v in rss.items()))
        results[name] = {"count": count, "per_second": rate, "max_rss_mb": rss,
                         "best_seconds": {k: v for k, v in best.items() if v != float("inf")}}
    v = cfg["vision_cfg"]
    tokens = (v["image_size"] // v["patch_size"]) ** 2 + 1
    w = v["width"]
    image_gflop = (v["layers"] * (2.0 * tokens * 12 * w * w + 4.0 * tokens * tokens * w)
                   + 2.0 * (tokens - 1) * w * 3 * v["patch_size"] ** 2 + 2.0 * w * cfg["embed_dim"]) / 1e9
    img_rate = results["images"]["per_second"]["visalign fp32"]
    print(f"fp32 GEMM ceiling (dnnl_sgemm {GEMM_SIZE}³, {args.threads} threads, best): {ceiling:.0f} GFLOPS; "
          f"visalign images {img_rate * image_gflop:.0f} GFLOPS = {100 * img_rate * image_gflop / ceiling:.0f} % "
          f"of it ({image_gflop:.2f} GFLOP per image, whole process)")
    results["gemm_ceiling_gflops"] = ceiling
    results["image_gflop"] = image_gflop

    # 3. bf16 accuracy: cosine distance to visalign fp32, per item.
    if bf16_ok:
        dist = np.concatenate([cosine_distances(embeddings(bf16_embeddings["images"], "images"),
                                                embeddings(vis_images, "images"))] +
                              [cosine_distances(embeddings(bf16_embeddings[n], "texts"), embeddings(vis_texts[n], "texts"))
                               for n in sets])
        q = np.quantile(dist, [0.5, 0.9, 0.99, 1.0])
        print(f"bf16 vs fp32 cosine distance over {len(dist)} items: median {q[0]:.2e}, p90 {q[1]:.2e}, "
              f"p99 {q[2]:.2e}, max {q[3]:.2e} (bound 2e-3)")
        results["bf16_cosine_distance"] = {"median": q[0], "p90": q[1], "p99": q[2], "max": q[3]}
    else:
        print(f"bf16: not available on this CPU ({bf16_note})")
    load1, load5, load15 = os.getloadavg()
    print(f"load average at end: {load1:.2f} {load5:.2f} {load15:.2f}")
    results["load_average_end"] = [load1, load5, load15]
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=float))


if __name__ == "__main__":
    sys.exit(main())
