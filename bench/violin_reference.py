#!/usr/bin/python3
"""Independent Python reference for the VIOLIN evaluator (docs/metrics.md), written the way the
Python world computes these metrics: PIL decode, numpy, cv2.Canny, numpy.fft, scikit-image color.
It is deliberately literal and slow; visalign's C++ is checked against it (tests/violin_reference_test.cc)
and timed against it (docs/benchmarks.md, "VIOLIN evaluator vs a Python reference").

  violin_reference.py score IMAGE --target COLOR
  violin_reference.py score IMAGE --layout h2|v2|q4 --targets C1,C2[,C3,C4]
  violin_reference.py score IMAGE --fuzzy LOW,HIGH
      prints the JSON of `visalign violin score --json`:
      {"raw": {rgb_ed, ..., hf}, "norm": {..., sd_n, ced, hf}, "pre_mean", "pur_mean"}
  violin_reference.py batch CASES.jsonl
      each line a JSON array of `score` arguments; prints one score JSON per line (one process, so
      a test does not pay the interpreter and import start-up per image)
  violin_reference.py time DIR --target COLOR [--repeat N]
      read + decode + score of every *.png/*.jpg/*.jpeg in DIR on one thread; prints ms/image

COLOR is #RRGGBB, #RGB or rgb(R, G, B) with integers 0-255 (visalign also takes hsl() and names).
Inputs should be 8-bit: for 16-bit PNGs PIL keeps the high byte (v >> 8) where visalign rounds v/257,
and PIL clips 16-bit grayscale to 255, so such images differ by their decoding, not by the metrics.
Needs Debian's python3-numpy python3-pil python3-opencv python3-skimage; run with /usr/bin/python3.
"""
import os

# One thread everywhere, set before numpy/OpenCV load their thread pools.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import colorsys
import json
import math
import re
import statistics
import sys
import time
from pathlib import Path

APT_PACKAGES = "python3-numpy python3-pil python3-opencv python3-skimage"
try:
    import cv2
    import numpy as np
    import skimage.color
    from PIL import Image
except ImportError as error:
    sys.exit(f"error: {error} (violin_reference.py): the Debian packages {APT_PACKAGES} "
             f"(apt-get install -y {APT_PACKAGES}; run with /usr/bin/python3)")

cv2.setNumThreads(1)

# --- Normalisation maxima (docs/metrics.md) ------------------------------------------------------
PRECISION = ["rgb_ed", "rgb_rm", "de00", "hue", "chroma", "hyab"]
PURITY_RAW = ["sd", "ced", "hf"]
PURITY_NORM = ["sd_n", "ced", "hf"]
MAXIMUM = {
    "rgb_ed": 255 * math.sqrt(3),
    "rgb_rm": 255 * math.sqrt(8 + 255 / 256),
    "de00": 100.0,
    "hue": 180.0,
    "chroma": 260.0,
    "hyab": 360.0,
    "sd": 0.5,  # sd_n = min(1, 2 sd)
    "ced": 1.0,
    "hf": 1.0,
}
CANNY_LOW, CANNY_HIGH, CANNY_APERTURE = 100, 200, 3
HF_CUT = 0.25  # cycles/pixel, strictly greater counts as high frequency
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")


# --- Input --------------------------------------------------------------------------------------
def read_image(path):
    """8-bit RGB, alpha dropped (PIL's RGBA -> RGB conversion does not composite)."""
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"))


def parse_color(text):
    text = text.strip()
    match = re.fullmatch(r"#([0-9a-fA-F]{6})", text)
    if match:
        return np.array([int(match[1][i:i + 2], 16) for i in (0, 2, 4)], dtype=float)
    match = re.fullmatch(r"#([0-9a-fA-F]{3})", text)
    if match:
        return np.array([int(c * 2, 16) for c in match[1]], dtype=float)
    match = re.fullmatch(r"rgb\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)", text, re.IGNORECASE)
    if match and all(int(v) <= 255 for v in match.groups()):
        return np.array([int(v) for v in match.groups()], dtype=float)
    raise ValueError(f'invalid color "{text}": #RRGGBB, #RGB or rgb(R, G, B) with integers 0-255')


def split_colors(text):
    """'a,b,c' split at commas outside parentheses, so rgb(1, 2, 3) stays whole."""
    parts, depth = [""], 0
    for c in text:
        depth += (c == "(") - (c == ")")
        if c == "," and depth == 0:
            parts.append("")
        else:
            parts[-1] += c
    return [parse_color(p) for p in parts]


