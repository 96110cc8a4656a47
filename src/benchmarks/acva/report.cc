// summary.csv and summary.md, rendered from summary.json so the three never disagree.
#include <fmt/format.h>

#include <cmath>

#include "visalign/benchmarks/acva/acva.h"
#include "visalign/core/format.h"
#include "visalign/core/io.h"
#include "visalign/core/results.h"

namespace visalign::acva {
namespace {

constexpr int kDigits = 3;        // summary.md tables
constexpr int kPValueDigits = 2;  // significant digits of p-values

std::string Num(const Json& v) { return v.is_number() ? FormatFixed(v.get<double>(), kDigits) : ""; }

std::string Cell(const Json& v) {
  const std::string s = Num(v);
  return s.empty() ? "–" : s;
}

std::string Ci(const Json& v) {
  if (!v.is_array() || v.size() != 2 || Num(v[0]).empty() || Num(v[1]).empty()) return "–";
  return "[" + Num(v[0]) + ", " + Num(v[1]) + "]";
}

// A CSV cell: an integer as it is, a double as FormatNumber ("0.8888888888888888", "1"); empty
// when undefined.
std::string ExactNum(const Json& v) {
  if (v.is_number_integer()) return v.dump();
  return v.is_number() ? FormatNumber(v.get<double>()) : "";
}

// summary.csv columns: name and where the value is in the model's summary.json object.
struct CsvColumn {
  std::string name;
  Json::json_pointer value;
};

std::vector<CsvColumn> CsvColumns() {
  std::vector<CsvColumn> columns;
  auto add = [&](const std::string& name, const std::string& pointer) {
    columns.push_back({name, Json::json_pointer(pointer)});
  };
  add("model", "/model");
  add("tier", "/tier");
  add("n_images", "/n_images");
  add("n_invalid", "/n_invalid");
  add("pass_rate", "/pass_rate");
  add("pass_rate_ci_lo", "/pass_rate_ci/0");
  add("pass_rate_ci_hi", "/pass_rate_ci/1");
  add("adequacy_mean", "/adequacy_mean");
  for (const std::string mode : {"filtered", "unfiltered"}) {
    const std::string d = "/diversity/" + mode;
    add(mode + "_groups", d + "/n_groups");
    add(mode + "_d_img", d + "/d_img_mean");
    add(mode + "_d_met", d + "/d_met_mean");
    add(mode + "_h", d + "/h_mean");
    for (const std::string q : {"genuine", "pseudo", "metaphor", "low"}) add(mode + "_" + q, d + "/quadrants/" + q);
  }
  add("embedding_loo_acc", "/distinctiveness/embedding_loo_acc_mean");
  add("afc_acc", "/distinctiveness/afc_acc_mean");
  add("afc_first_share", "/distinctiveness/afc_first_share");
  return columns;
}

// The smallest nonzero p-value of the pass-rate comparisons: 2/B with B bootstrap resamples.
double ComparisonPFloor(const Json& summary) { return 2.0 / summary["options"]["bootstrap_resamples"].get<double>(); }

}  // namespace

std::string FormatPValue(double p, double floor) {
  if (!std::isfinite(p)) return "–";
  if (p < floor) return fmt::format("< {:.{}g}", floor, kPValueDigits);
  return fmt::format("{:.{}g}", p, kPValueDigits);
}

std::vector<std::string> SummaryWarnings(const Json& summary) {
  std::vector<std::string> out;
  const Json& random = summary.value("embeddings", Json::object()).value("random_weights", Json());
  if (random.is_object())
    out.push_back(
        fmt::format("the CLIP model's weights are {}. Image diversity and embedding separability come from "
                    "meaningless embeddings.",
                    random.value("label", std::string("random"))));
  const Json generation = summary.value("generation", Json::object());
  for (const auto& [run, counts] : generation.items()) {
    const size_t done = counts.value("done", size_t{0}), failed = counts.value("failed", size_t{0}),
                 pending = counts.value("pending", size_t{0});
    if (failed + pending > 0)
      out.push_back(
          fmt::format("generation run {} has {} failed and {} pending of its {} images, so its numbers cover "
                      "only the {} done ones.",
                      run, failed, pending, done + failed + pending, done));
  }
  for (const Json& m : summary.value("models", Json::array())) {
    const size_t images = m.value("n_images", size_t{0}), invalid = m.value("n_invalid", size_t{0});
    if (invalid > 0)
      out.push_back(fmt::format(
          "model {} has {} of {} images ({} %) without a valid judgment (refused or unparseable "
          "answers), so its pass rate and adequacy cover only the other {}.",
          m.value("model", std::string()), invalid, images,
          FormatFixed(100.0 * static_cast<double>(invalid) / static_cast<double>(images), 1), images - invalid));
  }
  return out;
}

std::string SummaryCsv(const Json& summary) {
  const std::vector<CsvColumn> columns = CsvColumns();
  std::string out;
  for (size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + columns[i].name;
  out += "\n";
  for (const Json& m : summary["models"]) {
    for (size_t i = 0; i < columns.size(); ++i) {
      const Json& v = m.at(columns[i].value);
      out += (i ? "," : "") + (v.is_string() ? CsvField(v.get<std::string>()) : ExactNum(v));
    }
    out += "\n";
  }
  return out;
}

std::string SummaryMarkdown(const Json& summary) {
  std::string out = "# ACVA-Bench summary\n\n";
  const Json& o = summary["options"];
  out += fmt::format(
      "{} concepts, {} near-synonym pairs. Pass threshold {}, metaphor cluster threshold {}; {}% bootstrap "
      "intervals over concepts ({} resamples, seed {}).\n\n",
      summary["n_concepts"].get<size_t>(), summary["n_pairs"].get<size_t>(), Num(o["pass_threshold"]),
      Num(o["cluster_threshold"]), static_cast<int>(std::lround(o["ci_level"].get<double>() * 100)),
      o["bootstrap_resamples"].get<int>(), o["bootstrap_seed"].get<uint64_t>());
  for (const std::string& warning : SummaryWarnings(summary)) out += MarkdownWarning(warning);

  out += "## Semantic adequacy\n\n| tier | model | images | invalid | pass rate | 95% CI | adequacy |\n";
  out += "|---|---|---|---|---|---|---|\n";
  for (const Json& m : summary["models"]) {
    const std::string name = m["model"].get<std::string>();
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", std::to_string(m["tier"].get<int>()), name,
                       m["n_images"].get<size_t>(), m["n_invalid"].get<size_t>(), Cell(m["pass_rate"]),
                       Ci(m["pass_rate_ci"]), Cell(m["adequacy_mean"]));
  }
  out += "\n### Pass rate by category\n\n| model |";
  std::string rule = "|---|";
  for (Category c : kCategories) {
    out += fmt::format(" {} |", CategoryName(c));
    rule += "---|";
  }
  out += "\n" + rule + "\n";
  for (const Json& m : summary["models"]) {
    out += "| " + m["model"].get<std::string>() + " |";
    for (Category c : kCategories) {
      const Json& bc = m["by_category"];
      const std::string key(CategoryName(c));
      out += " " + (bc.contains(key) ? Cell(bc[key]["pass_rate"]) : std::string("–")) + " |";
    }
    out += "\n";
  }
  out += "\n### Most often missing rubric components\n\n| model | concept | question | missing | mean rating |\n";
  out += "|---|---|---|---|---|\n";
  for (const Json& m : summary["models"])
    for (const Json& q : m["questions"]["most_missed"])
      out += fmt::format("| {} | {} | {} | {} | {} |\n", m["model"].get<std::string>(), q["concept"].get<std::string>(),
                         q["question"].get<std::string>(), Cell(q["missing_rate"]), Cell(q["mean_rating"]));

  out += "\n## Diversity\n\n";
  const std::string scope = o.value("median_scope", "");
  if (scope == "pooled" || scope == "frozen") {
    const Json& qm = summary.value("quadrant_medians", Json::object());
    out += scope == "pooled"
               ? "Quadrants split at the medians of D_img and H over the groups of all models listed here (ACVA §5.2)"
               : "Quadrants split at medians frozen from " + qm.value("source", std::string("an earlier analysis")) +
                     " (adding a model moves no other model's shares)";
    for (const char* mode : {"filtered", "unfiltered"})
      if (qm.contains(mode) && qm[mode].is_object())
        out += fmt::format("; {}: D_img {}, H {}", mode, Cell(qm[mode]["d_img"]), Cell(qm[mode]["h"]));
    out += " (a value at the median counts half high, half low).\n\n";
  } else {
    out +=
        "Quadrants split at each model's own medians of D_img and H (a value at the median counts half high,"
        " half low): they describe how a model's diversity varies over its concepts; compare D_img and H"
        " for levels.\n\n";
  }
  out += "| model | set | groups | D_img | 95% CI | D_met | H (bits) | genuine | pseudo | metaphor | low |\n";
  out += "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Json& m : summary["models"])
    for (const char* mode : {"filtered", "unfiltered"}) {
      const Json& d = m["diversity"][mode];
      const Json& q = d["quadrants"];
      out +=
          fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", m["model"].get<std::string>(), mode,
                      d["n_groups"].get<size_t>(), Cell(d["d_img_mean"]), Ci(d["d_img_ci"]), Cell(d["d_met_mean"]),
                      Cell(d["h_mean"]), Cell(q["genuine"]), Cell(q["pseudo"]), Cell(q["metaphor"]), Cell(q["low"]));
    }

