// summary.csv and summary.md, rendered from summary.json so the three never disagree.
#include <fmt/format.h>

#include <cmath>

#include "visalign/acva.h"
#include "visalign/io.h"

namespace visalign::acva {
namespace {

using nlohmann::json;
constexpr int kDigits = 3;

std::string Num(const json& v) {
  if (!v.is_number()) return "";
  const double x = v.get<double>();
  return std::isfinite(x) ? fmt::format("{:.{}f}", x, kDigits) : "";
}

std::string Cell(const json& v) {
  const std::string s = Num(v);
  return s.empty() ? "–" : s;
}

std::string Ci(const json& v) {
  if (!v.is_array() || v.size() != 2 || Num(v[0]).empty() || Num(v[1]).empty()) return "–";
  return "[" + Num(v[0]) + ", " + Num(v[1]) + "]";
}

std::string TierOf(const json& summary, const std::string& model) {
  for (const json& t : summary.value("tiers", json::array()))
    for (const json& m : t["models"])
      if (m.get<std::string>() == model) return std::to_string(t["tier"].get<int>());
  return "";
}

}  // namespace

std::string SummaryCsv(const json& summary) {
  std::string out =
      "model,tier,n_images,n_invalid,pass_rate,pass_rate_ci_lo,pass_rate_ci_hi,adequacy_mean,"
      "filtered_groups,filtered_d_img,filtered_d_met,filtered_h,filtered_genuine,filtered_pseudo,filtered_metaphor,"
      "filtered_low,unfiltered_groups,unfiltered_d_img,unfiltered_d_met,unfiltered_h,unfiltered_genuine,"
      "unfiltered_pseudo,unfiltered_metaphor,unfiltered_low,embedding_loo_acc,afc_acc,afc_first_share\n";
  for (const json& m : summary["models"]) {
    const std::string name = m["model"].get<std::string>();
    std::vector<std::string> f = {CsvField(name), TierOf(summary, name), std::to_string(m["n_images"].get<size_t>()),
                                  std::to_string(m["n_invalid"].get<size_t>()), Num(m["pass_rate"]),
                                  Num(m["pass_rate_ci"][0]), Num(m["pass_rate_ci"][1]), Num(m["adequacy_mean"])};
    for (const char* mode : {"filtered", "unfiltered"}) {
      const json& d = m["diversity"][mode];
      f.push_back(std::to_string(d["n_groups"].get<size_t>()));
      for (const char* k : {"d_img_mean", "d_met_mean", "h_mean"}) f.push_back(Num(d[k]));
      for (const char* q : {"genuine", "pseudo", "metaphor", "low"}) f.push_back(Num(d["quadrants"][q]));
    }
    const json& dist = m["distinctiveness"];
    for (const char* k : {"embedding_loo_acc_mean", "afc_acc_mean", "afc_first_share"}) f.push_back(Num(dist[k]));
    for (size_t i = 0; i < f.size(); ++i) out += (i ? "," : "") + f[i];
    out += "\n";
  }
  return out;
}

std::string SummaryMarkdown(const json& summary) {
  std::string out = "# ACVA-Bench summary\n\n";
  const json& o = summary["options"];
  out += fmt::format(
      "{} concepts, {} near-synonym pairs. Pass threshold {}, metaphor cluster threshold {}; {}% bootstrap "
      "intervals over concepts ({} resamples, seed {}).\n\n",
      summary["n_concepts"].get<size_t>(), summary["n_pairs"].get<size_t>(), Num(o["pass_threshold"]),
      Num(o["cluster_threshold"]), static_cast<int>(std::lround(o["ci_level"].get<double>() * 100)),
      o["bootstrap_resamples"].get<int>(), o["bootstrap_seed"].get<uint64_t>());
  if (summary.contains("embeddings") && summary["embeddings"].value("random_weights", json()).is_object()) {
    out += fmt::format("**Warning: the CLIP model's weights are {}.** Image diversity and embedding separability "
                       "below come from meaningless embeddings.\n\n",
                       summary["embeddings"]["random_weights"]["label"].get<std::string>());
  }

  out += "## Semantic adequacy\n\n| tier | model | images | invalid | pass rate | 95% CI | adequacy |\n";
  out += "|---|---|---|---|---|---|---|\n";
  for (const json& m : summary["models"]) {
    const std::string name = m["model"].get<std::string>();
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", TierOf(summary, name), name,
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
  for (const json& m : summary["models"]) {
    out += "| " + m["model"].get<std::string>() + " |";
    for (Category c : kCategories) {
      const json& bc = m["by_category"];
      const std::string key(CategoryName(c));
      out += " " + (bc.contains(key) ? Cell(bc[key]["pass_rate"]) : std::string("–")) + " |";
    }
    out += "\n";
  }
  out += "\n### Most often missing rubric components\n\n| model | concept | question | missing | mean rating |\n";
  out += "|---|---|---|---|---|\n";
  for (const json& m : summary["models"])
    for (const json& q : m["questions"]["most_missed"])
      out += fmt::format("| {} | {} | {} | {} | {} |\n", m["model"].get<std::string>(), q["concept"].get<std::string>(),
                         q["question"].get<std::string>(), Cell(q["missing_rate"]), Cell(q["mean_rating"]));

  out += "\n## Diversity\n\n| model | set | groups | D_img | 95% CI | D_met | H (bits) | genuine | pseudo | metaphor | low |\n";
  out += "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const json& m : summary["models"])
    for (const char* mode : {"filtered", "unfiltered"}) {
      const json& d = m["diversity"][mode];
      const json& q = d["quadrants"];
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", m["model"].get<std::string>(),
                         mode, d["n_groups"].get<size_t>(), Cell(d["d_img_mean"]), Ci(d["d_img_ci"]),
                         Cell(d["d_met_mean"]), Cell(d["h_mean"]), Cell(q["genuine"]), Cell(q["pseudo"]),
                         Cell(q["metaphor"]), Cell(q["low"]));
    }

  out += "\n## Distinctiveness (near-synonym pairs)\n\nEmbedding separability and the judge's 2AFC are separate "
         "measures and are never merged.\n\n| model | pair | embedding LOO acc | 2AFC acc | first-option share |\n";
  out += "|---|---|---|---|---|\n";
  for (const json& m : summary["models"]) {
    for (const json& p : m["pairs"])
      out += fmt::format("| {} | {}/{} | {} | {} | {} |\n", m["model"].get<std::string>(), p["a"].get<std::string>(),
                         p["b"].get<std::string>(), Cell(p["embedding_loo_acc"]), Cell(p["afc_acc"]),
                         Cell(p["afc_first_share"]));
    const json& d = m["distinctiveness"];
    out += fmt::format("| {} | **mean** | {} {} | {} {} | {} |\n", m["model"].get<std::string>(),
                       Cell(d["embedding_loo_acc_mean"]), Ci(d["embedding_loo_acc_ci"]), Cell(d["afc_acc_mean"]),
                       Ci(d["afc_acc_ci"]), Cell(d["afc_first_share"]));
  }

  out += "\n## Correlations (Spearman)\n\n| relation | n | rho | p |\n|---|---|---|---|\n";
  for (const auto& [name, c] : summary["correlations"].items())
    out += fmt::format("| {} | {} | {} | {} |\n", name, c["n"].get<size_t>(),
                       c.contains("error") ? "– (" + c["error"].get<std::string>() + ")" : Cell(c["rho"]),
                       Cell(c["p_value"]));

  out += "\n## Pass-rate comparisons (paired bootstrap over shared concepts)\n\n| a | b | difference | 95% CI | p |\n";
  out += "|---|---|---|---|---|\n";
  for (const json& c : summary["comparisons"])
    out += fmt::format("| {} | {} | {} | {} | {} |\n", c["a"].get<std::string>(), c["b"].get<std::string>(),
                       Cell(c["difference"]), Ci(c["ci"]), Cell(c["p_value"]));
  return out;
}

}  // namespace visalign::acva
