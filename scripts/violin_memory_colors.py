#!/usr/bin/env python3
"""Derives data/violin/memory_colors.csv from the Hues and Cues human answers in data/hues.

For every clue word of words.csv in the concrete-object categories (Animal, Food, Mineral, Plant,
Environment), the answers of human_responses.csv (players in colorblind_ids.txt left out) are the
board cells players chose for the word; each cell's sRGB (board.csv) is converted to CIELAB
(D65/2 deg, scikit-image's constants, as visalign's color module) and the reference colour is the
mean L*, a*, b* of the answers. `spread` is the mean CIE76 distance of the answers to that mean
(lower = more agreement). Words whose spread exceeds MAX_SPREAD (no shared memory colour, e.g. a
bimodal APPLE) and the words in EXCLUDED (not an object one paints a colour of) are left out.
Standard library only; the C++ test memory_colors_test recomputes every value from the same files.
Usage: scripts/violin_memory_colors.py [REPO] > data/violin/memory_colors.csv
"""
import csv, math, sys, os

CATEGORIES = {"Animal", "Food", "Mineral", "Plant", "Environment"}
EXCLUDED = {"HURRICANE", "THUNDERBOLT", "SUNRISE", "SUNSET", "FIRE", "SKIN", "POND", "SEA"}
MAX_SPREAD = 25.0
WHITE = (0.95047, 1.0, 1.08883)
M = ((0.412453, 0.357580, 0.180423), (0.212671, 0.715160, 0.072169), (0.019334, 0.119193, 0.950227))

def lab(r, g, b):
    def lin(c):
        c /= 255.0
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    rl, gl, bl = lin(r), lin(g), lin(b)
    xyz = [M[i][0] * rl + M[i][1] * gl + M[i][2] * bl for i in range(3)]
    f = []
    for v, w in zip(xyz, WHITE):
        t = v / w
        f.append(t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116)
    return (116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2]))

def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    hues = os.path.join(repo, "data", "hues")
    board = {row["cell"]: lab(int(row["R"]), int(row["G"]), int(row["B"]))
             for row in csv.DictReader(open(os.path.join(hues, "board.csv")))}
    colorblind = {l.strip() for l in open(os.path.join(hues, "colorblind_ids.txt")) if l.strip()}
    answers = {}
    for row in csv.DictReader(open(os.path.join(hues, "human_responses.csv"))):
        if row["userId"] in colorblind or row["coordinate"] not in board:
            continue
        answers.setdefault(row["word_en"], []).append(board[row["coordinate"]])
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["object", "word_en", "category", "n_answers", "L", "a", "b", "spread"])
    for row in csv.DictReader(open(os.path.join(hues, "words.csv"))):
        word = row["word_en"]
        if row["category"] not in CATEGORIES or word in EXCLUDED or word not in answers:
            continue
        pts = answers[word]
        mean = tuple(sum(p[i] for p in pts) / len(pts) for i in range(3))
        spread = sum(math.dist(p, mean) for p in pts) / len(pts)
        if spread > MAX_SPREAD:
            continue
        out.writerow([word.lower(), word, row["category"], len(pts)] + ["%.4f" % v for v in mean] + ["%.4f" % spread])

main()
