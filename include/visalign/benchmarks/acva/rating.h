// ACVA-Bench human ratings: people rate a run's images on the judge's own rubric and scale (the rating
// page of `visalign serve`), and the ratings are exported as the ratings.csv `visalign acva agreement
// --human` reads, so the judge's agreement with humans can be measured on any run (docs/acva.md,
// "Human validation").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "visalign/benchmarks/acva/acva.h"
#include "visalign/benchmarks/acva/pipeline.h"
#include "visalign/core/json.h"
#include "visalign/core/status.h"

namespace visalign::acva {

// What a rater sees for one image: the concept, its rubric questions in `language` (the concept
// set's text_zh or text_en, as the judge is asked them) and the judge's scale.
// {"image", "concept": {"id", "word", "gloss"}, "language", "questions": [{"id", "text"}],
//  "scale": {"levels": [0, 0.25, ...], "low", "high"}}.
Json RatingFormJson(const Concept& cpt, const JudgedImage& image, Language language);

// A rater's answers to an image's rubric, untrusted JSON {"<question id>": rating, ...}: every question
// of the concept exactly once, no other key, each rating on the judge's scale (OnRatingScale). The
// result is the image's human score: the concept's weighted adequacy of these answers (Adequacy, the
// number `acva analyze` computes from the judge's answers for the same image), in [0, 1].
// InvalidArgument at `where` naming the question or value otherwise.
Result<double> RatingScore(const Concept& cpt, const Json& answers, const std::string& where);

// One rater's score of one image; `image` is JudgedImage::ImageId() ("<run>/<concept>/<k>"), as in
// items.jsonl.
struct HumanRating {
  std::string image;
  std::string rater;
  double score = 0;
};

// ratings.csv: header image,rater,score, one row per rating in the given order, scores as the
// shortest decimal that reads back as the same double.
std::string HumanRatingsCsv(const std::vector<HumanRating>& ratings);

// The image a rater gets next: of `images` (image ids), those `rater` has not rated yet, the one with
// the fewest ratings by anyone (so every image gets rated before any gets a second rating); ties go to
// the earlier image. nullopt when the rater has rated every image.
std::optional<size_t> NextImageToRate(const std::vector<std::string>& images, const std::vector<HumanRating>& ratings,
                                      const std::string& rater);

}  // namespace visalign::acva
