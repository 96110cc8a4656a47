// summary.csv, summary.md and the warnings of an ACVA analysis: the same numbers as summary.json,
// read back, and a warning exactly when the numbers are partial.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include <fmt/format.h>

#include "benchmarks/acva/analysis_testing.h"
#include "visalign/benchmarks/acva/acva.h"

namespace visalign::acva {
namespace {

using fixtures::AnalyzeTwoModels;
using fixtures::Model;

TEST_F(AnalyzeTwoModels, SummaryTablesNameEveryModel) {
  const std::string csv = SummaryCsv(result_.summary);
  EXPECT_EQ(csv.rfind("model,tier,n_images", 0), 0u);
  EXPECT_NE(csv.find("\ngood,1,9,0,1,1,1,1,"), std::string::npos) << csv;
  const std::string md = SummaryMarkdown(result_.summary);
  EXPECT_NE(md.find("| 2 | poor | 10 | 1 | 0.000 |"), std::string::npos) << md;
}

std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> fields(1);
  for (char ch : line) {
    if (ch == ',')
      fields.emplace_back();
    else
      fields.back() += ch;
  }
  return fields;
}

TEST_F(AnalyzeTwoModels, SummaryCsvReadsBackAsExactlyTheNumbersOfSummaryJson) {
  // Column -> where summary.json has it, relative to the model's object.
  std::vector<std::pair<std::string, std::string>> columns = {
      {"n_images", "/n_images"},
      {"n_invalid", "/n_invalid"},
      {"pass_rate", "/pass_rate"},
      {"pass_rate_ci_lo", "/pass_rate_ci/0"},
      {"pass_rate_ci_hi", "/pass_rate_ci/1"},
      {"adequacy_mean", "/adequacy_mean"},
      {"tier", "/tier"},
      {"embedding_loo_acc", "/distinctiveness/embedding_loo_acc_mean"},
      {"afc_acc", "/distinctiveness/afc_acc_mean"},
      {"afc_first_share", "/distinctiveness/afc_first_share"}};
  for (const std::string mode : {"filtered", "unfiltered"}) {
    const std::string d = "/diversity/" + mode;
    columns.insert(columns.end(), {{mode + "_groups", d + "/n_groups"},
                                   {mode + "_d_img", d + "/d_img_mean"},
                                   {mode + "_d_met", d + "/d_met_mean"},
                                   {mode + "_h", d + "/h_mean"}});
    for (const std::string q : {"genuine", "pseudo", "metaphor", "low"})
      columns.push_back({mode + "_" + q, d + "/quadrants/" + q});
  }
  const std::vector<std::string> lines = [&] {
    std::vector<std::string> out;
    std::istringstream in(SummaryCsv(result_.summary));
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }();
  const std::vector<std::string> header = SplitCsvLine(lines.at(0));
  ASSERT_EQ(header.size(), columns.size() + 1);  // + model
  ASSERT_EQ(lines.size(), 3u);
  size_t compared = 0;
  for (size_t row = 1; row < lines.size(); ++row) {
    const std::vector<std::string> fields = SplitCsvLine(lines[row]);
    const Json& m = Model(result_.summary, fields.at(0));
    for (const auto& [column, pointer] : columns) {
      const size_t at = std::find(header.begin(), header.end(), column) - header.begin();
      ASSERT_LT(at, header.size()) << column;
      const Json& value = m.at(Json::json_pointer(pointer));
      if (value.is_null() || !std::isfinite(value.get<double>())) {
        EXPECT_EQ(fields.at(at), "") << column;  // undefined: an empty cell
        continue;
      }
      EXPECT_EQ(std::strtod(fields.at(at).c_str(), nullptr), value.get<double>()) << column << " " << fields[at];
      ++compared;
    }
  }
  EXPECT_GT(compared, 40u);
  // Not rounded: D_img = 0.09 / 1.09 and H = log2 3 appear with every digit needed.
  EXPECT_NE(lines[1].find(",1.584962500721156,"), std::string::npos) << lines[1];
}

TEST_F(AnalyzeTwoModels, SummaryMarkdownPrintsPValuesWithSignificantDigits) {
  const std::string md = SummaryMarkdown(result_.summary);
  // good vs poor: no resample of 200 crosses 0, so p is below the smallest nonzero value 2/200.
  EXPECT_NE(md.find("| good | poor | 1.000 | [1.000, 1.000] | < 0.01 |"), std::string::npos) << md;
  const Json& rho = result_.summary["correlations"]["adequacy_vs_d_img"];
  const std::string row = "| adequacy_vs_d_img | 6 | " + fmt::format("{:.3f}", rho["rho"].get<double>()) + " | " +
                          FormatPValue(rho["p_value"].get<double>(), 0) + " |";
  EXPECT_NE(md.find(row), std::string::npos) << md;
}

TEST_F(AnalyzeTwoModels, SummaryWarnsOnlyWhenTheClipModelHasRandomWeights) {
  const std::string label = "RANDOM (visalign clip random-model, arch tiny, seed 0): its numbers mean nothing";
  EXPECT_EQ(SummaryMarkdown(result_.summary).find("RANDOM"), std::string::npos);
  Json summary = result_.summary;
  summary["embeddings"] = {{"random_weights", nullptr}};
  EXPECT_EQ(SummaryMarkdown(summary).find("RANDOM"), std::string::npos);
  summary["embeddings"]["random_weights"] = {{"arch", "tiny"}, {"seed", 0}, {"label", label}};
  EXPECT_NE(SummaryMarkdown(summary).find("**Warning:** the CLIP model's weights are " + label + ". Image diversity"),
            std::string::npos);
  EXPECT_EQ(SummaryWarnings(summary).front().rfind("the CLIP model's weights are " + label + ". ", 0), 0u);
}

// Failed or pending generation and invalid judgments make the numbers partial: summary.md opens
// with each as one warning, in SummaryWarnings' words (what `visalign report` shows).
TEST_F(AnalyzeTwoModels, SummaryWarnsOfMissingImagesAndInvalidJudgments) {
  Json summary = result_.summary;
  // The fixture's poor model has one image the judge gave no parseable answer for.
  const std::string poor =
      "model poor has 1 of 10 images (10.0 %) without a valid judgment (refused or unparseable "
      "answers), so its pass rate and adequacy cover only the other 9.";
  EXPECT_EQ(SummaryWarnings(summary), std::vector<std::string>{poor});
  summary["generation"] = {{"good", {{"done", 7}, {"failed", 2}, {"pending", 1}}},
                           {"poor", {{"done", 9}, {"failed", 0}, {"pending", 0}}}};
  summary["models"][0]["n_images"] = 8;
  summary["models"][0]["n_invalid"] = 2;
  const std::string model = summary["models"][0]["model"];
  const std::vector<std::string> warnings = SummaryWarnings(summary);
  EXPECT_EQ(warnings, (std::vector<std::string>{
                          "generation run good has 2 failed and 1 pending of its 10 images, so its numbers cover only "
                          "the 7 done ones.",
                          "model " + model +
                              " has 2 of 8 images (25.0 %) without a valid judgment (refused or "
                              "unparseable answers), so its pass rate and adequacy cover only the other 6.",
                          poor}));
  const std::string md = SummaryMarkdown(summary);
  for (const std::string& w : warnings) EXPECT_NE(md.find("**Warning:** " + w + "\n\n"), std::string::npos) << md;
  EXPECT_LT(md.find("**Warning:**"), md.find("## Semantic adequacy"));
}

// Four models over three concepts with three images each; `passes` of the nine images pass.

}  // namespace
}  // namespace visalign::acva