# --- Regions ------------------------------------------------------------------------------------
def blocks(image, layout):
    """The layout's blocks in order: h2 top, bottom; v2 left, right; q4 TL, TR, BL, BR."""
    h, w = image.shape[:2]
    hh, hw = h // 2, w // 2
    if layout == "single":
        return [image]
    if layout == "h2":
        return [image[:hh], image[hh:]]
    if layout == "v2":
        return [image[:, :hw], image[:, hw:]]
    if layout == "q4":
        return [image[:hh, :hw], image[:hh, hw:], image[hh:, :hw], image[hh:, hw:]]
    raise ValueError(f"unknown layout {layout}")


# --- Precision ----------------------------------------------------------------------------------
def lab(rgb255):
    return skimage.color.rgb2lab(np.asarray(rgb255, dtype=float).reshape(1, 1, 3) / 255.0).reshape(3)


def hue_degrees(lab_color):
    return math.degrees(math.atan2(lab_color[2], lab_color[1])) % 360.0


def precision(mean, target):
    d = mean - target
    r_bar = (mean[0] + target[0]) / 2
    lab_m, lab_t = lab(mean), lab(target)
    hue = abs(hue_degrees(lab_m) - hue_degrees(lab_t))
    chroma = math.sqrt((lab_m[1] - lab_t[1]) ** 2 + (lab_m[2] - lab_t[2]) ** 2)
    return {
        "rgb_ed": math.sqrt(d[0] ** 2 + d[1] ** 2 + d[2] ** 2),
        "rgb_rm": math.sqrt((2 + r_bar / 256) * d[0] ** 2 + 4 * d[1] ** 2 + (2 + (255 - r_bar) / 256) * d[2] ** 2),
        "de00": float(skimage.color.deltaE_ciede2000(lab_t, lab_m)),
        "hue": min(hue, 360.0 - hue),
        "chroma": chroma,
        "hyab": abs(lab_m[0] - lab_t[0]) + chroma,
    }


def hsl_point(rgb255):
    """HSL of a 0..255 color as (h/360, s, l)."""
    h, l, s = colorsys.rgb_to_hls(*(np.asarray(rgb255, dtype=float) / 255.0))
    return np.array([h, s, l])


def fuzzy_target(mean, low, high):
    v, lo, hi = hsl_point(mean), hsl_point(low), hsl_point(high)
    d = hi - lo
    norm_sq = float(d @ d)
    t = 0.0 if norm_sq == 0 else min(max(float((v - lo) @ d) / norm_sq, 0.0), 1.0)
    p = lo + t * d
    return 255.0 * np.array(colorsys.hls_to_rgb(p[0], p[2], p[1]))


# --- Purity -------------------------------------------------------------------------------------
def purity(region):
    pixels = region / 255.0
    sd = float(np.mean([pixels[..., c].std() for c in range(3)]))
    gray = cv2.cvtColor(np.ascontiguousarray(region), cv2.COLOR_RGB2GRAY)
    edges = cv2.Canny(gray, CANNY_LOW, CANNY_HIGH, apertureSize=CANNY_APERTURE, L2gradient=False)
    ced = np.count_nonzero(edges) / edges.size
    power = np.abs(np.fft.fft2(gray / 255.0)) ** 2
    fy, fx = np.fft.fftfreq(gray.shape[0]), np.fft.fftfreq(gray.shape[1])
    r = np.sqrt(fx[np.newaxis, :] ** 2 + fy[:, np.newaxis] ** 2)
    total = power.sum()
    hf = float(power[r > HF_CUT].sum() / total) if total > 0 else 0.0
    return {"sd": sd, "ced": ced, "hf": hf}


# --- Scoring ------------------------------------------------------------------------------------
def normalise(name, raw):
    return min(max(raw / MAXIMUM[name], 0.0), 1.0)


