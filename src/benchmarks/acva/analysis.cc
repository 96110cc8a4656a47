// From judged images to summary.json: adequacy, diversity, distinctiveness, bootstrap intervals,
// correlations and tiers. Definitions: docs/acva.md ("Metrics" and "Statistics").
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "visalign/benchmarks/acva/acva.h"

namespace visalign::acva {
namespace {

using nlohmann::json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// A rubric component counts as "missing" from an image when its rating is below this level.
constexpr double kMissingBelow = 0.5;
constexpr size_t kMinGroupImages = 2;

enum class Mode { kFiltered, kUnfiltered };
constexpr std::array<Mode, 2> kModes = {Mode::kFiltered, Mode::kUnfiltered};
std::string_view ModeName(Mode m) { return m == Mode::kFiltered ? "filtered" : "unfiltered"; }

double MeanOf(const std::vector<double>& v) {
  double s = 0;
  size_t n = 0;
  for (double x : v)
    if (std::isfinite(x)) {
      s += x;
      ++n;
    }
  return n ? s / static_cast<double>(n) : kNaN;
}

// What the analysis derives for one image.
struct ImageFacts {
  const JudgedImage* image = nullptr;
  size_t concept_index = 0;
  std::optional<double> adequacy, adequacy_equal;
  bool pass = false;
  int cluster = -1;  // metaphor cluster within the concept; -1 without a valid description
};

// Diversity of one (model, concept) group under one mode.
struct GroupDiversity {
  size_t concept_index = 0;
  double d_img = kNaN, d_met = kNaN, h = kNaN;
  double adequacy_mean = kNaN;
};

struct ModelData {
  std::string name;
  std::vector<std::vector<size_t>> by_concept;  // image indices per concept
  std::map<Mode, std::vector<GroupDiversity>> groups;
};

// Per-unit numerators/denominators restricted to units with data, with their bootstrap interval.
struct UnitRatio {
  std::vector<double> num, den;
  void Add(double n, double d) {
    num.push_back(n);
    den.push_back(d);
  }
  // A per-unit value, counted only where it is defined (finite).
  void AddValue(double x) { std::isfinite(x) ? Add(x, 1) : Add(0, 0); }
  double Value() const {
    double n = 0, d = 0;
    for (size_t i = 0; i < num.size(); ++i) {
      n += num[i];
      d += den[i];
    }
    return d > 0 ? n / d : kNaN;
  }
  json Interval(const stats::BootstrapOptions& options) const {
    std::vector<double> n2, d2;
    for (size_t i = 0; i < num.size(); ++i)
      if (den[i] > 0) {
        n2.push_back(num[i]);
        d2.push_back(den[i]);
      }
    const stats::Interval ci = stats::BootstrapInterval(n2.size(), stats::RatioOfSums(n2, d2), options);
    return json::array({ci.lo, ci.hi});
  }
};

json CorrelationJson(const std::vector<double>& x, const std::vector<double>& y, const std::string& what) {
  auto r = stats::SpearmanCorrelation(x, y, what);
  if (!r.ok()) return {{"n", x.size()}, {"rho", nullptr}, {"p_value", nullptr}, {"error", r.status().what()}};
  return {{"n", r->n}, {"rho", r->rho}, {"p_value", r->p_value}};
}

class Analyzer {
 public:
  Analyzer(const ConceptSet& set, const std::vector<JudgedImage>& images, const AnalysisOptions& options)
      : set_(set), images_(images), options_(options) {}

