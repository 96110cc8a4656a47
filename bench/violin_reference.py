#!/usr/bin/python3
"""Independent Python reference for the VIOLIN evaluator (docs/metrics.md), written the way the
Python world computes these metrics: PIL decode, numpy, numpy.fft, cv2.Canny, and sRGB -> Lab and
CIEDE2000 written out in numpy from their published definitions (scikit-image's constants, Sharma,
Wu & Dalal 2005). It is deliberately literal and slow; visalign's C++ is checked against it
(tests/violin_reference_test.cc) and timed against it (docs/performance.md, "VIOLIN evaluator vs a
Python reference").

  violin_reference.py score IMAGE --target COLOR
  violin_reference.py score IMAGE --layout h2|v2|q4 --targets C1,C2[,C3,C4]
  violin_reference.py score IMAGE --fuzzy LOW,HIGH
      prints the JSON of `visalign violin score --json`:
      {"raw": {rgb_ed, ..., hf}, "norm": {..., sd_n, ced, hf}, "pre_mean", "pur_mean"} (+ "alpha_min"
      when the image has transparent pixels: composited over --background, default #FFFFFF, or none)
      Without OpenCV's Python module (cv2), ced and pur_mean (which includes ced) are null.
  violin_reference.py batch CASES.jsonl
      each line a JSON array of `score` arguments; prints one score JSON per line (one process, so
      a test does not pay the interpreter and import start-up per image)
  violin_reference.py selfcheck [CIEDE2000_CSV]
      CIEDE2000 against the 34 published pairs of Sharma, Wu & Dalal (2005), Table 1 (default
      data/color/ciede2000_sharma.csv, shipped with its NOTICE); exit status 1 if any differs by more than 1e-4
      (the published values have 4 decimals). With cv2, also checks the gray formula against
      cv2.cvtColor on all 2^24 colors.
  violin_reference.py time DIR --target COLOR [--repeat N]
      read + decode + score of every *.png/*.jpg/*.jpeg in DIR on one thread; prints ms/image.
      Needs cv2 (the speed baseline includes Canny).

Results do not depend on which SIMD kernels numpy picks on the host (AVX-512, AVX2, SSE): the one
branch that rounding could flip, CIEDE2000's |h2' - h1'| <= 180 at exactly 180 degrees (Sharma pairs
13-14), is decided with a 1e-9 degree slack (HUE_BOUNDARY_SLACK_DEGREES), and the test runs this script
under every numpy dispatch the host offers (NPY_DISABLE_CPU_FEATURES).

COLOR is #RRGGBB, #RGB or rgb(R, G, B) with integers 0-255 (visalign also takes hsl() and names).
Inputs should be 8-bit: for 16-bit PNGs PIL keeps the high byte (v >> 8) where visalign rounds v/257,
and PIL clips 16-bit grayscale to 255, so such images differ by their decoding, not by the metrics.
Needs Debian's python3-numpy python3-pil; ced (and `time`) also python3-opencv. Run with /usr/bin/python3.
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

APT_PACKAGES = "python3-numpy python3-pil"
try:
    import numpy as np
    from PIL import Image
except ImportError as error:
    sys.exit(f"error: {error} (violin_reference.py): needs the Debian packages {APT_PACKAGES} "
             f"(apt-get install -y {APT_PACKAGES}; run with /usr/bin/python3)")
try:
    import cv2  # optional: only ced (cv2.Canny) and the `time` mode need it
    cv2.setNumThreads(1)
except ImportError:
    cv2 = None

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
# OpenCV's 8-bit RGB -> GRAY in fixed point: (9798 R + 19235 G + 3735 B + 2^14) >> 15.
GRAY_WEIGHTS, GRAY_SHIFT = np.array([9798, 19235, 3735], dtype=np.int32), 15  # sums < 2^24
# scikit-image's sRGB -> XYZ matrix (colorconv.xyz_from_rgb) and D65 white (2 degree observer).
XYZ_FROM_RGB = np.array([[0.412453, 0.357580, 0.180423],
                         [0.212671, 0.715160, 0.072169],
                         [0.019334, 0.119193, 0.950227]])
WHITE_D65 = np.array([0.95047, 1.0, 1.08883])
LAB_EPSILON, LAB_KAPPA_SLOPE = 0.008856, 7.787
CIEDE2000_CSV = Path(__file__).resolve().parent.parent / "data" / "color" / "ciede2000_sharma.csv"
CIEDE2000_PUBLISHED_DECIMALS_TOLERANCE = 1e-4
# |h2' - h1'| = 180 exactly (Sharma pairs 13-14: antipodal a', b) is decided by the last bits of two
# arctan2 results, which differ between numpy's SIMD paths (AVX2 vs AVX-512). Differences within
# this slack count as exactly 180 (the published pairs take the |dh| <= 180 branch there): it is
# 1e4x the few-ulp (~1e-13 degree) disagreement of correct arctan2s, and no measured hue pair sits
# closer than it to the boundary without being on it, so the branch no longer depends on the CPU.
HUE_BOUNDARY_SLACK_DEGREES = 1e-9
HF_CUT = 0.25  # cycles/pixel, strictly greater counts as high frequency
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")


# --- Input --------------------------------------------------------------------------------------
def read_image(path, background=(255, 255, 255)):
    """(8-bit RGB, smallest alpha): images with alpha are composited over `background` (None: alpha
    dropped, as PIL's convert("RGB") does), round((c*a + b*(255 - a)) / 255) in integers."""
    with Image.open(path) as image:
        has_alpha = image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info
        if not has_alpha:
            return np.asarray(image.convert("RGB")), 255
        rgba = np.asarray(image.convert("RGBA")).astype(np.int64)
    alpha = rgba[..., 3:4]
    if background is None:
        rgb = rgba[..., :3]
    else:
        rgb = (rgba[..., :3] * alpha + np.array(background) * (255 - alpha) + 127) // 255
    return rgb.astype(np.uint8), int(alpha.min())


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
    """CIELAB of 0..255 sRGB, the steps of skimage.color.rgb2lab (docs/color.md)."""
    c = np.asarray(rgb255, dtype=float) / 255.0
    linear = np.where(c > 0.04045, ((c + 0.055) / 1.055) ** 2.4, c / 12.92)
    t = (XYZ_FROM_RGB @ linear) / WHITE_D65
    f = np.where(t > LAB_EPSILON, np.cbrt(t), LAB_KAPPA_SLOPE * t + 16.0 / 116.0)
    return np.array([116.0 * f[1] - 16.0, 500.0 * (f[0] - f[1]), 200.0 * (f[1] - f[2])])


def ciede2000(lab1, lab2):
    """CIEDE2000 (kL = kC = kH = 1) of Lab arrays [..., 3], in degrees, following the numbered
    equations of Sharma, Wu & Dalal, Color Res. Appl. 30(1), 2005."""
    L1, a1, b1 = np.moveaxis(np.asarray(lab1, dtype=float), -1, 0)
    L2, a2, b2 = np.moveaxis(np.asarray(lab2, dtype=float), -1, 0)
    c_bar7 = ((np.hypot(a1, b1) + np.hypot(a2, b2)) / 2) ** 7                        # (2), (3)
    g = 0.5 * (1 - np.sqrt(c_bar7 / (c_bar7 + 25.0 ** 7)))                           # (4)
    a1p, a2p = (1 + g) * a1, (1 + g) * a2                                             # (5)
    c1p, c2p = np.hypot(a1p, b1), np.hypot(a2p, b2)                                   # (6)
    h1p = np.where((a1p == 0) & (b1 == 0), 0.0, np.degrees(np.arctan2(b1, a1p)) % 360)  # (7)
    h2p = np.where((a2p == 0) & (b2 == 0), 0.0, np.degrees(np.arctan2(b2, a2p)) % 360)
    chroma_product = c1p * c2p
    dh = h2p - h1p                                                                    # (10)
    within_half_turn = np.abs(dh) <= 180 + HUE_BOUNDARY_SLACK_DEGREES
    dhp = np.where(chroma_product == 0, 0.0,
                   np.where(within_half_turn, dh, np.where(dh > 180, dh - 360, dh + 360)))
    dLp, dCp = L2 - L1, c2p - c1p                                                     # (8), (9)
    dHp = 2 * np.sqrt(chroma_product) * np.sin(np.radians(dhp / 2))                   # (11)
    Lp_bar, Cp_bar = (L1 + L2) / 2, (c1p + c2p) / 2                                   # (12), (13)
    h_sum = h1p + h2p                                                                 # (14)
    hp_bar = np.where(chroma_product == 0, h_sum,
                      np.where(within_half_turn, h_sum / 2,
                               np.where(h_sum < 360, (h_sum + 360) / 2, (h_sum - 360) / 2)))
    t = (1 - 0.17 * np.cos(np.radians(hp_bar - 30)) + 0.24 * np.cos(np.radians(2 * hp_bar))
         + 0.32 * np.cos(np.radians(3 * hp_bar + 6)) - 0.20 * np.cos(np.radians(4 * hp_bar - 63)))  # (15)
    d_theta = 30 * np.exp(-(((hp_bar - 275) / 25) ** 2))                              # (16)
    r_c = 2 * np.sqrt(Cp_bar ** 7 / (Cp_bar ** 7 + 25.0 ** 7))                        # (17)
    s_l = 1 + 0.015 * (Lp_bar - 50) ** 2 / np.sqrt(20 + (Lp_bar - 50) ** 2)           # (18)
    s_c = 1 + 0.045 * Cp_bar                                                          # (19)
    s_h = 1 + 0.015 * Cp_bar * t                                                      # (20)
    r_t = -np.sin(np.radians(2 * d_theta)) * r_c                                      # (21)
    dl, dc, dh_term = dLp / s_l, dCp / s_c, dHp / s_h
    return np.sqrt(dl ** 2 + dc ** 2 + dh_term ** 2 + r_t * dc * dh_term)             # (22)


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
        "de00": float(ciede2000(lab_t, lab_m)),
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
def gray_formula(region):
    """OpenCV's 8-bit RGB -> GRAY as docs/metrics.md states it, evaluated in exact integers."""
    weighted = region.astype(np.int32) @ GRAY_WEIGHTS
    return ((weighted + (1 << (GRAY_SHIFT - 1))) >> GRAY_SHIFT).astype(np.uint8)


def gray_plane(region):
    """cv2.cvtColor when cv2 is there (what Python code calls, and the faster one for `time`),
    else the formula; `selfcheck` shows the two identical on all 2^24 colors."""
    if cv2 is None:
        return gray_formula(region)
    return cv2.cvtColor(np.ascontiguousarray(region), cv2.COLOR_RGB2GRAY)


def purity(region):
    """sd, ced (None without cv2) and hf of one region."""
    pixels = region / 255.0
    sd = float(np.mean([pixels[..., c].std() for c in range(3)]))
    gray = gray_plane(region)
    ced = None
    if cv2 is not None:
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
    return None if raw is None else min(max(raw / MAXIMUM[name], 0.0), 1.0)


def mean(values):
    """Arithmetic mean; None if any value is None (ced without cv2)."""
    values = list(values)
    return None if any(v is None for v in values) else sum(values) / len(values)


def score(image, layout, targets=None, fuzzy=None, alpha_min=255):
    parts = blocks(image, layout)
    if any(p.shape[0] == 0 or p.shape[1] == 0 for p in parts):
        raise ValueError(f"image {image.shape[1]}x{image.shape[0]} too small for layout {layout}")
    per_block = []
    for index, region in enumerate(parts):
        mean_color = region.reshape(-1, 3).mean(axis=0)
        target = fuzzy_target(mean_color, *fuzzy) if fuzzy else targets[index]
        per_block.append({**precision(mean_color, target), **purity(region)})
    # The image's values: means over blocks of the per-block raw and (clamped) normalised values.
    raw = {k: mean(b[k] for b in per_block) for k in PRECISION + PURITY_RAW}
    norm = {k: mean(normalise(k, b[k]) for b in per_block) for k in PRECISION + PURITY_RAW}
    norm_out = {k: norm[k] for k in PRECISION}
    norm_out.update({"sd_n": norm["sd"], "ced": norm["ced"], "hf": norm["hf"]})
    result = {
        "raw": raw,
        "norm": norm_out,
        "pre_mean": mean(norm_out[k] for k in PRECISION),
        "pur_mean": mean(norm_out[k] for k in PURITY_NORM),
    }
    if alpha_min < 255:
        result["alpha_min"] = alpha_min
    return result


def target_args(parser):
    parser.add_argument("--target", help="target color of a single-color image")
    parser.add_argument("--layout", choices=["single", "h2", "v2", "q4"], help="block layout for --targets")
    parser.add_argument("--targets", help="block colors in layout order")
    parser.add_argument("--fuzzy", help="a stated range LOW,HIGH")
    parser.add_argument("--background", default="#FFFFFF",
                        help="colour transparent pixels are composited over, or none (alpha dropped)")


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
    background = None if args.background == "none" else tuple(int(v) for v in parse_color(args.background))
    image, alpha_min = read_image(args.image, background)
    return score(image, *target_spec(args), alpha_min=alpha_min)


# --- Timing -------------------------------------------------------------------------------------
def time_directory(args):
    files = sorted(p for p in Path(args.dir).iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    if not files:
        raise ValueError(f"no {'/'.join(IMAGE_SUFFIXES)} files in {args.dir}")
    spec = target_spec(args)
    score(read_image(files[0])[0], *spec)  # warm-up: first-call costs of numpy/OpenCV
    passes = []
    for _ in range(args.repeat):
        decode = metrics = 0.0
        for path in files:
            t0 = time.perf_counter()
            image, _ = read_image(path)
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


# --- Self-check ---------------------------------------------------------------------------------
def selfcheck(csv_path):
    """0 if CIEDE2000 reproduces every published pair within 1e-4 (and, with cv2, the gray formula
    equals cv2.cvtColor on every 8-bit color); prints the worst differences."""
    lines = Path(csv_path).read_text().splitlines()
    header = lines[0].split(",")
    rows = [dict(zip(header, line.split(","))) for line in lines[1:] if line.strip()]
    lab1 = np.array([[float(r[k]) for k in ("L1", "a1", "b1")] for r in rows])
    lab2 = np.array([[float(r[k]) for k in ("L2", "a2", "b2")] for r in rows])
    published = np.array([float(r["dE00"]) for r in rows])
    ok = True
    for name, ours in (("CIEDE2000(1, 2)", ciede2000(lab1, lab2)), ("CIEDE2000(2, 1)", ciede2000(lab2, lab1))):
        diff = np.abs(ours - published)
        worst = int(np.argmax(diff))
        print(f"{name}: {len(rows)} pairs of {csv_path}, max |ours - published| = {diff[worst]:.3g} "
              f"(pair {rows[worst]['pair']})")
        for i in np.flatnonzero(diff > CIEDE2000_PUBLISHED_DECIMALS_TOLERANCE):
            print(f"  MISMATCH pair {rows[i]['pair']}: ours {ours[i]:.6f}, published {published[i]:.4f}")
            ok = False
    if cv2 is None:
        print("gray formula vs cv2.cvtColor: not checked (cv2 not importable)")
    else:
        green, blue = np.meshgrid(np.arange(256), np.arange(256), indexing="ij")
        differing = 0
        for red in range(256):  # one 256x256 plane of the RGB cube per red value
            plane = np.stack([np.full_like(green, red), green, blue], -1).astype(np.uint8)
            differing += int(np.count_nonzero(gray_formula(plane) != cv2.cvtColor(plane, cv2.COLOR_RGB2GRAY)))
        print(f"gray formula vs cv2.cvtColor on all 2^24 colors: {differing} differ")
        ok = ok and differing == 0
    return 0 if ok else 1


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("score", "batch", "selfcheck", "time"):
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
        elif command == "selfcheck":
            if len(rest) > 1:
                raise ValueError("selfcheck takes at most one CSV file")
            return selfcheck(rest[0] if rest else CIEDE2000_CSV)
        else:
            if cv2 is None:
                raise ValueError("time needs OpenCV's Python module for Canny: the Debian package "
                                 "python3-opencv (apt-get install -y python3-opencv)")
            parser = argparse.ArgumentParser(prog="violin_reference.py time")
            parser.add_argument("dir")
            parser.add_argument("--repeat", type=int, default=3)
            target_args(parser)
            time_directory(parser.parse_args(rest))
    except (ValueError, OSError, KeyError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
