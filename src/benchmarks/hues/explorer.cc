// The result explorer's numbers: filtered human answers per word and the evaluated models' top-5.
#include "visalign/benchmarks/hues/explorer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "visalign/core/benchmarks.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"

namespace visalign::hues {
namespace {

constexpr std::array<std::string_view, 3> kColorblindNames{"exclude", "include", "only"};

Json Number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

struct GroupSets {
  std::set<std::string> gender, age, language;
};

GroupSets Groups(const HumanData& humans) {
  GroupSets sets;
  for (const HumanAnswer& a : humans.answers) {
    AnswerGroups g = GroupsOf(a);
    sets.gender.insert(std::move(g.gender));
    sets.age.insert(std::move(g.age));
    sets.language.insert(std::move(g.language));
  }
  return sets;
}

Status CheckGroup(const std::string& value, const std::set<std::string>& known, const std::string& field) {
  if (value.empty() || known.count(value)) return Status::Ok();
  std::string names;
  for (const std::string& k : known) names += (names.empty() ? "" : ", ") + k;
  return Status::InvalidArgument("unknown group " + QuoteText(value), "human filter " + field, "one of " + names);
}

}  // namespace

bool HumanFilter::Accepts(const HumanAnswer& answer) const {
  if (colorblind == ColorblindFilter::kExclude && answer.colorblind) return false;
  if (colorblind == ColorblindFilter::kOnly && !answer.colorblind) return false;
  if (gender.empty() && age.empty() && language.empty()) return true;
  const AnswerGroups g = GroupsOf(answer);
  return (gender.empty() || g.gender == gender) && (age.empty() || g.age == age) &&
         (language.empty() || g.language == language);
}

Result<HumanFilter> ParseHumanFilter(const std::string& colorblind, const std::string& gender, const std::string& age,
                                     const std::string& language, const HumanData& humans) {
  HumanFilter filter;
  if (!colorblind.empty()) {
    auto it = std::find(kColorblindNames.begin(), kColorblindNames.end(), colorblind);
    if (it == kColorblindNames.end())
      return Status::InvalidArgument("unknown choice " + QuoteText(colorblind), "human filter colorblind",
                                     "exclude, include or only");
    filter.colorblind = static_cast<ColorblindFilter>(it - kColorblindNames.begin());
  }
  const GroupSets known = Groups(humans);
  VISALIGN_RETURN_IF_ERROR(CheckGroup(gender, known.gender, "gender"));
  VISALIGN_RETURN_IF_ERROR(CheckGroup(age, known.age, "age"));
  VISALIGN_RETURN_IF_ERROR(CheckGroup(language, known.language, "language"));
  filter.gender = gender;
  filter.age = age;
  filter.language = language;
  return filter;
}

Json HumanFilterChoicesJson(const HumanData& humans) {
  const GroupSets known = Groups(humans);
  return {{"colorblind", kColorblindNames}, {"gender", known.gender}, {"age", known.age}, {"language", known.language}};
}

WordView ViewWord(const HumanData& humans, const Board& board, int word, const HumanFilter& filter, double d2) {
  WordView view;
  view.word = word;
  view.d2 = d2;
  std::vector<stats::Vec2> points;
  for (const HumanAnswer& a : humans.answers)
    if (a.word == word && filter.Accepts(a)) {
      ++view.counts[static_cast<size_t>(a.cell)];
      points.push_back(board.cell(a.cell).xy);
    }
  view.n = static_cast<int>(points.size());
  view.mean = points.empty() ? stats::Vec2{std::nan(""), std::nan("")} : stats::Mean(points);
  if (Result<stats::Mat2> cov = stats::Covariance(points); cov.ok() && !stats::IsNearSingular(*cov)) {
    view.cov = *cov;
    view.ellipse = stats::MahalanobisEllipse(view.mean, *cov, d2, kEllipseSegments);
  }
  return view;
}

Json WordViewJson(const WordView& view, const Vocabulary& vocabulary) {
  const Word& w = vocabulary.words()[static_cast<size_t>(view.word)];
  Json ellipse = Json::array();
  for (const stats::Vec2& p : view.ellipse) ellipse.push_back({p[0], p[1]});
  return {{"word", w.en},
          {"category", w.category},
          {"n", view.n},
          {"counts", view.counts},
          {"mean", view.n > 0 ? Json{view.mean[0], view.mean[1]} : Json(nullptr)},
          {"cov", view.cov ? Json(*view.cov) : Json(nullptr)},
          {"d2", Number(view.d2)},
          {"ellipse", std::move(ellipse)}};
}

Result<std::vector<ModelPredictions>> LoadEvaluatedModels(const std::filesystem::path& results_dir,
                                                          const Vocabulary& vocabulary, const Board& board) {
  const std::string where = "results folder " + results_dir.string();
  Result<std::string> text = ReadFile(results_dir / "summary.json");
  if (!text.ok()) return text.status().WithContext(where);
  Result<Json> summary = ParseJson(*text);
  if (!summary.ok()) return summary.status().WithContext(where);
  if (!summary->is_object() || StringMember(*summary, "benchmark") != benchmarks::kHues)
    return Status::InvalidArgument("summary.json is not a Hues and Cues summary", where,
                                   "the output folder of `visalign hues evaluate`");
  const auto inputs = summary->find("inputs");
  const Json* predictions = inputs != summary->end() && inputs->is_object() && inputs->contains("predictions")
                                ? &(*inputs)["predictions"]
                                : nullptr;
  if (!predictions || !predictions->is_array())
    return Status::InvalidArgument("summary.json lists no inputs.predictions", where,
                                   "the output folder of `visalign hues evaluate`");
  VISALIGN_ASSIGN_OR_RETURN(std::vector<NonsenseWord> nonsense, AllNonsenseWords());
  std::vector<ModelPredictions> models;
  for (const Json& p : *predictions) {
    const std::string path = StringMember(p, "path"), name = StringMember(p, "model");
    std::error_code ec;
    const std::filesystem::path file = std::filesystem::path(path).is_absolute() || std::filesystem::exists(path, ec)
                                           ? std::filesystem::path(path)
                                           : results_dir / path;
    Result<std::string> sha = Sha256File(file);
    if (!sha.ok() || *sha != StringMember(p, "sha256"))
      return Status::InvalidArgument(fmt::format("the predictions {} are {} since the evaluation", QuoteText(path),
                                                 sha.ok() ? "changed" : "not readable"),
                                     where, "the prediction files summary.json names, as they were evaluated");
    VISALIGN_ASSIGN_OR_RETURN(std::vector<ModelPredictions> loaded,
                              LoadPredictions(file, PredictionFormat::kAuto, vocabulary, board, nonsense));
    auto it = std::find_if(loaded.begin(), loaded.end(), [&](const ModelPredictions& m) { return m.name == name; });
    if (it == loaded.end() && loaded.size() == 1) it = loaded.begin();
    if (it == loaded.end())
      return Status::InvalidArgument(fmt::format("{} holds no model {}", file.string(), QuoteText(name)), where,
                                     "the models summary.json names");
    it->name = name;
    models.push_back(std::move(*it));
  }
  return models;
}

Json ModelTopJson(const ModelPredictions& model, int word, const Vocabulary& vocabulary) {
  Json top = Json::array();
  const std::vector<Prediction>& predictions = model.words[static_cast<size_t>(word)];
  for (size_t rank = 0; rank < predictions.size(); ++rank)
    top.push_back({{"cell", CellName(predictions[rank].cell)},
                   {"rank", rank + 1},
                   {"similarity", Number(predictions[rank].similarity)}});
  return {{"model", model.name}, {"word", vocabulary.words()[static_cast<size_t>(word)].en}, {"top", std::move(top)}};
}

}  // namespace visalign::hues
