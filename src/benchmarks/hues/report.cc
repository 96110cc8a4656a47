// Evaluation output files: words.csv, hotelling.csv, models.csv, categories.csv, families.csv,
// summary.json, summary.md and, for the results contract, items.jsonl and summary.csv.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "visalign/benchmarks/hues/hues.h"
#include "visalign/core/benchmarks.h"
#include "visalign/core/format.h"
#include "visalign/core/io.h"
#include "visalign/core/results.h"

namespace visalign::hues {
namespace {

constexpr std::string_view kWordsHeader =
    "model,word,category,n_humans,top1,top1_macro,human_macro,mahalanobis_d2,mahalanobis_outlier,hotelling_t2,"
    "hotelling_f,p_value,q_value,reject";

std::string Bool(bool b) { return b ? "true" : "false"; }
// A flag that only means something when its statistic exists.
std::string FlagIf(double statistic, bool flag) { return std::isnan(statistic) ? "" : Bool(flag); }
Json JsonNumber(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }
std::string Percent(double rate) { return std::isnan(rate) ? "–" : FormatFixed(100 * rate, 1) + "%"; }
// A flag as JSON: null when its statistic does not exist.
Json JsonFlag(double statistic, bool flag) { return std::isnan(statistic) ? Json(nullptr) : Json(flag); }

// One items.jsonl line: a model's result on one word.
Json ItemJson(const ModelEvaluation& m, const WordEvaluation& we, const Word& w) {
  const stats::HotellingResult& h = we.hotelling;
  return {{"model", m.name},
          {"word", w.en},
          {"category", w.category},
          {"n_humans", we.n_humans},
          {"top1", CellName(we.top1)},
          {"top1_macro", MacroName(we.top1_macro)},
          {"human_macro", MacroName(we.human_macro)},
          {"mahalanobis_d2", JsonNumber(we.mahalanobis_d2)},
          {"mahalanobis_outlier", JsonFlag(we.mahalanobis_d2, we.mahalanobis_outlier)},
          {"hotelling",
           {{"n_model", kTopK},
            {"df1", JsonNumber(h.df1)},
            {"df2", JsonNumber(h.df2)},
            {"t2", JsonNumber(h.t2)},
            {"f", JsonNumber(h.f)},
            {"p_value", JsonNumber(h.p_value)},
            {"p_one_minus_cdf", JsonNumber(h.p_cdf)},
            {"singular", h.singular}}},
          {"q_value", JsonNumber(we.q_value)},
          {"reject", JsonFlag(we.q_value, we.reject)}};
}

struct FamilyRow {
  std::string kind, family;
  std::vector<std::string> models;
  std::vector<double> mahalanobis, hotelling, hotelling_uncorrected, human;
};

// The family-level rates whose spread over the family's models is reported (families.csv columns <rate>_median,
// <rate>_q1, <rate>_q3, <rate>_min, <rate>_max; summary.json "<rate>_spread").
struct FamilyRate {
  std::string_view name;
  const std::vector<double> FamilyRow::*values;
};
constexpr FamilyRate kFamilyRates[] = {{"mahalanobis_fail_rate", &FamilyRow::mahalanobis},
                                       {"hotelling_fail_rate", &FamilyRow::hotelling},
                                       {"hotelling_fail_rate_uncorrected", &FamilyRow::hotelling_uncorrected}};

std::vector<FamilyRow> Families(const EvaluationReport& report, std::vector<std::string>& uncatalogued) {
  std::map<std::pair<std::string, std::string>, FamilyRow> rows;
  for (const ModelEvaluation& m : report.models) {
    auto it = report.catalog->find(m.name);
    if (it == report.catalog->end()) {
      uncatalogued.push_back(m.name);
      continue;
    }
    for (const auto& [kind, family] :
         {std::pair{"architecture", it->second.architecture}, std::pair{"dataset", it->second.dataset}}) {
      FamilyRow& row = rows[{kind, family}];
      row.kind = kind;
      row.family = family;
      row.models.push_back(m.name);
      row.mahalanobis.push_back(m.mahalanobis.rate());
      row.hotelling.push_back(m.hotelling.rate());
      row.hotelling_uncorrected.push_back(m.hotelling_uncorrected.rate());
      row.human.push_back(m.human_fail_rate);
    }
  }
  std::vector<FamilyRow> out;
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  return out;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ";") + n;
  return out;
}

}  // namespace

