// Conformance with the published Hues and Cues analysis: for both sample models and the older human
// snapshot they were computed from, `visalign hues evaluate` reproduces the published F statistic
// ("Stat") and p-value (published as 1 - CDF) of the Hotelling test for all 100 words. The published
// files name the two Sesame Street rows in Spanish: "BLAS (Y EPI)" is Bert, tested against the answers
// of players shown Bert, which is what the default pairing by character does (docs/reproduction.md, H2;
// data/hues/NOTICE.md); `--pairing clue-id` tests Bert against clue 91's answers, mostly Spanish
// players shown "EPI (Y BLAS)" = Ernie, and does not reproduce those two rows.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>
#include <vector>

#include "testing/cli_runner.h"
#include "visalign/core/io.h"

namespace visalign {
namespace {

using testing::RunVisalign;
using testing::SharedDir;
using testing::TempDir;

// The published F and 1 - CDF p come from numpy/scipy in float64 on the same inputs (the CSV
// gives them to 17 digits). Ours differ only by summation order (covariances over ~300 answers:
// ~1e-15 relative) amplified by the 2x2 inverse's condition number (at most ~1e3 on these words)
// and, for p, by the F tail's sensitivity d(log p)/d(log F) (up to ~30): ~1e-13 measured, 1.7e-13
// worst. 1e-9 relative keeps four orders of margin and stays far below the 4th significant digit
// any reader quotes. Relative, not absolute: F spans 1e-2 .. 1e3 and p down to 1e-11.
constexpr double kRelativeTolerance = 1e-9;

double Relative(double ours, double published) { return std::abs(ours - published) / std::abs(published); }

// The published files' Spanish names of the two Sesame Street rows -> the word naming the same character.
const std::map<std::string, std::string> kPublishedCharacter = {{"BLAS (Y EPI)", "BERT (AND ERNIE)"},
                                                                {"EPI (Y BLAS)", "ERNIE (AND BERT)"}};

// Runs `hues evaluate` on the sample with the given extra arguments; its hotelling.csv.
CsvTable EvaluateSample(const std::filesystem::path& sample, const TempDir& out, std::vector<std::string> extra) {
  std::vector<std::string> args = {"hues",          "evaluate",         "--predictions",
                                   sample.string(), "--humans",         (sample / "HC_old.csv").string(),
                                   "--out",         out.path().string()};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = RunVisalign(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto table = ReadCsv(out / "hotelling.csv");
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  return table.ok() ? *table : CsvTable{};
}

TEST(HuesConformance, PublishedStatAndPValueForBothSampleModels) {
  const auto sample = SharedDir() / "fixtures/hues-peer-sample";
  TempDir out;
  const std::optional<CsvTable> ours = EvaluateSample(sample, out, {});
  ASSERT_FALSE(ours->rows.empty());
  std::map<std::pair<std::string, std::string>, size_t> row_of;
  for (size_t i = 0; i < ours->rows.size(); ++i) row_of[{ours->rows[i][0], ours->rows[i][1]}] = i;
  const size_t f_col = *ours->Column("f"), cdf_col = *ours->Column("p_one_minus_cdf"),
               sf_col = *ours->Column("p_value");

  for (const std::string model : {"RN50-openai", "ViT-B-16-SigLIP-webli"}) {
    auto published = ReadCsv(sample / model / "p_values.csv");
    ASSERT_TRUE(published.ok()) << published.status().ToString();
    int compared = 0;
    double worst_f = 0, worst_p = 0;
    for (const auto& row : published->rows) {
      const std::string word = kPublishedCharacter.count(row[1]) ? kPublishedCharacter.at(row[1]) : row[1];
      auto it = row_of.find({model, word});
      ASSERT_NE(it, row_of.end()) << model << " " << word;
      const auto& mine = ours->rows[it->second];
      const double stat = std::stod(row[2]), p = std::stod(row[3]);
      const double f = std::stod(mine[f_col]), p_cdf = std::stod(mine[cdf_col]), p_sf = std::stod(mine[sf_col]);
      EXPECT_LE(Relative(f, stat), kRelativeTolerance) << model << " " << word << ": F " << f << " vs " << stat;
      EXPECT_LE(Relative(p_cdf, p), kRelativeTolerance) << model << " " << word << ": p " << p_cdf << " vs " << p;
      // The survival-function p-value agrees up to the cancellation error of the published 1 - CDF
      // (about 1e-16 absolute).
      EXPECT_LE(std::abs(p_sf - p), 1e-15 + 1e-9 * p) << model << " " << word;
      worst_f = std::max(worst_f, Relative(f, stat));
      worst_p = std::max(worst_p, Relative(p_cdf, p));
      ++compared;
    }
    EXPECT_EQ(compared, 100) << model;
    std::printf("%s: %d words, worst relative error F %.2e, p %.2e\n", model.c_str(), compared, worst_f, worst_p);
  }
}

TEST(HuesConformance, PairingByClueIdMissesExactlyTheTwoSesameStreetRows) {
  const auto sample = SharedDir() / "fixtures/hues-peer-sample";
  TempDir out;
  const CsvTable ours = EvaluateSample(sample, out, {"--pairing", "clue-id"});
  const size_t f_col = *ours.Column("f");
  std::map<std::pair<std::string, std::string>, double> f_of;
  for (const auto& row : ours.rows) f_of[{row[0], row[1]}] = std::stod(row[f_col]);
  for (const std::string model : {"RN50-openai", "ViT-B-16-SigLIP-webli"}) {
    auto published = ReadCsv(sample / model / "p_values.csv");
    ASSERT_TRUE(published.ok()) << published.status().ToString();
    std::vector<std::string> differing;
    for (const auto& row : published->rows) {
      const std::string word = kPublishedCharacter.count(row[1]) ? kPublishedCharacter.at(row[1]) : row[1];
      if (Relative(f_of.at({model, word}), std::stod(row[2])) > kRelativeTolerance) differing.push_back(row[1]);
    }
    EXPECT_EQ(differing, (std::vector<std::string>{"BLAS (Y EPI)", "EPI (Y BLAS)"})) << model;
  }
}

}  // namespace
}  // namespace visalign