  Result<AnalysisResult> Run() {
    VISALIGN_RETURN_IF_ERROR(IndexImages());
    ClusterMetaphors();
    for (ModelData& m : models_)
      for (Mode mode : kModes) m.groups[mode] = Diversity(m, mode);
    for (Mode mode : kModes) pooled_medians_[mode] = PooledMedians(mode);

    AnalysisResult result;
    const Ranking ranking = Rank();
    auto [comparisons, tiers, tier_of] = Tiers(ranking);
    json models = json::array();
    for (size_t mi : ranking.order) models.push_back(ModelJson(models_[mi], tier_of[mi]));
    result.summary = {
        {"benchmark", "acva"},
        {"concept_set", set_.fingerprint},
        {"n_concepts", set_.concepts.size()},
        {"n_pairs", set_.pairs.size()},
        {"options",
         {{"pass_threshold", options_.pass_threshold},
          {"cluster_threshold", options_.cluster_threshold},
          {"median_scope", MedianScopeName(options_.median_scope)},
          {"alpha", options_.alpha},
          {"bootstrap_resamples", options_.bootstrap.resamples},
          {"bootstrap_seed", options_.bootstrap.seed},
          {"ci_level", options_.bootstrap.level}}},
        {"models", models},
        {"correlations", Correlations()},
        {"comparisons", comparisons},
        {"tiers", tiers},
    };
    for (const ImageFacts& f : facts_) result.items.push_back(ItemJson(f));
    return result;
  }

 private:
  Status IndexImages() {
    std::map<std::string, size_t> model_index;
    for (const JudgedImage& img : images_) {
      auto c = set_.IndexOf(img.concept_id);
      if (!c) return Status::InvalidArgument("image of unknown concept \"" + img.concept_id + "\"", img.ImageId(),
                                             "a concept of the concept set");
      const Concept& cpt = set_.concepts[*c];
      if (img.answers.size() != cpt.rubric.size())
        return Status::InvalidArgument(std::to_string(img.answers.size()) + " rubric answers", img.ImageId(),
                                       std::to_string(cpt.rubric.size()) + " (one per rubric question)");
      for (size_t q = 0; q < img.answers.size(); ++q)
        if (img.answers[q].question_id != cpt.rubric[q].id)
          return Status::InvalidArgument("answer " + std::to_string(q + 1) + " is for question \"" +
                                             img.answers[q].question_id + "\"",
                                         img.ImageId(), "question \"" + cpt.rubric[q].id + "\" (rubric order)");
      auto [it, inserted] = model_index.emplace(img.model, models_.size());
      if (inserted) {
        models_.push_back({img.model, std::vector<std::vector<size_t>>(set_.concepts.size()), {}});
      }
      ImageFacts f;
      f.image = &img;
      f.concept_index = *c;
      f.adequacy = Adequacy(cpt, img.answers, /*equal_weights=*/false);
      f.adequacy_equal = Adequacy(cpt, img.answers, /*equal_weights=*/true);
      f.pass = f.adequacy && *f.adequacy >= options_.pass_threshold;
      models_[it->second].by_concept[*c].push_back(facts_.size());
      facts_.push_back(f);
    }
    return Status::Ok();
  }

  // A model's descriptions of a concept are clustered among themselves, so its H does not depend on
  // the other models analyzed.
  void ClusterMetaphors() {
    for (const ModelData& m : models_)
      for (const std::vector<size_t>& group : m.by_concept) {
        std::vector<size_t> described;
        std::vector<Embedding> vectors;
        for (size_t i : group)
          if (facts_[i].image->metaphor && !facts_[i].image->metaphor_embedding.empty()) {
            described.push_back(i);
            vectors.push_back(facts_[i].image->metaphor_embedding);
          }
        const std::vector<int> labels = AverageLinkageClusters(vectors, options_.cluster_threshold);
        for (size_t j = 0; j < described.size(); ++j) facts_[described[j]].cluster = labels[j];
      }
  }

  std::vector<GroupDiversity> Diversity(const ModelData& m, Mode mode) const {
    std::vector<GroupDiversity> groups;
    for (size_t c = 0; c < m.by_concept.size(); ++c) {
      std::vector<size_t> selected;
      for (size_t i : m.by_concept[c])
        if (mode == Mode::kUnfiltered || facts_[i].pass) selected.push_back(i);
      if (selected.size() < kMinGroupImages) continue;
      GroupDiversity g;
      g.concept_index = c;
      std::vector<Embedding> img, met;
      std::vector<int> labels;
      std::vector<double> adequacy;
      for (size_t i : selected) {
        const JudgedImage& im = *facts_[i].image;
        if (!im.image_embedding.empty()) img.push_back(im.image_embedding);
        if (facts_[i].cluster >= 0) {
          met.push_back(im.metaphor_embedding);
          labels.push_back(facts_[i].cluster);
        }
        adequacy.push_back(facts_[i].adequacy.value_or(kNaN));
      }
      g.d_img = MeanPairwiseCosineDistance(img);
      g.d_met = MeanPairwiseCosineDistance(met);
      g.h = labels.size() >= kMinGroupImages ? LabelEntropyBits(labels) : kNaN;
      g.adequacy_mean = MeanOf(adequacy);
      groups.push_back(g);
    }
    return groups;
  }

