// Model evaluation against the human answers: Mahalanobis outliers and Hotelling tests per word.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "visalign/benchmarks/hues/hues.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"
#include "visalign/stats/resampling.h"

namespace visalign::hues {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

stats::HotellingResult NotComputable() {
  stats::HotellingResult r;
  r.singular = true;
  r.t2 = r.f = r.p_value = r.p_cdf = r.df1 = r.df2 = kNaN;
  return r;
}

// The published recipe: humans (mean, n−1 covariance) vs the model's top-5 cells weighted by
// |similarity| (numpy cov aweights), pooled covariance, F transform.
stats::HotellingResult Hotelling(const WordBaseline& humans, const std::vector<Prediction>& top, const Board& board,
                                 ModelWeights weights) {
  if (humans.n < 2) return NotComputable();
  std::vector<stats::Vec2> points;
  std::vector<double> w;
  for (const Prediction& p : top) {
    points.push_back(board.cell(p.cell).xy);
    w.push_back(weights == ModelWeights::kUniform ? 1.0 : std::abs(p.similarity));
  }
  auto model = stats::WeightedCovariance(points, w);
  if (!model.ok()) return NotComputable();
  auto r = stats::HotellingTwoSample(humans.mean, humans.cov, humans.n, model->mean, model->cov,
                                     static_cast<double>(points.size()));
  return r.ok() ? *r : NotComputable();
}

void Count(RateCount& c, double value, bool failed) {
  if (std::isnan(value)) return;
  ++c.tested;
  c.failed += failed ? 1 : 0;
}

}  // namespace

double RateCount::rate() const { return tested > 0 ? double(failed) / tested : kNaN; }

Result<ModelWeights> ParseModelWeights(std::string_view text) {
  if (text == "similarity") return ModelWeights::kAbsSimilarity;
  if (text == "uniform") return ModelWeights::kUniform;
  return Status::InvalidArgument("unknown model weights " + QuoteText(text), "model weights",
                                 "similarity (|similarity|, the published recipe) or uniform");
}

std::string_view ModelWeightsName(ModelWeights w) { return w == ModelWeights::kUniform ? "uniform" : "similarity"; }

ModelEvaluation EvaluateModel(const ModelPredictions& model, const HumanBaseline& baseline,
                              const Vocabulary& vocabulary, const Board& board, const MacroMap& macro,
                              const EvaluateOptions& options) {
  ModelEvaluation e;
  e.name = model.name;
  e.source = model.source;
  std::vector<double> p_values;
  for (size_t w = 0; w < vocabulary.words().size(); ++w) {
    const std::vector<Prediction>& top = model.words[w];
    if (top.empty()) {
      e.missing_words.push_back(vocabulary.words()[w].en);
      continue;
    }
    const WordBaseline& humans = baseline.words[w];
    WordEvaluation we;
    we.word = static_cast<int>(w);
    we.n_humans = humans.n;
    we.top1 = top.front().cell;
    we.top1_macro = macro.at(we.top1).category;
    we.human_macro = humans.modal_macro;
    we.mahalanobis_d2 =
        humans.singular ? kNaN : stats::MahalanobisSquared(board.cell(we.top1).xy, humans.mean, humans.inverse);
    we.mahalanobis_outlier = we.mahalanobis_d2 > baseline.threshold.d2;
    for (const Prediction& p : top) e.negative_similarities |= p.similarity < 0;
    we.hotelling = Hotelling(humans, top, board, options.weights);
    p_values.push_back(we.hotelling.p_value);
    e.words.push_back(we);
  }
  const std::vector<double> q = stats::BenjaminiHochberg(p_values);
  for (size_t i = 0; i < e.words.size(); ++i) {
    WordEvaluation& we = e.words[i];
    we.q_value = q[i];
    we.reject = q[i] <= options.alpha;
    Count(e.mahalanobis, we.mahalanobis_d2, we.mahalanobis_outlier);
    Count(e.hotelling, we.q_value, we.reject);
    Count(e.hotelling_uncorrected, we.hotelling.p_value, we.hotelling.p_value <= options.alpha);
  }
  std::vector<double> human_rates;
  for (const std::string& category : vocabulary.categories()) {
    ModelEvaluation::Category c;
    c.category = category;
    std::vector<double> rates;
    for (const WordEvaluation& we : e.words) {
      if (vocabulary.words()[we.word].category != category) continue;
      ++c.n_words;
      Count(c.mahalanobis, we.mahalanobis_d2, we.mahalanobis_outlier);
      Count(c.hotelling, we.q_value, we.reject);
      Count(c.hotelling_uncorrected, we.hotelling.p_value, we.hotelling.p_value <= options.alpha);
      const double human_rate = baseline.words[we.word].loo_fail_rate;
      if (!std::isnan(human_rate)) {
        rates.push_back(human_rate);
        human_rates.push_back(human_rate);
      }
    }
    c.human_fail_rate = stats::Mean(rates);
    if (c.n_words > 0) e.categories.push_back(std::move(c));
  }
  e.human_fail_rate = stats::Mean(human_rates);
  return e;
}