def score(image, layout, targets=None, fuzzy=None):
    parts = blocks(image, layout)
    if any(p.shape[0] == 0 or p.shape[1] == 0 for p in parts):
        raise ValueError(f"image {image.shape[1]}x{image.shape[0]} too small for layout {layout}")
    per_block = []
    for index, region in enumerate(parts):
        mean = region.reshape(-1, 3).mean(axis=0)
        target = fuzzy_target(mean, *fuzzy) if fuzzy else targets[index]
        per_block.append({**precision(mean, target), **purity(region)})
    # The image's values: means over blocks of the per-block raw and (clamped) normalised values.
    raw = {k: sum(b[k] for b in per_block) / len(parts) for k in PRECISION + PURITY_RAW}
    norm = {k: sum(normalise(k, b[k]) for b in per_block) / len(parts) for k in PRECISION + PURITY_RAW}
    norm_out = {k: norm[k] for k in PRECISION}
    norm_out.update({"sd_n": norm["sd"], "ced": norm["ced"], "hf": norm["hf"]})
    return {
        "raw": raw,
        "norm": norm_out,
        "pre_mean": sum(norm_out[k] for k in PRECISION) / len(PRECISION),
        "pur_mean": sum(norm_out[k] for k in PURITY_NORM) / len(PURITY_NORM),
    }


def target_args(parser):
    parser.add_argument("--target", help="target color of a single-color image")
    parser.add_argument("--layout", choices=["single", "h2", "v2", "q4"], help="block layout for --targets")
    parser.add_argument("--targets", help="block colors in layout order")
    parser.add_argument("--fuzzy", help="a stated range LOW,HIGH")


def target_spec(args):
    """(layout, targets, fuzzy) from exactly one of the three target forms."""
    forms = [args.target, args.targets, args.fuzzy]
    if sum(f is not None for f in forms) != 1:
        raise ValueError("exactly one of --target, --layout with --targets, --fuzzy")
    if args.target is not None:
        return "single", [parse_color(args.target)], None
    if args.targets is not None:
        layout = args.layout or "single"
        targets = split_colors(args.targets)
        if len(targets) != len(blocks(np.zeros((2, 2, 3)), layout)):
            raise ValueError(f"{len(targets)} colors for layout {layout}")
        return layout, targets, None
    fuzzy = split_colors(args.fuzzy)
    if len(fuzzy) != 2:
        raise ValueError("--fuzzy takes two colors LOW,HIGH")
    return "single", None, fuzzy


def score_args(argv):
    parser = argparse.ArgumentParser(prog="violin_reference.py score")
    parser.add_argument("image")
    target_args(parser)
    args = parser.parse_args(argv)
    return score(read_image(args.image), *target_spec(args))


# --- Timing -------------------------------------------------------------------------------------
def time_directory(args):
    files = sorted(p for p in Path(args.dir).iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    if not files:
        raise ValueError(f"no {'/'.join(IMAGE_SUFFIXES)} files in {args.dir}")
    spec = target_spec(args)
    score(read_image(files[0]), *spec)  # warm-up: first-call costs of numpy/OpenCV/skimage
    passes = []
    for _ in range(args.repeat):
        decode = metrics = 0.0
        for path in files:
            t0 = time.perf_counter()
            image = read_image(path)
            t1 = time.perf_counter()
            score(image, *spec)
            t2 = time.perf_counter()
            decode += t1 - t0
            metrics += t2 - t1
        passes.append((decode + metrics, decode, metrics))
    best = min(passes)
    n = len(files)
    result = {
        "dir": str(args.dir),
        "images": n,
        "repeat": args.repeat,
        "ms_per_image_best": 1e3 * best[0] / n,
        "ms_per_image_median": 1e3 * statistics.median(p[0] for p in passes) / n,
        "decode_ms_per_image_best_pass": 1e3 * best[1] / n,
        "score_ms_per_image_best_pass": 1e3 * best[2] / n,
    }
    print(json.dumps(result, indent=2))


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("score", "batch", "time"):
        print(__doc__, file=sys.stderr)
        return 2
    command, rest = sys.argv[1], sys.argv[2:]
    try:
        if command == "score":
            print(json.dumps(score_args(rest)))
        elif command == "batch":
            if len(rest) != 1:
                raise ValueError("batch takes one CASES.jsonl file")
            for number, line in enumerate(Path(rest[0]).read_text().splitlines(), 1):
                if line.strip():
                    try:
                        print(json.dumps(score_args(json.loads(line))))
                    except (ValueError, OSError) as error:
                        raise ValueError(f"{rest[0]}:{number}: {error}") from error
        else:
            parser = argparse.ArgumentParser(prog="violin_reference.py time")
            parser.add_argument("dir")
            parser.add_argument("--repeat", type=int, default=3)
            target_args(parser)
            time_directory(parser.parse_args(rest))
    except (ValueError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
