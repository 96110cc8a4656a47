// ACVA analysis time at full scale: 6 models x 150 concepts x 3 images with cached (synthetic)
// judgments and embeddings: adequacy, clustering, diversity, distinctiveness, bootstrap intervals,
// correlations and tiers. Target: under 5 s on 2 cores (docs/performance.md).
#include <benchmark/benchmark.h>

#include <random>

#include "visalign/benchmarks/acva/acva.h"

namespace visalign::acva {
namespace {

constexpr int kModels = 6, kConcepts = 150, kSamples = 3, kQuestions = 5, kPairs = 40, kDim = 512;

ConceptSet SyntheticSet() {
  ConceptSet set;
  set.fingerprint = "synthetic";
  for (int c = 0; c < kConcepts; ++c) {
    Concept cpt;
    cpt.id = "c" + std::to_string(c);
    cpt.word = cpt.id;
    cpt.gloss_en = cpt.id;
    cpt.category = kCategories[static_cast<size_t>(c) % kCategories.size()];
    cpt.ratings["imageability"] = 1.0 + c % 7;
    for (int q = 0; q < kQuestions; ++q)
      cpt.rubric.push_back({"q" + std::to_string(q), "", "", 1.0 + q % 2, static_cast<Framework>(q % 3)});
    set.concepts.push_back(cpt);
  }
  for (int p = 0; p < kPairs; ++p)
    set.pairs.push_back({"c" + std::to_string(2 * p), "c" + std::to_string(2 * p + 1), ""});
  return set;
}

Embedding RandomUnit(std::mt19937& rng) {
  std::normal_distribution<float> n(0.f, 1.f);
  Embedding e(kDim);
  for (float& x : e) x = n(rng);
  return e;
}

std::vector<JudgedImage> SyntheticImages(const ConceptSet& set) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> level(0, 4), coin(0, 1), metaphor(0, 3);
  std::vector<Embedding> metaphors;
  for (int i = 0; i < 4 * kConcepts; ++i) metaphors.push_back(RandomUnit(rng));
  std::vector<JudgedImage> images;
  for (int m = 0; m < kModels; ++m)
    for (int c = 0; c < kConcepts; ++c)
      for (int k = 0; k < kSamples; ++k) {
        JudgedImage im;
        im.model = "model" + std::to_string(m);
        im.concept_id = set.concepts[static_cast<size_t>(c)].id;
        im.k = k;
        for (const RubricQuestion& q : set.concepts[static_cast<size_t>(c)].rubric)
          im.answers.push_back({q.id, kRatingLevels[static_cast<size_t>(level(rng))], "evidence", ""});
        im.image_embedding = RandomUnit(rng);
        im.metaphor = "m";
        im.metaphor_embedding = metaphors[static_cast<size_t>(4 * c + metaphor(rng))];
        for (const ConceptPair& p : set.pairs) {
          if (p.a != im.concept_id && p.b != im.concept_id) continue;
          for (bool a_first : {true, false}) {
            const std::string first = a_first ? p.a : p.b, second = a_first ? p.b : p.a;
            im.afc.push_back({p.a, p.b, first, second, coin(rng) ? first : second, ""});
          }
        }
        images.push_back(std::move(im));
      }
  return images;
}

void BM_AnalyzeSixModels(benchmark::State& state) {
  const ConceptSet set = SyntheticSet();
  const std::vector<JudgedImage> images = SyntheticImages(set);
  AnalysisOptions options;  // 2000 bootstrap resamples, as the CLI default
  for (auto _ : state) {
    auto result = Analyze(set, images, options);
    if (!result.ok()) state.SkipWithError(result.status().ToString().c_str());
    benchmark::DoNotOptimize(result);
  }
  state.counters["images"] = static_cast<double>(images.size());
}
BENCHMARK(BM_AnalyzeSixModels)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace visalign::acva
BENCHMARK_MAIN();