  // The groups of `mode` with both D_img and H defined.
  static std::vector<DiversityPoint> SplitPoints(const ModelData& m, Mode mode) {
    std::vector<DiversityPoint> points;
    for (const GroupDiversity& g : m.groups.at(mode))
      if (std::isfinite(g.d_img) && std::isfinite(g.h)) points.push_back({g.d_img, g.h});
    return points;
  }

  static DiversityPoint Medians(const std::vector<DiversityPoint>& points) {
    std::vector<double> d, h;
    for (const DiversityPoint& p : points) {
      d.push_back(p.d_img);
      h.push_back(p.h);
    }
    return {stats::Quantile(d, 0.5), stats::Quantile(h, 0.5)};
  }

  // Medians over the split points of every model.
  DiversityPoint PooledMedians(Mode mode) const {
    std::vector<DiversityPoint> all;
    for (const ModelData& m : models_) {
      const std::vector<DiversityPoint> points = SplitPoints(m, mode);
      all.insert(all.end(), points.begin(), points.end());
    }
    return Medians(all);
  }

  json DiversityJson(const ModelData& m, Mode mode) const {
    const auto& groups = m.groups.at(mode);
    const std::vector<DiversityPoint> points = SplitPoints(m, mode);
    const DiversityPoint median =
        options_.median_scope == MedianScope::kPooled ? pooled_medians_.at(mode) : Medians(points);
    const QuadrantShares q = MedianSplit(points, median.d_img, median.h);
    UnitRatio d_img, d_met, h;
    for (const GroupDiversity& g : groups) {
      d_img.AddValue(g.d_img);
      d_met.AddValue(g.d_met);
      h.AddValue(g.h);
    }
    const json quadrants = {{"genuine", q.genuine}, {"pseudo", q.pseudo}, {"metaphor", q.metaphor}, {"low", q.low}};
    return {{"n_groups", groups.size()},
            {"d_img_mean", d_img.Value()},
            {"d_img_ci", d_img.Interval(options_.bootstrap)},
            {"d_met_mean", d_met.Value()},
            {"d_met_ci", d_met.Interval(options_.bootstrap)},
            {"h_mean", h.Value()},
            {"h_ci", h.Interval(options_.bootstrap)},
            {"quadrants", quadrants},
            {"median_split",
             {{"scope", MedianScopeName(options_.median_scope)}, {"d_img", median.d_img}, {"h", median.h}}}};
  }

  struct PairFacts {
    double loo = kNaN, afc = kNaN, first_share = kNaN, adequacy_mean = kNaN;
    size_t trials = 0, invalid = 0;
  };

  PairFacts Pair(const ModelData& m, const ConceptPair& p) const {
    PairFacts out;
    const size_t ca = *set_.IndexOf(p.a), cb = *set_.IndexOf(p.b);
    std::vector<Embedding> ea, eb;
    std::vector<double> adequacy;
    // Per order (a first / b first): correct and valid trial counts.
    std::array<double, 2> correct{}, valid{};
    double firsts = 0;
    for (size_t c : {ca, cb})
      for (size_t i : m.by_concept[c]) {
        const JudgedImage& im = *facts_[i].image;
        if (!im.image_embedding.empty()) (c == ca ? ea : eb).push_back(im.image_embedding);
        adequacy.push_back(facts_[i].adequacy.value_or(kNaN));
        for (const AfcTrial& t : im.afc) {
          if (t.pair_a != p.a || t.pair_b != p.b) continue;
          ++out.trials;
          if (!t.choice) {
            ++out.invalid;
            continue;
          }
          const size_t order = t.first == p.a ? 0 : 1;
          valid[order] += 1;
          if (*t.choice == im.concept_id) correct[order] += 1;
          if (*t.choice == t.first) firsts += 1;
        }
      }
    out.loo = LeaveOneOutCentroidAccuracy(ea, eb);
    std::vector<double> per_order;
    for (size_t o = 0; o < 2; ++o)
      if (valid[o] > 0) per_order.push_back(correct[o] / valid[o]);
    out.afc = MeanOf(per_order);
    const double all_valid = valid[0] + valid[1];
    out.first_share = all_valid > 0 ? firsts / all_valid : kNaN;
    out.adequacy_mean = MeanOf(adequacy);
    return out;
  }

