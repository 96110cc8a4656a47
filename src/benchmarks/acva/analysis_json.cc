// The typed Analysis as summary.json and items.jsonl rows (the layout docs/acva.md documents).
#include <cmath>

#include <fmt/format.h>

#include "visalign/benchmarks/acva/acva.h"
#include "visalign/core/benchmarks.h"
#include "visalign/core/results.h"
#include "visalign/core/untrusted.h"

namespace visalign::acva {
namespace {

Json IntervalJson(const stats::Interval& i) { return Json::array({i.lo, i.hi}); }

template <typename T>
Json OptionalJson(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

Json QuadrantsJson(const QuadrantShares& q) {
  return {{"genuine", q.genuine}, {"pseudo", q.pseudo}, {"metaphor", q.metaphor}, {"low", q.low}};
}
Json PointJson(const DiversityPoint& p) { return {{"d_img", p.d_img}, {"h", p.h}}; }

Json DiversityJson(const DiversityAnalysis& d) {
  return {{"n_groups", d.n_groups},
          {"d_img_mean", d.d_img_mean},
          {"d_img_ci", IntervalJson(d.d_img_ci)},
          {"d_met_mean", d.d_met_mean},
          {"d_met_ci", IntervalJson(d.d_met_ci)},
          {"h_mean", d.h_mean},
          {"h_ci", IntervalJson(d.h_ci)},
          {"quadrants", QuadrantsJson(d.quadrants)},
          {"median_split", {{"scope", MedianScopeName(d.median_scope)}, {"d_img", d.median.d_img}, {"h", d.median.h}}},
          {"on_median", PointJson(d.on_median)}};
}

Json ModelJson(const ModelAnalysis& m) {
  Json categories = Json::object();
  for (const auto& [cat, c] : m.by_category)
    categories[std::string(CategoryName(cat))] = {
        {"pass_rate", c.pass_rate}, {"pass_rate_ci", IntervalJson(c.pass_rate_ci)}, {"adequacy_mean", c.adequacy_mean}};
  Json frameworks = Json::object();
  for (const auto& [fw, t] : m.by_framework)
    frameworks[std::string(FrameworkName(fw))] = {
        {"n", t.n}, {"mean_rating", t.mean_rating}, {"missing_rate", t.missing_rate}};
  Json most_missed = Json::array();
  for (const MissedQuestion& q : m.most_missed)
    most_missed.push_back({{"concept", q.concept_id},
                           {"question", q.question_id},
                           {"framework", FrameworkName(q.framework)},
                           {"text_en", q.text_en},
                           {"n", q.tally.n},
                           {"missing_rate", q.tally.missing_rate},
                           {"mean_rating", q.tally.mean_rating}});
  Json pairs = Json::array();
  for (const PairAnalysis& p : m.pairs)
    pairs.push_back({{"a", p.a},
                     {"b", p.b},
                     {"embedding_loo_acc", p.embedding_loo_acc},
                     {"afc_acc", p.afc_acc},
                     {"afc_first_share", p.afc_first_share},
                     {"afc_trials", p.afc_trials},
                     {"afc_invalid", p.afc_invalid}});
  const DistinctivenessAnalysis& d = m.distinctiveness;
  return {{"model", m.model},
          {"tier", m.tier},
          {"n_images", m.n_images},
          {"n_invalid", m.n_invalid},
          {"pass_rate", m.pass_rate},
          {"pass_rate_ci", IntervalJson(m.pass_rate_ci)},
          {"adequacy_mean", m.adequacy_mean},
          {"adequacy_mean_ci", IntervalJson(m.adequacy_mean_ci)},
          {"by_category", categories},
          {"questions", {{"by_framework", frameworks}, {"most_missed", most_missed}}},
          {"diversity", {{"filtered", DiversityJson(m.filtered)}, {"unfiltered", DiversityJson(m.unfiltered)}}},
          {"distinctiveness",
           {{"embedding_loo_acc_mean", d.embedding_loo_acc_mean},
            {"embedding_loo_acc_ci", IntervalJson(d.embedding_loo_acc_ci)},
            {"afc_acc_mean", d.afc_acc_mean},
            {"afc_acc_ci", IntervalJson(d.afc_acc_ci)},
            {"afc_first_share", d.afc_first_share},
            {"afc_first_share_ci", IntervalJson(d.afc_first_share_ci)}}},
          {"pairs", pairs}};
}

Json CorrelationJson(const CorrelationAnalysis& c) {
  if (!c.error.empty()) return {{"n", c.n}, {"rho", nullptr}, {"p_value", nullptr}, {"error", c.error}};
  return {{"n", c.n}, {"rho", c.rho}, {"p_value", c.p_value}};
}

Json PooledCategoryJson(const PooledCategory& c) {
  return {{"n_images", c.n_images}, {"pass_rate", c.pass_rate}, {"adequacy_mean", c.adequacy_mean}};
}

Json PooledQuadrantsJson(const PooledQuadrants& q) {
  return {{"n_groups", q.n_groups},
          {"quadrants", QuadrantsJson(q.quadrants)},
          {"median_split", {{"scope", MedianScopeName(q.median_scope)}, {"d_img", q.median.d_img}, {"h", q.median.h}}},
          {"on_median", PointJson(q.on_median)}};
}

Json PooledJson(const PooledAnalysis& p) {
  Json categories = Json::object();
  for (const auto& [cat, c] : p.by_category) categories[std::string(CategoryName(cat))] = PooledCategoryJson(c);
  Json pairs = Json::array();
  for (const PooledPair& pair : p.pairs)
    pairs.push_back({{"a", pair.a}, {"b", pair.b}, {"n_models", pair.n_models}, {"afc_acc_mean", pair.afc_acc_mean}});
  Json out = PooledCategoryJson(p.all);
  out.update({{"by_category", categories},
              {"diversity",
               {{"filtered", PooledQuadrantsJson(p.filtered)}, {"unfiltered", PooledQuadrantsJson(p.unfiltered)}}},
              {"afc", {{"n_cells", p.afc_cells}, {"afc_acc_mean", p.afc_acc_mean}}},
              {"pairs", pairs}});
  return out;
}

// Which medians split the quadrants and where they came from; per mode the split point shared by
// every model (null with per-model medians: each model's is in its own diversity block).
Json QuadrantMediansJson(const Analysis& a) {
  const AnalysisOptions& o = a.options;
  Json out = {{"scope", MedianScopeName(o.median_scope)}};
  switch (o.median_scope) {
    case MedianScope::kPooled:
      out["source"] = fmt::format("the groups of the {} model(s) analysed together", a.models.size());
      break;
    case MedianScope::kFrozen:
      out["source"] = o.frozen_medians ? o.frozen_medians->source : "";
      break;
    case MedianScope::kModel:
      out["source"] = "each model's own groups";
      break;
  }
  for (const auto& [mode, q] :
       {std::pair{"filtered", &a.pooled.filtered}, std::pair{"unfiltered", &a.pooled.unfiltered}})
    out[mode] = o.median_scope == MedianScope::kModel ? Json(nullptr) : PointJson(q->median);
  return out;
}

Json WeightsJson(const WeightsComparison& w) {
  return {{"n_images", w.n_images},
          {"mean_change", w.mean_change},
          {"mean_abs_change", w.mean_abs_change},
          {"models_rank", CorrelationJson(w.models_rho)},
          {"same_order", w.same_order}};
}

}  // namespace

Json AnalysisJson(const Analysis& a) {
  Json models = Json::array();
  for (const ModelAnalysis& m : a.models) models.push_back(ModelJson(m));
  Json correlations = Json::object();
  for (const CorrelationAnalysis& c : a.correlations) correlations[c.name] = CorrelationJson(c);
  Json comparisons = Json::array();
  for (const PassRateComparison& c : a.comparisons)
    comparisons.push_back({{"a", c.a},
                           {"b", c.b},
                           {"metric", "pass_rate"},
                           {"n_concepts", c.n_concepts},
                           {"difference", c.difference},
                           {"ci", IntervalJson(c.ci)},
                           {"p_value", c.p_value},
                           {"significant", c.significant}});
  Json tiers = Json::array();
  for (const Tier& t : a.tiers) tiers.push_back({{"tier", t.tier}, {"models", t.models}});
  const AnalysisOptions& o = a.options;
  Json summary = ResultsHeader(benchmarks::kAcva);
  summary.update({
      {"concept_set", a.concept_set},
      {"n_concepts", a.n_concepts},
      {"n_pairs", a.n_pairs},
      {"options",
       {{"pass_threshold", o.pass_threshold},
        {"cluster_threshold", o.cluster_threshold},
        {"median_scope", MedianScopeName(o.median_scope)},
        {"alpha", o.alpha},
        {"bootstrap_resamples", o.bootstrap.resamples},
        {"bootstrap_seed", o.bootstrap.seed},
        {"ci_level", o.bootstrap.level}}},
      {"models", models},
      {"correlations", correlations},
      {"quadrant_medians", QuadrantMediansJson(a)},
      {"pooled", PooledJson(a.pooled)},
      {"weights_comparison", WeightsJson(a.weights)},
      {"comparisons", comparisons},
      {"tiers", tiers},
  });
  return summary;
}

Result<FrozenMedians> FrozenMediansFromSummary(const Json& summary, const std::string& source) {
  if (!summary.is_object() || summary.value("benchmark", Json()) != benchmarks::kAcva)
    return Status::InvalidArgument("not an ACVA summary", source, "the summary.json of `visalign acva analyze`");
  FrozenMedians out;
  out.source = source;
  for (const auto& [mode, point] : {std::pair{"filtered", &out.filtered}, std::pair{"unfiltered", &out.unfiltered}}) {
    const std::string field = std::string("pooled.diversity.") + mode + ".median_split";
    const Json* split = &summary;
    for (const char* key : {"pooled", "diversity", mode, "median_split"}) {
      auto it = split->is_object() ? split->find(key) : split->end();
      if (!split->is_object() || it == split->end())
        return Status::InvalidArgument("no " + field, source, "the medians an ACVA analysis split at");
      split = &*it;
    }
    for (const auto& [axis, value] : {std::pair{"d_img", &point->d_img}, std::pair{"h", &point->h}}) {
      auto it = split->find(axis);
      if (it == split->end() || !it->is_number() || !std::isfinite(it->get<double>()))
        return Status::InvalidArgument(field + "." + axis + " is " + (it == split->end() ? "missing" : QuoteJson(*it)),
                                       source, "a finite number (an analysis with at least one group of two images)");
      *value = it->get<double>();
    }
  }
  return out;
}

Json ImageAnalysisJson(const ImageAnalysis& a) {
  const JudgedImage& im = a.image;
  Json ratings = Json::array();
  for (const RubricAnswer& r : im.answers) {
    Json j = {{"question", r.question_id}, {"rating", OptionalJson(r.rating)}};
    if (!r.evidence.empty()) j["evidence"] = r.evidence;
    if (!r.error.empty()) j["error"] = r.error;
    ratings.push_back(j);
  }
  Json afc = Json::array();
  for (const AfcTrial& t : im.afc) {
    Json j = {{"pair", Json::array({t.pair_a, t.pair_b})},
              {"first", t.first},
              {"second", t.second},
              {"choice", OptionalJson(t.choice)}};
    if (t.choice) j["correct"] = *t.choice == im.concept_id;
    if (!t.error.empty()) j["error"] = t.error;
    afc.push_back(j);
  }
  Json item = {{"image_id", im.ImageId()},
               {"model", im.model},
               {"concept", im.concept_id},
               {"word", a.word},
               {"category", CategoryName(a.category)},
               {"k", im.k},
               {"path", im.path},
               {"sha256", im.sha256},
               {"adequacy", OptionalJson(a.adequacy)},
               {"adequacy_equal_weights", OptionalJson(a.adequacy_equal_weights)},
               {"pass", a.adequacy ? Json(a.pass) : Json(nullptr)},
               {"ratings", ratings},
               {"metaphor", OptionalJson(im.metaphor)},
               {"metaphor_cluster", a.metaphor_cluster >= 0 ? Json(a.metaphor_cluster) : Json(nullptr)},
               {"afc", afc}};
  if (!im.metaphor_error.empty()) item["metaphor_error"] = im.metaphor_error;
  return item;
}

}  // namespace visalign::acva