  out +=
      "\n## Distinctiveness (near-synonym pairs)\n\nEmbedding separability and the judge's 2AFC are separate "
      "measures and are never merged.\n\n| model | pair | embedding LOO acc | 2AFC acc | first-option share |\n";
  out += "|---|---|---|---|---|\n";
  for (const Json& m : summary["models"]) {
    for (const Json& p : m["pairs"])
      out += fmt::format("| {} | {}/{} | {} | {} | {} |\n", m["model"].get<std::string>(), p["a"].get<std::string>(),
                         p["b"].get<std::string>(), Cell(p["embedding_loo_acc"]), Cell(p["afc_acc"]),
                         Cell(p["afc_first_share"]));
    const Json& d = m["distinctiveness"];
    out += fmt::format("| {} | **mean** | {} {} | {} {} | {} |\n", m["model"].get<std::string>(),
                       Cell(d["embedding_loo_acc_mean"]), Ci(d["embedding_loo_acc_ci"]), Cell(d["afc_acc_mean"]),
                       Ci(d["afc_acc_ci"]), Cell(d["afc_first_share"]));
  }

  out += "\n## Correlations (Spearman)\n\n| relation | n | rho | p |\n|---|---|---|---|\n";
  for (const auto& [name, c] : summary["correlations"].items())
    out += fmt::format("| {} | {} | {} | {} |\n", name, c["n"].get<size_t>(),
                       c.contains("error") ? "– (" + c["error"].get<std::string>() + ")" : Cell(c["rho"]),
                       c["p_value"].is_number() ? FormatPValue(c["p_value"].get<double>(), 0) : "–");

  const double p_floor = ComparisonPFloor(summary);
  out += "\n## Pass-rate comparisons (paired bootstrap over shared concepts)\n\n| a | b | difference | 95% CI | p |\n";
  out += "|---|---|---|---|---|\n";
  for (const Json& c : summary["comparisons"])
    out += fmt::format("| {} | {} | {} | {} | {} |\n", c["a"].get<std::string>(), c["b"].get<std::string>(),
                       Cell(c["difference"]), Ci(c["ci"]),
                       c["p_value"].is_number() ? FormatPValue(c["p_value"].get<double>(), p_floor) : "–");
  return out;
}

}  // namespace visalign::acva