Result<Catalog> LoadCatalog(const std::filesystem::path& csv) {
  VISALIGN_ASSIGN_OR_RETURN(CsvTable t, ReadCsv(csv));
  VISALIGN_ASSIGN_OR_RETURN(size_t model_col, t.Column("model"));
  VISALIGN_ASSIGN_OR_RETURN(size_t arch_col, t.Column("architecture"));
  VISALIGN_ASSIGN_OR_RETURN(size_t data_col, t.Column("dataset"));
  const Result<size_t> open_clip_col = t.Column("open_clip_model");
  const Result<size_t> pretrained_col = t.Column("pretrained");
  Catalog catalog;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const auto& row = t.rows[i];
    if (row[model_col].empty() || row[arch_col].empty() || row[data_col].empty())
      return Status::InvalidArgument("empty field", t.Where(i), "model, architecture and dataset filled in");
    CatalogEntry entry{row[arch_col], row[data_col], open_clip_col.ok() ? row[*open_clip_col] : "",
                       pretrained_col.ok() ? row[*pretrained_col] : ""};
    if (!catalog.emplace(row[model_col], std::move(entry)).second)
      return Status::InvalidArgument("model " + QuoteText(row[model_col]) + " listed twice", t.Where(i),
                                     "one row per model");
  }
  return catalog;
}

Result<Catalog> LoadModelCatalog(const std::filesystem::path& override_csv, std::vector<std::string>& sources) {
  VISALIGN_ASSIGN_OR_RETURN(auto shipped_path, DataFile("hues/model_catalog.csv"));
  VISALIGN_ASSIGN_OR_RETURN(Catalog catalog, LoadCatalog(shipped_path));
  sources.push_back(shipped_path.string());
  if (override_csv.empty()) return catalog;
  VISALIGN_ASSIGN_OR_RETURN(Catalog overrides, LoadCatalog(override_csv));
  sources.push_back(override_csv.string());
  for (auto& [model, entry] : overrides) {
    // A row with only model,architecture,dataset keeps the shipped (open_clip_model, pretrained).
    if (const auto shipped = catalog.find(model); shipped != catalog.end() && entry.open_clip_model.empty()) {
      entry.open_clip_model = shipped->second.open_clip_model;
      entry.pretrained = shipped->second.pretrained;
    }
    catalog[model] = std::move(entry);
  }
  return catalog;
}

Spread SpreadOf(const std::vector<double>& values) {
  std::vector<double> finite;
  for (double v : values)
    if (std::isfinite(v)) finite.push_back(v);
  if (finite.empty()) return {kNaN, kNaN, kNaN, kNaN, kNaN};
  const auto [lo, hi] = std::minmax_element(finite.begin(), finite.end());
  return {stats::Quantile(finite, 0.5), stats::Quantile(finite, 0.25), stats::Quantile(finite, 0.75), *lo, *hi};
}

}  // namespace visalign::hues
