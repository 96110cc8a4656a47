#!/usr/bin/env python3
"""Compares `visalign hues evaluate` outputs with the files the Hues and Cues authors published (docs/reproduction.md).

Usage:
  scripts/hues_published_check.py pvalues EVAL_DIR PEER_RESULTS_DIR
      F and 1 - CDF p of hotelling.csv vs every <model>/p_values.csv, all 100 words (EVAL_DIR evaluated with
      --humans HC_old.csv; the published Sesame Street rows are compared with the word naming the same character).
  scripts/hues_published_check.py pass-table EVAL_05 EVAL_003 PEER_RESULTS_DIR PASS_TEST_RESULTS_CSV
      the authors' pass_test_results.csv (columns 0.05 and 0.003) vs the uncorrected Hotelling fail rates of two
      evaluations run with --alpha 0.05 and --alpha 0.003 (with --humans HC_old.csv).
  scripts/hues_published_check.py family-category EVAL_DIR CATALOG_CSV FAMILY CATEGORY RATE
      the mean over FAMILY's models (architecture column of CATALOG_CSV) of categories.csv's RATE in CATEGORY.
  scripts/hues_published_check.py notebook-ratios EVAL_DIR RANKING_MAH_IPYNB
      the Mahalanobis pass ratios the authors' ranking_mah.ipynb prints (cell 5, `ratios`) vs 1 - visalign's
      mahalanobis_fail_rate in models.csv: how many of the printed models match.
  scripts/hues_published_check.py prefix-category EVAL_DIR PREFIXES CATEGORY RATE
      the same over the models whose name starts with one of the comma-separated PREFIXES (a grouping the
      catalog does not have, e.g. the multilingual models: nllb-clip,xlm-roberta).
Needs only the Python standard library.
"""
import csv
import os
import sys

# The published p_values.csv name the two Sesame Street clues in Spanish; each row is the model's prediction for
# the character tested against the answers of players shown that character (Blas is Bert, Epi is Ernie), which
# is visalign's default pairing by character (docs/reproduction.md, H2). The word visalign names each row with:
SESAME_STREET = {"BLAS (Y EPI)": "BERT (AND ERNIE)", "EPI (Y BLAS)": "ERNIE (AND BERT)"}
F_TOLERANCE = 1e-9   # relative; the measured worst is ~5e-13
P_TOLERANCE = 1e-6   # relative; 1 - CDF loses precision as p falls
P_SATURATED = 2.0 ** -53 * 1.0000001  # the published 1 - CDF cannot resolve p below the double epsilon


def rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def relative(a, b):
    return abs(a - b) / abs(b) if b != 0 else abs(a)


def pvalues(eval_dir, peer):
    ours = {(r["model"], r["word"]): r for r in rows(os.path.join(eval_dir, "hotelling.csv"))}
    models = sorted({m for m, _ in ours})
    per_model, saturated, worst_f, worst_p, other = {}, 0, 0.0, 0.0, []
    for m in models:
        matched = 0
        for r in rows(os.path.join(peer, m, "p_values.csv")):
            o = ours[(m, SESAME_STREET.get(r["Words"], r["Words"]))]
            ef = relative(float(o["f"]), float(r["Stat"]))
            published, mine = float(r["p-value"]), float(o["p_one_minus_cdf"])
            if ef < F_TOLERANCE and published <= P_SATURATED and mine <= P_SATURATED:
                saturated += 1
                matched += 1
                worst_f = max(worst_f, ef)
            elif ef < F_TOLERANCE and relative(mine, published) < P_TOLERANCE:
                matched += 1
                worst_f, worst_p = max(worst_f, ef), max(worst_p, relative(mine, published))
            else:
                other.append((m, r["Words"], r["Stat"], o["f"], r["p-value"], o["p_one_minus_cdf"]))
        per_model[m] = matched
    counts = {}
    for n in per_model.values():
        counts[n] = counts.get(n, 0) + 1
    print(f"models: {len(models)}; words matching of the 100 compared -> models: {counts}")
    print(f"worst relative error: F {worst_f:.2g}, 1 - CDF p {worst_p:.2g}; "
          f"both 1 - CDF values at or below 2^-53 (cancellation; F equal): {saturated}")
    for o in other:
        print("differs:", *o)
    return 0 if not other else 1