std::vector<std::string> EvaluationWarnings(const Json& summary) {
  constexpr size_t kWordsNamed = 3;  // missing words named in a warning; "..." stands for the rest
  std::vector<std::string> out;
  for (const Json& m : summary.value("models", Json::array())) {
    const Json missing = m.value("missing_words", Json::array());
    if (missing.empty()) continue;
    std::string names;
    for (size_t i = 0; i < std::min(missing.size(), kWordsNamed); ++i)
      names += (i ? ", " : "") + missing[i].get<std::string>();
    if (missing.size() > kWordsNamed) names += ", ...";
    const size_t present = m.value("n_words", size_t{0});
    out.push_back(
        fmt::format("model {} has no predictions for {} of {} words ({}), so its fail rates cover only the "
                    "other {}.",
                    m.value("model", std::string()), missing.size(), present + missing.size(), names, present));
  }
  return out;
}

Status WriteEvaluation(const EvaluationReport& report, const HumanBaseline& baseline, const Vocabulary& vocabulary,
                       const std::filesystem::path& dir) {
  VISALIGN_RETURN_IF_ERROR(EnsureDirectory(dir));
  const bool with_catalog = report.catalog.has_value();
  std::string words_csv = std::string(kWordsHeader) + "\n";
  std::string hotelling_csv = "model,word,n_humans,n_model,df1,df2,t2,f,p_value,p_one_minus_cdf,singular\n";
  std::string models_csv =
      "model,source,n_words,missing_words,negative_similarities,mahalanobis_tested,mahalanobis_fail_rate,"
      "hotelling_tested,hotelling_fail_rate,hotelling_fail_rate_uncorrected,human_fail_rate";
  models_csv += with_catalog ? ",architecture,dataset\n" : "\n";
  std::string categories_csv =
      "model,category,n_words,mahalanobis_fail_rate,hotelling_fail_rate,human_fail_rate,"
      "hotelling_fail_rate_uncorrected\n";
  Json models_json = Json::array();
  Json predictions_json = Json::array();
  std::string items_jsonl;

  for (const ModelEvaluation& m : report.models) {
    const std::string model = CsvField(m.name);
    for (const WordEvaluation& we : m.words) {
      const Word& w = vocabulary.words()[we.word];
      const stats::HotellingResult& h = we.hotelling;
      words_csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", model, CsvField(w.en),
                               CsvField(w.category), we.n_humans, CellName(we.top1), MacroName(we.top1_macro),
                               MacroName(we.human_macro), FormatNumber(we.mahalanobis_d2),
                               FlagIf(we.mahalanobis_d2, we.mahalanobis_outlier), FormatNumber(h.t2), FormatNumber(h.f),
                               FormatNumber(h.p_value), FormatNumber(we.q_value), FlagIf(we.q_value, we.reject));
      hotelling_csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", model, CsvField(w.en), we.n_humans, kTopK,
                                   FormatNumber(h.df1), FormatNumber(h.df2), FormatNumber(h.t2), FormatNumber(h.f),
                                   FormatNumber(h.p_value), FormatNumber(h.p_cdf), Bool(h.singular));
      items_jsonl += ItemJson(m, we, w).dump() + "\n";
    }
    Json prediction = {{"model", m.name}};
    prediction.update(InputFingerprint(m.source));
    predictions_json.push_back(std::move(prediction));
    const CatalogEntry* entry = nullptr;
    if (with_catalog)
      if (auto it = report.catalog->find(m.name); it != report.catalog->end()) entry = &it->second;
    models_csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{}", model, CsvField(m.source), m.words.size(),
                              m.missing_words.size(), Bool(m.negative_similarities), m.mahalanobis.tested,
                              FormatNumber(m.mahalanobis.rate()), m.hotelling.tested, FormatNumber(m.hotelling.rate()),
                              FormatNumber(m.hotelling_uncorrected.rate()), FormatNumber(m.human_fail_rate));
    if (with_catalog)
      models_csv +=
          fmt::format(",{},{}", entry ? CsvField(entry->architecture) : "", entry ? CsvField(entry->dataset) : "");
    models_csv += "\n";
    Json categories = Json::array();
    for (const auto& c : m.categories) {
      categories_csv += fmt::format("{},{},{},{},{},{},{}\n", model, CsvField(c.category), c.n_words,
                                    FormatNumber(c.mahalanobis.rate()), FormatNumber(c.hotelling.rate()),
                                    FormatNumber(c.human_fail_rate), FormatNumber(c.hotelling_uncorrected.rate()));
      categories.push_back({{"category", c.category},
                            {"n_words", c.n_words},
                            {"mahalanobis_fail_rate", JsonNumber(c.mahalanobis.rate())},
                            {"hotelling_fail_rate", JsonNumber(c.hotelling.rate())},
                            {"hotelling_fail_rate_uncorrected", JsonNumber(c.hotelling_uncorrected.rate())},
                            {"human_fail_rate", JsonNumber(c.human_fail_rate)}});
    }
    Json mj{{"model", m.name},
            {"source", m.source},
            {"n_words", m.words.size()},
            {"missing_words", m.missing_words},
            {"negative_similarities", m.negative_similarities},
            {"mahalanobis",
             {{"tested", m.mahalanobis.tested},
              {"failed", m.mahalanobis.failed},
              {"fail_rate", JsonNumber(m.mahalanobis.rate())}}},
            {"hotelling",
             {{"tested", m.hotelling.tested},
              {"rejected", m.hotelling.failed},
              {"fail_rate", JsonNumber(m.hotelling.rate())},
              {"fail_rate_uncorrected", JsonNumber(m.hotelling_uncorrected.rate())}}},
            {"human_fail_rate", JsonNumber(m.human_fail_rate)},
            {"categories", categories}};
    if (entry) mj["family"] = {{"architecture", entry->architecture}, {"dataset", entry->dataset}};
    models_json.push_back(std::move(mj));
  }

  Json human_categories = Json::array();
  for (const CategoryRate& c : baseline.categories)
    human_categories.push_back(
        {{"category", c.category}, {"n_words", c.n_words}, {"fail_rate", JsonNumber(c.fail_rate)}});
  // The results contract (docs/architecture.md): the header, what the numbers depend on, then the numbers.
  Json summary = ResultsHeader(benchmarks::kHues);
  summary["inputs"] = {{"humans", InputFingerprint(report.humans_source)},
                       {"macro_map", InputFingerprint(report.macro_source)},
                       {"predictions", predictions_json}};
  if (!report.humans_exclusions_source.empty())
    summary["inputs"]["humans_exclusions"] = InputFingerprint(report.humans_exclusions_source);
  if (!report.catalog_sources.empty()) {
    Json catalog = Json::array();
    for (const std::string& source : report.catalog_sources) catalog.push_back(InputFingerprint(source));
    summary["inputs"]["catalog"] = catalog;
  }
  summary["settings"] = {
      {"humans", report.humans_source},
      {"pairing", {{"rule", AnswerPairingName(report.pairing)}, {"answers_moved", report.repaired_answers}}},
      {"threshold", {{"spec", report.threshold.spec}, {"d2", report.threshold.d2}}},
      {"alpha", report.options.alpha},
      {"reject_rule", "Benjamini-Hochberg q <= alpha over each model's words"},
      {"model_weights", ModelWeightsName(report.options.weights)},
      {"chromaticity", ChromaticityName(report.chromaticity)},
      {"macro_map", report.macro_source}};
  summary["humans"] = {{"fail_rate", JsonNumber(baseline.fail_rate)},
                       {"categories", human_categories},
                       {"singular_words", baseline.singular_words}};
  summary["models"] = models_json;

  std::string md = "# Hues and Cues evaluation\n\n";
  for (const std::string& warning : EvaluationWarnings(summary)) md += MarkdownWarning(warning);
  md += fmt::format(
      "Humans: `{}`; outlier threshold {} (d² > {:.4g}); Hotelling rejection: "
      "Benjamini–Hochberg q ≤ {} over each model's words; model weights: {}; chromaticity: {}.\n\n"
      "| model | words | Mahalanobis fail | Hotelling fail (BH) | Hotelling fail (p ≤ α) | human LOO fail |\n"
      "|---|---:|---:|---:|---:|---:|\n",
      report.humans_source, report.threshold.spec, report.threshold.d2, report.options.alpha,
      ModelWeightsName(report.options.weights), ChromaticityName(report.chromaticity));
  for (const ModelEvaluation& m : report.models)
    md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", m.name, m.words.size(), Percent(m.mahalanobis.rate()),
                      Percent(m.hotelling.rate()), Percent(m.hotelling_uncorrected.rate()), Percent(m.human_fail_rate));
  md += "\nHuman leave-one-out fail rate by category:\n\n| category | words | fail rate |\n|---|---:|---:|\n";
  for (const CategoryRate& c : baseline.categories)
    md += fmt::format("| {} | {} | {} |\n", c.category, c.n_words, Percent(c.fail_rate));

  if (with_catalog) {
    std::vector<std::string> uncatalogued;
    const std::vector<FamilyRow> families = Families(report, uncatalogued);
    // Columns kept from schema 1, then the uncorrected rate and every rate's spread over the family's models.
    std::string families_csv =
        "kind,family,n_models,models,mahalanobis_fail_rate,hotelling_fail_rate,human_fail_rate,"
        "hotelling_fail_rate_uncorrected";
    for (const FamilyRate& rate : kFamilyRates)
      families_csv += fmt::format(",{0}_median,{0}_q1,{0}_q3,{0}_min,{0}_max", rate.name);
    families_csv += "\n";
    Json families_json = Json::array();
    md +=
        "\nBy family (mean of the models' rates; median [min, max] of the uncorrected Hotelling rate):\n\n"
        "| kind | family | models | Mahalanobis fail | Hotelling fail (BH) | Hotelling fail (p ≤ α) | "
        "median [range] (p ≤ α) |\n|---|---|---:|---:|---:|---:|---|\n";
    for (const FamilyRow& f : families) {
      const double mahal = stats::Mean(f.mahalanobis), hot = stats::Mean(f.hotelling),
                   uncorrected = stats::Mean(f.hotelling_uncorrected), human = stats::Mean(f.human);
      families_csv += fmt::format("{},{},{},{},{},{},{},{}", f.kind, CsvField(f.family), f.models.size(),
                                  CsvField(JoinNames(f.models)), FormatNumber(mahal), FormatNumber(hot),
                                  FormatNumber(human), FormatNumber(uncorrected));
      Json fj{{"kind", f.kind},
              {"family", f.family},
              {"models", f.models},
              {"mahalanobis_fail_rate", JsonNumber(mahal)},
              {"hotelling_fail_rate", JsonNumber(hot)},
              {"hotelling_fail_rate_uncorrected", JsonNumber(uncorrected)},
              {"human_fail_rate", JsonNumber(human)}};
      for (const FamilyRate& rate : kFamilyRates) {
        const Spread spread = SpreadOf(f.*rate.values);
        families_csv += fmt::format(",{},{},{},{},{}", FormatNumber(spread.median), FormatNumber(spread.q1),
                                    FormatNumber(spread.q3), FormatNumber(spread.min), FormatNumber(spread.max));
        fj[std::string(rate.name) + "_spread"] = {{"median", JsonNumber(spread.median)},
                                                  {"q1", JsonNumber(spread.q1)},
                                                  {"q3", JsonNumber(spread.q3)},
                                                  {"min", JsonNumber(spread.min)},
                                                  {"max", JsonNumber(spread.max)}};
      }
      families_csv += "\n";
      families_json.push_back(std::move(fj));
      const Spread spread = SpreadOf(f.hotelling_uncorrected);
      md += fmt::format("| {} | {} | {} | {} | {} | {} | {} [{}, {}] |\n", f.kind, f.family, f.models.size(),
                        Percent(mahal), Percent(hot), Percent(uncorrected), Percent(spread.median), Percent(spread.min),
                        Percent(spread.max));
    }
    summary["families"] = families_json;
    summary["uncatalogued_models"] = uncatalogued;
    if (!uncatalogued.empty()) md += fmt::format("\nNot in the catalog: {}.\n", JoinNames(uncatalogued));
    VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(dir / "families.csv", families_csv));
  }
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(dir / "words.csv", words_csv));
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(dir / "hotelling.csv", hotelling_csv));
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(dir / "models.csv", models_csv));
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(dir / "summary.csv", models_csv));  // the contract's name for it
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(dir / "items.jsonl", items_jsonl));
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(dir / "categories.csv", categories_csv));
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(dir / "summary.json", summary.dump(2) + "\n"));
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(dir / "summary.md", md));
  return Status::Ok();
}

}  // namespace visalign::hues
