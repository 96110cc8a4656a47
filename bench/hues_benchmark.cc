// Hues and Cues evaluation at scale: 200 synthetic models × 100 words in the published
// <model>/results.csv format (deterministic: seeded RNG), evaluated against the shipped human data.
//   BM_HuesEvaluateLibrary: load + evaluate + write all outputs in-process (the CLI's work).
//   BM_HuesEvaluateCli:     `visalign hues evaluate --threads 2` end to end as a child process.
// Run: VISALIGN_DATA=data build/bench/hues_benchmark (the CLI benchmark needs build/visalign).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "visalign/benchmarks/hues/hues.h"
#include "visalign/core/io.h"
#include "visalign/core/parallel.h"

namespace visalign::hues {
namespace {

namespace fs = std::filesystem;
constexpr int kModels = 200;
constexpr unsigned kSeed = 20250901;

// A model's top-5 for a word: a random best cell and four random cells within two rows/columns of
// it, with decreasing similarities.
ModelPredictions SyntheticModel(int index, const Vocabulary& vocabulary, std::mt19937& rng) {
  ModelPredictions m;
  m.name = "synthetic-" + std::to_string(index);
  std::uniform_int_distribution<int> any_cell(0, kCells - 1), offset(-2, 2);
  std::uniform_real_distribution<double> start(0.15, 0.35), step(0.0001, 0.01);
  for (size_t w = 0; w < vocabulary.words().size(); ++w) {
    const int best = any_cell(rng);
    double similarity = start(rng);
    std::vector<Prediction> top{{best, similarity}};
    while (top.size() < kTopK) {
      const int row = std::clamp(best / kCols + offset(rng), 0, kRows - 1);
      const int col = std::clamp(best % kCols + offset(rng), 0, kCols - 1);
      similarity -= step(rng);
      top.push_back({row * kCols + col, similarity});
    }
    m.words.push_back(std::move(top));
  }
  return m;
}

template <typename T>
T OrDie(Result<T> r) {
  if (!r.ok()) {
    std::fprintf(stderr, "error: %s (set VISALIGN_DATA to the data/ folder)\n", r.status().ToString().c_str());
    std::exit(2);
  }
  return std::move(r).value();
}

struct Fixture {
  fs::path dir = fs::temp_directory_path() / ("visalign_hues_bench_" + std::to_string(::getpid()));
  fs::path predictions = dir / "models";
  Board board = OrDie(Board::Default(Chromaticity::kDisplay));
  Vocabulary vocabulary = OrDie(Vocabulary::Default());
  std::vector<NonsenseWord> nonsense = OrDie(DefaultNonsenseVocabulary());

  Fixture() {
    std::mt19937 rng(kSeed);
    for (int i = 0; i < kModels; ++i) {
      const ModelPredictions m = SyntheticModel(i, vocabulary, rng);
      fs::create_directories(predictions / m.name);
      if (!WriteFileAtomic(predictions / m.name / "results.csv", PeerCsv(m, vocabulary, board, nonsense)).ok())
        std::abort();
    }
  }
  ~Fixture() { fs::remove_all(dir); }
};

Fixture& Shared() {
  static Fixture fixture;
  return fixture;
}

void BM_HuesEvaluateLibrary(benchmark::State& state) {
  Fixture& f = Shared();
  const MacroMap macro = OrDie(MacroMap::Default());
  for (auto _ : state) {
    auto humans = DefaultHumans(f.vocabulary);
    const HumanBaseline baseline =
        ComputeHumanBaseline(*humans, f.vocabulary, f.board, macro, *ParseThreshold("chi2:0.95"));
    auto models = LoadPredictions(f.predictions, PredictionFormat::kPeer, f.vocabulary, f.board, f.nonsense);
    EvaluationReport report;
    report.models.resize(models->size());
    ParallelFor(models->size(), [&](size_t i) {
      report.models[i] = EvaluateModel((*models)[i], baseline, f.vocabulary, f.board, macro, report.options);
    });
    if (!WriteEvaluation(report, baseline, f.vocabulary, f.dir / "out-lib").ok()) state.SkipWithError("write failed");
  }
  state.counters["models"] = kModels;
}
BENCHMARK(BM_HuesEvaluateLibrary)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_HuesEvaluateCli(benchmark::State& state) {
  Fixture& f = Shared();
  const fs::path cli = fs::canonical("/proc/self/exe").parent_path().parent_path() / "visalign";
  if (!fs::exists(cli)) {
    state.SkipWithError(("CLI not built: " + cli.string()).c_str());
    return;
  }
  const std::string command = "'" + cli.string() + "' --threads 2 --log-level error hues evaluate --predictions '" +
                              f.predictions.string() + "' --out '" + (f.dir / "out-cli").string() + "' > /dev/null";
  for (auto _ : state)
    if (std::system(command.c_str()) != 0) state.SkipWithError("visalign hues evaluate failed");
  state.counters["models"] = kModels;
}
BENCHMARK(BM_HuesEvaluateCli)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(5);

}  // namespace
}  // namespace visalign::hues

BENCHMARK_MAIN();
