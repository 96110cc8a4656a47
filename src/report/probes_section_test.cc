// The VIOLIN probes' part of the report, against the fixture tests/data/report/violin-probes (a real
// `violin evaluate` of two probe-degraded reference runs): which figures it builds from which numbers.
#include <gtest/gtest.h>

#include <set>

#include "testing/dirs.h"
#include "visalign/report/report.h"

namespace visalign::report {
namespace {

std::filesystem::path Fixture(const std::string& name) {
  return testing::DataDir().parent_path() / "tests" / "data" / "report" / name;
}

const Figure* FindFigure(const Report& report, const std::string& id) {
  for (const Figure& f : report.figures)
    if (f.id == id) return &f;
  return nullptr;
}

size_t CountEstimates(const Json& probes, const std::string& family, const std::set<std::string>& measures) {
  size_t n = 0;
  for (const Json& e : probes) n += e["family"] == family && measures.count(e["measure"].get<std::string>());
  return n;
}

TEST(ProbesSection, OneFigurePerProbeWithTheSummaryNumbers) {
  Result<ResultsFolder> folder = ReadResultsFolder(Fixture("violin-probes"));
  ASSERT_TRUE(folder.ok()) << folder.status().ToString();
  Result<Report> report = BuildReport({*folder}, {}, {});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  const Json& probes = folder->summary["probes"];

  // Inertia: one point per image of an inertia item, at (requested, measured), plus the identity line.
  const Figure* inertia = FindFigure(*report, "violin-1-probes-inertia");
  ASSERT_NE(inertia, nullptr);
  size_t inertia_images = 0;
  for (const Json& item : folder->items) inertia_images += item["probe"]["family"] == "inertia";
  EXPECT_EQ(inertia->spec["data"]["values"].size(), inertia_images);
  EXPECT_EQ(inertia_images, 88u);  // 2 models x 44 items
  for (const Json& p : inertia->spec["data"]["values"]) {
    EXPECT_GT(p["requested"].get<double>(), 0.0);
    EXPECT_GE(p["measured"].get<double>(), 0.0);
  }
  EXPECT_EQ(inertia->spec["layer"].size(), 2u);

  const Figure* pull = FindFigure(*report, "violin-1-probes-gravity-pull");
  ASSERT_NE(pull, nullptr);
  EXPECT_EQ(pull->spec["data"]["values"].size(), CountEstimates(probes, "gravity", {"pull", "diff_de00"}));
  bool found = false;
  for (const Json& row : pull->spec["data"]["values"])
    if (row["model"] == "p-pull" && row["condition"] == "conflicting" && row["measure"] == "pull") {
      EXPECT_NEAR(row["value"].get<double>(), 0.3, 0.02);
      found = true;
    }
  EXPECT_TRUE(found);
  EXPECT_EQ(FindFigure(*report, "violin-1-probes-negation")->spec["data"]["values"].size(),
            CountEstimates(probes, "negation", {"diff_de00", "diff_hf", "diff_ced"}));
  EXPECT_EQ(FindFigure(*report, "violin-1-probes-geometry")->spec["data"]["values"].size(),
            CountEstimates(probes, "geometry", {"position_error_px", "size_error", "iou", "failure_rate"}));
  const std::string& body = report->sections[0].body;
  EXPECT_NE(body.find("Worst image of each probe condition"), std::string::npos);
  EXPECT_NE(body.find("probes-table"), std::string::npos);
}

TEST(ProbesSection, AFolderWithoutProbesHasNone) {
  Result<ResultsFolder> folder = ReadResultsFolder(Fixture("violin"));
  ASSERT_TRUE(folder.ok());
  Result<Report> report = BuildReport({*folder}, {}, {});
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(FindFigure(*report, "violin-1-probes-inertia"), nullptr);
  EXPECT_EQ(report->sections[0].body.find("Probes ("), std::string::npos);
}

}  // namespace
}  // namespace visalign::report