  json ModelJson(const ModelData& m, size_t tier) const {
    UnitRatio pass, adequacy;
    size_t n_images = 0, n_invalid = 0;
    std::map<Category, std::pair<UnitRatio, UnitRatio>> by_category;
    struct QuestionTally {
      double sum = 0, missing = 0, n = 0;
    };
    std::map<std::pair<size_t, size_t>, QuestionTally> questions;
    std::map<Framework, QuestionTally> frameworks;
    for (size_t c = 0; c < m.by_concept.size(); ++c) {
      double passes = 0, valid = 0, adequacy_sum = 0;
      for (size_t i : m.by_concept[c]) {
        const ImageFacts& f = facts_[i];
        ++n_images;
        if (!f.adequacy) ++n_invalid;
        for (size_t q = 0; q < f.image->answers.size(); ++q) {
          const auto& rating = f.image->answers[q].rating;
          if (!rating) continue;
          for (QuestionTally* t : {&questions[{c, q}], &frameworks[set_.concepts[c].rubric[q].framework]}) {
            t->sum += *rating;
            t->missing += *rating < kMissingBelow ? 1 : 0;
            t->n += 1;
          }
        }
        if (!f.adequacy) continue;
        valid += 1;
        passes += f.pass ? 1 : 0;
        adequacy_sum += *f.adequacy;
      }
      if (m.by_concept[c].empty()) continue;
      pass.Add(passes, valid);
      adequacy.Add(adequacy_sum, valid);
      auto& [cat_pass, cat_adequacy] = by_category[set_.concepts[c].category];
      cat_pass.Add(passes, valid);
      cat_adequacy.Add(adequacy_sum, valid);
    }
    json categories = json::object();
    for (const auto& [cat, ratios] : by_category)
      categories[std::string(CategoryName(cat))] = {{"pass_rate", ratios.first.Value()},
                                                    {"pass_rate_ci", ratios.first.Interval(options_.bootstrap)},
                                                    {"adequacy_mean", ratios.second.Value()}};
    json framework_json = json::object();
    for (const auto& [fw, t] : frameworks)
      framework_json[std::string(FrameworkName(fw))] = {{"n", t.n}, {"mean_rating", t.sum / t.n},
                                                        {"missing_rate", t.missing / t.n}};
    std::vector<std::pair<std::pair<size_t, size_t>, QuestionTally>> ranked(questions.begin(), questions.end());
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) {
      const double mx = x.second.missing / x.second.n, my = y.second.missing / y.second.n;
      if (mx != my) return mx > my;
      return x.second.sum / x.second.n < y.second.sum / y.second.n;
    });
    json most_missed = json::array();
    for (size_t r = 0; r < ranked.size() && most_missed.size() < options_.most_missed; ++r) {
      const auto& [key, t] = ranked[r];
      if (t.missing == 0) break;  // ranked by missing rate: the rest are never missing
      const Concept& cpt = set_.concepts[key.first];
      const RubricQuestion& q = cpt.rubric[key.second];
      most_missed.push_back({{"concept", cpt.id}, {"question", q.id}, {"framework", FrameworkName(q.framework)},
                             {"text_en", q.text_en}, {"n", t.n}, {"missing_rate", t.missing / t.n},
                             {"mean_rating", t.sum / t.n}});
    }

