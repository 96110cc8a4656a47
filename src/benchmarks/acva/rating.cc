// Human ratings of ACVA images on the judge's rubric and scale, and their export for `acva agreement`.
#include "visalign/benchmarks/acva/rating.h"

#include <algorithm>
#include <map>
#include <set>

#include "visalign/core/format.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"

namespace visalign::acva {

Json RatingFormJson(const Concept& cpt, const JudgedImage& image, Language language) {
  Json questions = Json::array();
  for (const RubricQuestion& q : cpt.rubric)
    questions.push_back({{"id", q.id}, {"text", language == Language::kZh ? q.text_zh : q.text_en}});
  const RatingScale scale = JudgeRatingScale(language);
  return {{"image", image.ImageId()},
          {"concept", {{"id", cpt.id}, {"word", cpt.word}, {"gloss", cpt.gloss_en}}},
          {"language", LanguageName(language)},
          {"questions", std::move(questions)},
          {"scale", {{"levels", scale.levels}, {"low", scale.low}, {"high", scale.high}}}};
}

Result<double> RatingScore(const Concept& cpt, const Json& answers, const std::string& where) {
  if (!answers.is_object())
    return Status::InvalidArgument("answers are " + QuoteJson(answers), where,
                                   "an object {\"<question id>\": rating} with every rubric question of " + cpt.id);
  std::vector<RubricAnswer> rated;
  for (const RubricQuestion& q : cpt.rubric) {
    auto it = answers.find(q.id);
    if (it == answers.end())
      return Status::InvalidArgument("no answer to question " + QuoteText(q.id), where,
                                     "every rubric question answered");
    if (!it->is_number() || !OnRatingScale(it->get<double>()))
      return Status::InvalidArgument("rating " + QuoteJson(*it) + " for question " + QuoteText(q.id), where,
                                     "a level of the judge's rating scale (0, 0.25, 0.5, 0.75 or 1)");
    rated.push_back({q.id, it->get<double>(), "", ""});
  }
  if (answers.size() != cpt.rubric.size())
    for (const auto& entry : answers.items()) {
      const std::string& key = entry.key();  // not a structured binding: clang 14 cannot capture one
      if (std::none_of(cpt.rubric.begin(), cpt.rubric.end(), [&](const RubricQuestion& q) { return q.id == key; }))
        return Status::InvalidArgument("unknown question " + QuoteText(key), where,
                                       "the rubric questions of concept " + cpt.id);
    }
  return *Adequacy(cpt, rated, /*equal_weights=*/false);
}

std::string HumanRatingsCsv(const std::vector<HumanRating>& ratings) {
  std::string csv = "image,rater,score\n";
  for (const HumanRating& r : ratings)
    csv += CsvField(r.image) + "," + CsvField(r.rater) + "," + FormatNumber(r.score) + "\n";
  return csv;
}

std::optional<size_t> NextImageToRate(const std::vector<std::string>& images, const std::vector<HumanRating>& ratings,
                                      const std::string& rater) {
  std::map<std::string, size_t> count;
  std::set<std::string> rated_by_rater;
  for (const HumanRating& r : ratings) {
    ++count[r.image];
    if (r.rater == rater) rated_by_rater.insert(r.image);
  }
  std::optional<size_t> best;
  for (size_t i = 0; i < images.size(); ++i) {
    if (rated_by_rater.count(images[i])) continue;
    if (!best || count[images[i]] < count[images[*best]]) best = i;
  }
  return best;
}

}  // namespace visalign::acva