def pass_table(eval_05, eval_003, peer, table):
    words = {a: {(r["model"], r["word"]): float(r["p_value"]) for r in rows(os.path.join(d, "words.csv"))}
             for a, d in ((0.05, eval_05), (0.003, eval_003))}
    rates = {a: {r["model"]: float(r["hotelling_fail_rate_uncorrected"]) for r in rows(os.path.join(d, "models.csv"))}
             for a, d in ((0.05, eval_05), (0.003, eval_003))}
    equal, equal_with_published_sesame, n, differ = 0, 0, 0, []
    for r in rows(table):
        model = r["model"] + "-" + r["dataset"]
        n += 1
        published_p = {x["Words"]: float(x["p-value"]) for x in rows(os.path.join(peer, model, "p_values.csv"))}
        same, same_sesame = True, True
        for alpha, column in ((0.05, "0.05"), (0.003, "0.003")):
            expected = float(r[column])
            same &= abs(rates[alpha][model] - expected) < 1e-9
            # The table counts p < alpha over the published 100 words: visalign's p for 98, the published
            # Sesame Street rows for the other two (equal to visalign's when paired by character).
            fails = sum((published_p[w] if w in SESAME_STREET else words[alpha][(model, w)]) < alpha
                        for w in published_p)
            same_sesame &= abs(fails / len(published_p) - expected) < 1e-9
        equal += same
        equal_with_published_sesame += same_sesame
        if not same:
            differ.append(model)
    print(f"models: {n}; visalign's uncorrected fail rate equals the table at both alphas: {equal}; "
          f"with the two published Sesame Street rows in place of visalign's: {equal_with_published_sesame}")
    return 0 if equal_with_published_sesame == n else 1


def family_category(eval_dir, catalog, family, category, rate):
    arch = {r["model"]: r["architecture"] for r in rows(catalog)}
    values = [float(r[rate]) for r in rows(os.path.join(eval_dir, "categories.csv"))
              if arch.get(r["model"]) == family and r["category"] == category and r[rate] != ""]
    print(f"{family} / {category} / {rate}: mean over {len(values)} models = {sum(values) / len(values):.6g}")
    return 0


def prefix_category(eval_dir, prefixes, category, rate):
    starts = tuple(p for p in prefixes.split(",") if p)
    values = [float(r[rate]) for r in rows(os.path.join(eval_dir, "categories.csv"))
              if r["model"].startswith(starts) and r["category"] == category and r[rate] != ""]
    if not values:
        sys.exit(f"error: no model of {eval_dir}/categories.csv starts with {prefixes!r} in category {category!r}")
    print(f"{prefixes} / {category} / {rate}: mean over {len(values)} models = {sum(values) / len(values):.6g}")
    return 0


def notebook_ratios(eval_dir, notebook):
    import ast
    import json
    with open(notebook, encoding="utf-8") as f:
        cells = json.load(f)["cells"]
    printed = None
    for cell in cells:
        if "".join(cell.get("source", [])).strip() != "ratios":
            continue
        for output in cell.get("outputs", []):
            text = "".join(output.get("data", {}).get("text/plain", []))
            if text.startswith("{"):
                printed = ast.literal_eval(text)
        if printed:
            break
    if not printed:
        sys.exit(f"error: {notebook}: no cell printing the `ratios` dict")
    ours = {r["model"]: 1 - float(r["mahalanobis_fail_rate"]) for r in rows(os.path.join(eval_dir, "models.csv"))}
    names = {k: k.replace("/", "-", 1) for k in printed}
    missing = [k for k in printed if names[k] not in ours]
    same = sum(abs(ours[names[k]] - v) < 1e-9 for k, v in printed.items() if names[k] in ours)
    print(f"notebook ratios: {len(printed)} models; equal to 1 - mahalanobis_fail_rate: {same}; "
          f"not evaluated: {len(missing)}")
    return 0


def main(argv):
    commands = {"pvalues": (pvalues, 2), "pass-table": (pass_table, 4), "family-category": (family_category, 5),
                "prefix-category": (prefix_category, 4), "notebook-ratios": (notebook_ratios, 2)}
    if len(argv) < 2 or argv[1] not in commands or len(argv) - 2 != commands[argv[1]][1]:
        sys.exit(__doc__)
    function, _ = commands[argv[1]]
    return function(*argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