    json pairs = json::array();
    UnitRatio loo, afc, first_share;
    for (const ConceptPair& p : set_.pairs) {
      const PairFacts pf = Pair(m, p);
      pairs.push_back({{"a", p.a}, {"b", p.b}, {"embedding_loo_acc", pf.loo}, {"afc_acc", pf.afc},
                       {"afc_first_share", pf.first_share}, {"afc_trials", pf.trials},
                       {"afc_invalid", pf.invalid}});
      loo.AddValue(pf.loo);
      afc.AddValue(pf.afc);
      first_share.AddValue(pf.first_share);
    }
    json diversity = json::object();
    for (Mode mode : kModes) diversity[std::string(ModeName(mode))] = DiversityJson(m, mode);
    return {{"model", m.name},
            {"tier", tier},
            {"n_images", n_images},
            {"n_invalid", n_invalid},
            {"pass_rate", pass.Value()},
            {"pass_rate_ci", pass.Interval(options_.bootstrap)},
            {"adequacy_mean", adequacy.Value()},
            {"adequacy_mean_ci", adequacy.Interval(options_.bootstrap)},
            {"by_category", categories},
            {"questions", {{"by_framework", framework_json}, {"most_missed", most_missed}}},
            {"diversity", diversity},
            {"distinctiveness",
             {{"embedding_loo_acc_mean", loo.Value()},
              {"embedding_loo_acc_ci", loo.Interval(options_.bootstrap)},
              {"afc_acc_mean", afc.Value()},
              {"afc_acc_ci", afc.Interval(options_.bootstrap)},
              {"afc_first_share", first_share.Value()},
              {"afc_first_share_ci", first_share.Interval(options_.bootstrap)}}},
            {"pairs", pairs}};
  }

  json Correlations() const {
    json out = json::object();
    // Concept level: mean adequacy over every model's images of the concept.
    std::vector<double> concept_adequacy(set_.concepts.size()), concept_adequacy_equal(set_.concepts.size());
    {
      std::vector<std::vector<double>> custom(set_.concepts.size()), equal(set_.concepts.size());
      for (const ImageFacts& f : facts_) {
        if (!f.adequacy) continue;
        custom[f.concept_index].push_back(*f.adequacy);
        equal[f.concept_index].push_back(*f.adequacy_equal);
      }
      for (size_t c = 0; c < set_.concepts.size(); ++c) {
        concept_adequacy[c] = MeanOf(custom[c]);
        concept_adequacy_equal[c] = MeanOf(equal[c]);
      }
    }
    std::set<std::string> rating_names;
    for (const Concept& c : set_.concepts)
      for (const auto& [name, value] : c.ratings) rating_names.insert(name);
    for (const std::string& name : rating_names) {
      std::vector<double> x, y;
      for (size_t c = 0; c < set_.concepts.size(); ++c) {
        auto it = set_.concepts[c].ratings.find(name);
        if (it == set_.concepts[c].ratings.end() || !std::isfinite(concept_adequacy[c])) continue;
        x.push_back(concept_adequacy[c]);
        y.push_back(it->second);
      }
      out["adequacy_vs_" + name] = CorrelationJson(x, y, "adequacy vs " + name + " (concepts)");
    }
    std::vector<double> g_adequacy, g_d, h_adequacy, g_h;
    for (const ModelData& m : models_)
      for (const GroupDiversity& g : m.groups.at(Mode::kUnfiltered)) {
        if (!std::isfinite(g.adequacy_mean)) continue;
        if (std::isfinite(g.d_img)) {
          g_adequacy.push_back(g.adequacy_mean);
          g_d.push_back(g.d_img);
        }
        if (std::isfinite(g.h)) {
          h_adequacy.push_back(g.adequacy_mean);
          g_h.push_back(g.h);
        }
      }
    out["adequacy_vs_d_img"] = CorrelationJson(g_adequacy, g_d, "adequacy vs D_img (model x concept groups)");
    out["adequacy_vs_h"] = CorrelationJson(h_adequacy, g_h, "adequacy vs H (model x concept groups)");
    std::vector<double> p_adequacy, p_afc;
    for (const ModelData& m : models_)
      for (const ConceptPair& p : set_.pairs) {
        const PairFacts pf = Pair(m, p);
        if (!std::isfinite(pf.adequacy_mean) || !std::isfinite(pf.afc)) continue;
        p_adequacy.push_back(pf.adequacy_mean);
        p_afc.push_back(pf.afc);
      }
    out["adequacy_vs_afc"] = CorrelationJson(p_adequacy, p_afc, "adequacy vs 2AFC accuracy (model x pair)");
    std::vector<double> equal_images, custom_images;
    for (const ImageFacts& f : facts_)
      if (f.adequacy) {
        custom_images.push_back(*f.adequacy);
        equal_images.push_back(*f.adequacy_equal);
      }
    out["equal_vs_custom_weights_images"] =
        CorrelationJson(equal_images, custom_images, "equal vs custom weights (images)");
    std::vector<double> equal_concepts, custom_concepts;
    for (size_t c = 0; c < set_.concepts.size(); ++c)
      if (std::isfinite(concept_adequacy[c])) {
        custom_concepts.push_back(concept_adequacy[c]);
        equal_concepts.push_back(concept_adequacy_equal[c]);
      }
    out["equal_vs_custom_weights_concepts"] =
        CorrelationJson(equal_concepts, custom_concepts, "equal vs custom weights (concepts)");
    return out;
  }

  // Models in descending pass rate (undefined last), equal rates by name, so the order does not
  // depend on the order of the input images.
  struct Ranking {
    std::vector<size_t> order;                                     // model indices
    std::vector<std::vector<std::pair<double, double>>> per_concept;  // per model: (passes, valid) per concept
  };
  Ranking Rank() const {
    Ranking r;
    std::vector<double> pass_rate;
    for (const ModelData& m : models_) {
      double passes = 0, valid = 0;
      r.per_concept.emplace_back();
      for (const std::vector<size_t>& images : m.by_concept) {
        double p = 0, v = 0;
        for (size_t i : images)
          if (facts_[i].adequacy) {
            v += 1;
            p += facts_[i].pass ? 1 : 0;
          }
        r.per_concept.back().push_back({p, v});
        passes += p;
        valid += v;
      }
      pass_rate.push_back(valid > 0 ? passes / valid : kNaN);
      r.order.push_back(r.order.size());
    }
    std::sort(r.order.begin(), r.order.end(), [&](size_t x, size_t y) {
      const double px = pass_rate[x], py = pass_rate[y];
      if (std::isnan(px) != std::isnan(py)) return std::isnan(py);
      if (px != py && !std::isnan(px)) return px > py;
      return models_[x].name < models_[y].name;
    });
    return r;
  }

  struct TierResult {
    json comparisons, tiers;
    std::vector<size_t> tier_of;  // per model index
  };

  // Pass-rate comparisons between every two models (paired bootstrap over the concepts both have)
  // and tiers: in ranking order, a model joins the current tier unless it is significantly below the
  // tier's first model.
  TierResult Tiers(const Ranking& ranking) const {
    const auto& per_concept = ranking.per_concept;
    auto compare = [&](size_t a, size_t b) {
      std::vector<double> na, da, nb, db;
      for (size_t c = 0; c < set_.concepts.size(); ++c) {
        if (per_concept[a][c].second == 0 || per_concept[b][c].second == 0) continue;
        na.push_back(per_concept[a][c].first);
        da.push_back(per_concept[a][c].second);
        nb.push_back(per_concept[b][c].first);
        db.push_back(per_concept[b][c].second);
      }
      return std::pair{na.size(), stats::PairedBootstrap(na.size(), stats::RatioOfSums(na, da),
                                                         stats::RatioOfSums(nb, db), options_.bootstrap)};
    };
    const std::vector<size_t>& order = ranking.order;
    TierResult out{json::array(), json::array(), std::vector<size_t>(models_.size(), 0)};
    for (size_t x = 0; x < order.size(); ++x)
      for (size_t y = x + 1; y < order.size(); ++y) {
        const auto [n, d] = compare(order[x], order[y]);
        out.comparisons.push_back({{"a", models_[order[x]].name}, {"b", models_[order[y]].name},
                                   {"metric", "pass_rate"}, {"n_concepts", n}, {"difference", d.difference},
                                   {"ci", json::array({d.interval.lo, d.interval.hi})}, {"p_value", d.p_value},
                                   {"significant", std::isfinite(d.p_value) && d.p_value < options_.alpha}});
      }
    size_t leader = 0;
    for (size_t x = 0; x < order.size(); ++x) {
      bool new_tier = x == 0;
      if (x > 0) {
        const auto [n, d] = compare(order[leader], order[x]);
        new_tier = std::isfinite(d.p_value) && d.p_value < options_.alpha;
      }
      if (new_tier) {
        leader = x;
        out.tiers.push_back({{"tier", out.tiers.size() + 1}, {"models", json::array()}});
      }
      out.tiers.back()["models"].push_back(models_[order[x]].name);
      out.tier_of[order[x]] = out.tiers.size();
    }
    return out;
  }

  json ItemJson(const ImageFacts& f) const {
    const JudgedImage& im = *f.image;
    const Concept& cpt = set_.concepts[f.concept_index];
    json ratings = json::array();
    for (const RubricAnswer& a : im.answers) {
      json r = {{"question", a.question_id}, {"rating", a.rating ? json(*a.rating) : json(nullptr)}};
      if (!a.evidence.empty()) r["evidence"] = a.evidence;
      if (!a.error.empty()) r["error"] = a.error;
      ratings.push_back(r);
    }
    json afc = json::array();
    for (const AfcTrial& t : im.afc) {
      json j = {{"pair", json::array({t.pair_a, t.pair_b})}, {"first", t.first}, {"second", t.second},
                {"choice", t.choice ? json(*t.choice) : json(nullptr)}};
      if (t.choice) j["correct"] = *t.choice == im.concept_id;
      if (!t.error.empty()) j["error"] = t.error;
      afc.push_back(j);
    }
    json item = {{"image_id", im.ImageId()},
                 {"model", im.model},
                 {"concept", cpt.id},
                 {"word", cpt.word},
                 {"category", CategoryName(cpt.category)},
                 {"k", im.k},
                 {"path", im.path},
                 {"sha256", im.sha256},
                 {"adequacy", f.adequacy ? json(*f.adequacy) : json(nullptr)},
                 {"adequacy_equal_weights", f.adequacy_equal ? json(*f.adequacy_equal) : json(nullptr)},
                 {"pass", f.adequacy ? json(f.pass) : json(nullptr)},
                 {"ratings", ratings},
                 {"metaphor", im.metaphor ? json(*im.metaphor) : json(nullptr)},
                 {"metaphor_cluster", f.cluster >= 0 ? json(f.cluster) : json(nullptr)},
                 {"afc", afc}};
    if (!im.metaphor_error.empty()) item["metaphor_error"] = im.metaphor_error;
    return item;
  }

  const ConceptSet& set_;
  const std::vector<JudgedImage>& images_;
  const AnalysisOptions& options_;
  std::vector<ImageFacts> facts_;
  std::vector<ModelData> models_;
  std::map<Mode, DiversityPoint> pooled_medians_;
};

}  // namespace

std::string_view MedianScopeName(MedianScope scope) { return scope == MedianScope::kModel ? "model" : "pooled"; }

Result<AnalysisResult> Analyze(const ConceptSet& set, const std::vector<JudgedImage>& images,
                               const AnalysisOptions& options) {
  if (!(options.pass_threshold >= 0 && options.pass_threshold <= 1))
    return Status::InvalidArgument("pass threshold " + std::to_string(options.pass_threshold), "--pass-threshold",
                                   "a number in [0, 1]");
  if (!(options.cluster_threshold >= 0 && options.cluster_threshold <= 2))
    return Status::InvalidArgument("cluster threshold " + std::to_string(options.cluster_threshold),
                                   "--cluster-threshold", "a cosine distance in [0, 2]");
  return Analyzer(set, images, options).Run();
}

}  // namespace visalign::acva
