// The report module against the fixture results folders in tests/data/report/ (real outputs of
// `violin evaluate`, `hues evaluate` and `acva analyze`, trimmed): what it reads, what it refuses,
// which figures and rows it builds, and that its page holds no URL and is byte-stable.
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "report/page.h"
#include "testing/dirs.h"
#include "visalign/benchmarks/acva/acva.h"
#include "visalign/benchmarks/hues/hues.h"
#include "visalign/benchmarks/violin/evaluate.h"
#include "visalign/core/results.h"
#include "visalign/report/report.h"

namespace visalign::report {
namespace {
namespace fs = std::filesystem;

fs::path Fixture(const std::string& name) {
  return testing::DataDir().parent_path() / "tests" / "data" / "report" / name;
}

ResultsFolder Read(const std::string& name) {
  Result<ResultsFolder> folder = ReadResultsFolder(Fixture(name));
  EXPECT_TRUE(folder.ok()) << folder.status().ToString();
  return folder.ok() ? std::move(*folder) : ResultsFolder{};
}

const Figure* FindFigure(const Report& report, const std::string& id) {
  for (const Figure& f : report.figures)
    if (f.id == id) return &f;
  return nullptr;
}

// A copy of fixture `name` in `t` with summary.json's `key` set to `value`.
fs::path WithSummaryKey(const testing::TempDir& t, const std::string& name, const std::string& key, const Json& value) {
  const fs::path dir = t / name;
  fs::copy(Fixture(name), dir, fs::copy_options::recursive);
  Json summary = Json::parse(*ReadFile(dir / "summary.json"));
  summary[key] = value;
  EXPECT_TRUE(WriteFileAtomic(dir / "summary.json", summary.dump()).ok());
  return dir;
}

TEST(ModelFamilies, FromOpenClipStyleNames) {
  EXPECT_EQ(FamilyFromName("RN50-openai").architecture, "ResNet");
  EXPECT_EQ(FamilyFromName("RN50-openai").dataset, "OpenAI WIT");
  EXPECT_EQ(FamilyFromName("ViT-B-16-SigLIP-webli").architecture, "ViT-B");
  EXPECT_EQ(FamilyFromName("ViT-B-16-SigLIP-webli").dataset, "WebLI");
  EXPECT_EQ(FamilyFromName("ViT-bigG-14-laion2b_s39b_b160k").architecture, "ViT-bigG");
  EXPECT_EQ(FamilyFromName("ViT-bigG-14-laion2b_s39b_b160k").dataset, "LAION-2B");
  EXPECT_EQ(FamilyFromName("convnext_base_w-laion400m_s13b_b51k").architecture, "ConvNeXt");
  EXPECT_EQ(FamilyFromName("convnext_base_w-laion400m_s13b_b51k").dataset, "LAION-400M");
  EXPECT_EQ(FamilyFromName("EVA02-L-14-merged2b_s4b_b131k").architecture, "EVA");
  EXPECT_EQ(FamilyFromName("clip-random").architecture, "other");
  EXPECT_EQ(FamilyFromName("clip-random").dataset, "other");
}

TEST(ModelFamilies, OverrideFileIsModelArchitectureDataset) {
  testing::TempDir t;
  Result<std::map<std::string, ModelFamily>> ok =
      ReadFamilyOverrides(t.Write("f.csv", "model,architecture,dataset\nclip-random,Tiny,none\n"));
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->at("clip-random").architecture, "Tiny");
  Result<std::map<std::string, ModelFamily>> twice =
      ReadFamilyOverrides(t.Write("g.csv", "model,architecture,dataset\na,x,y\na,x,z\n"));
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().where(), "families file " + (t / "g.csv").string() + ":3");
}

TEST(ModelFamilies, OverrideThenSummaryThenShippedCatalogThenNameRules) {
  // The fixture's summary.json carries no families; data/hues/model_catalog.csv lists both models.
  ReportOptions options;
  options.family_overrides["RN50-openai"] = {"Tiny", "none"};
  Result<Report> report = BuildReport({Read("hues")}, {}, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  std::map<std::string, std::string> architecture, dataset;
  for (const Json& row : FindFigure(*report, "hues-1-fail-rates")->spec["data"]["values"]) {
    architecture[row["model"].get<std::string>()] = row["architecture"].get<std::string>();
    dataset[row["model"].get<std::string>()] = row["dataset"].get<std::string>();
  }
  EXPECT_EQ(architecture["RN50-openai"], "Tiny");
  EXPECT_EQ(architecture["ViT-B-16-SigLIP-webli"], "SigLIP");  // the catalog's; the name rules say ViT-B
  EXPECT_EQ(dataset["ViT-B-16-SigLIP-webli"], "WebLI");
}

TEST(ResultsFolders, RefuseUnknownSchemaVersionsBenchmarksAndMissingFiles) {
  testing::TempDir t;
  Result<ResultsFolder> newer =
      ReadResultsFolder(WithSummaryKey(t, "hues", "schema_version", kResultsSchemaVersion + 1));
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(newer.status().what().find("schema_version " + std::to_string(kResultsSchemaVersion + 1)),
            std::string::npos);
  Result<ResultsFolder> other = ReadResultsFolder(WithSummaryKey(t, "acva", "benchmark", "mmlu"));
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().what(), "summary.json names benchmark \"mmlu\"");
  Result<ResultsFolder> none = ReadResultsFolder(t / "nowhere");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  fs::remove(t / "hues" / "items.jsonl");
  Result<ResultsFolder> partial = ReadResultsFolder(t / "hues");
  ASSERT_FALSE(partial.ok());
  EXPECT_EQ(partial.status().what(), "no items.jsonl");
}

// A results folder may come from anyone: its JSON is parsed with the nesting limit, and a value
// in an error is quoted shortly (a deeply nested "benchmark" was once printed in full, recursively).
TEST(ResultsFolders, HostileJsonIsRefusedInOneShortLine) {
  testing::TempDir t;
  Json deep = 1;
  for (int i = 0; i < 60; ++i) deep = Json::array({deep});
  Result<ResultsFolder> nested = ReadResultsFolder(WithSummaryKey(t, "acva", "benchmark", deep));
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.status().what(),
            "summary.json names benchmark " + std::string(60, '[') + "1" + std::string(59, ']') + "...");
  ASSERT_TRUE(WriteFileAtomic(t / "acva" / "summary.json", std::string(100, '[') + std::string(100, ']')).ok());
  Result<ResultsFolder> deeper = ReadResultsFolder(t / "acva");
  ASSERT_FALSE(deeper.ok());
  EXPECT_EQ(deeper.status().what(), "summary.json is JSON nested deeper than 64 levels");
  fs::copy(Fixture("hues"), t / "hues", fs::copy_options::recursive);
  ASSERT_TRUE(WriteFileAtomic(t / "hues" / "items.jsonl", "{\"word\": \"red\"}\n{\"word\": \n").ok());
  Result<ResultsFolder> line = ReadResultsFolder(t / "hues");
  ASSERT_FALSE(line.ok());
  EXPECT_EQ(line.status().what(), "a line of items.jsonl is invalid JSON (syntax error at byte 10)");
  EXPECT_EQ(line.status().where(), (t / "hues").string() + "/items.jsonl:2");
}

// summary.json and items.jsonl come from anyone: a field of another type than the results
// contract's (a string where a number belongs, an array for an object, ...) is refused as one
// error naming the folder, or read as missing; it never throws. Every field is tried (the first
// element standing for each array), in summary.json and in the first line of items.jsonl.
void ForEachField(Json& value, const std::function<void(Json&)>& visit) {
  visit(value);
  if (value.is_object())
    for (auto& [key, field] : value.items()) ForEachField(field, visit);
  if (value.is_array() && !value.empty()) ForEachField(value[0], visit);
}

std::vector<Json> OtherTypes(const Json& value) {
  if (value.is_string()) return {7, Json::object()};
  if (value.is_number() || value.is_boolean()) return {"x", Json::array()};
  if (value.is_object()) return {Json::array(), "x"};
  if (value.is_array()) return {Json::object(), 7};
  return {};
}

void ExpectEveryWrongTypeRefusedOrRead(const std::string& name, Json ResultsFolder::*document_of = nullptr) {
  const ResultsFolder original = Read(name);
  ResultsFolder folder = original;
  Json& document = document_of ? folder.*document_of : folder.items.front();
  int tried = 0;
  ForEachField(document, [&](Json& field) {
    for (const Json& other : OtherTypes(field)) {
      const Json kept = field;
      field = other;
      ++tried;
      Result<Report> report = Status::Internal("threw");
      EXPECT_NO_THROW(report = BuildReport({folder}, {}, {})) << name << ": " << document.dump().substr(0, 300);
      if (!report.ok()) {
        EXPECT_EQ(report.status().code(), StatusCode::kInvalidArgument) << report.status().ToString();
        EXPECT_NE(report.status().where().find(original.dir.string()), std::string::npos) << report.status().ToString();
      }
      field = kept;
    }
  });
  EXPECT_GT(tried, 10);
}

TEST(ResultsFolders, FieldsOfAnotherTypeAreRefusedOrReadAsMissingInSummaryJson) {
  for (const std::string name : {"violin", "hues", "nonsense", "acva"})
    ExpectEveryWrongTypeRefusedOrRead(name, &ResultsFolder::summary);
}

TEST(ResultsFolders, FieldsOfAnotherTypeAreRefusedOrReadAsMissingInItemsJsonl) {
  for (const std::string name : {"violin", "hues", "nonsense", "acva"}) ExpectEveryWrongTypeRefusedOrRead(name);
}

TEST(Report, OneSectionPerFolderAndFiguresWithOneDataRowPerNumber) {
  const ResultsFolder violin = Read("violin"), hues = Read("hues"), acva = Read("acva");
  Result<Report> report = BuildReport({violin, hues, acva}, {}, {});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(report->sections.size(), 3u);
  EXPECT_EQ(report->sections[0].id, "violin-1");
  EXPECT_EQ(report->sections[1].id, "hues-1");
  EXPECT_EQ(report->sections[2].id, "acva-1");

  // VIOLIN: one bar per (group row of summary.csv, measure).
  size_t group_rows = 0;
  for (const auto& row : violin.summary_csv.rows) group_rows += row[0] == "group";
  const Figure* bars = FindFigure(*report, "violin-1-precision-purity");
  ASSERT_NE(bars, nullptr);
  EXPECT_EQ(bars->spec["data"]["values"].size(), 2 * group_rows);
  // Hues: one row per (model, metric); category rows per (model, category).
  const size_t models = hues.summary["models"].size();
  const Figure* rates = FindFigure(*report, "hues-1-fail-rates");
  ASSERT_NE(rates, nullptr);
  EXPECT_EQ(rates->spec["data"]["values"].size(), 2 * models);
  EXPECT_EQ(FindFigure(*report, "hues-1-categories-dataset")->spec["data"]["values"].size(), 7 * models);
  // Hues boards: the 480 cells and each model's top 5 (the fixture's default words: the 3 most failed).
  const Figure* board = FindFigure(*report, "hues-1-board-fox");
  ASSERT_NE(board, nullptr);
  EXPECT_EQ(board->spec["data"]["values"].size(), 480 + 5 * models);
  // ACVA: per model its categories and "all".
  const Json& acva_models = acva.summary["models"];
  size_t pass_rows = 0;
  for (const Json& m : acva_models) pass_rows += 1 + m["by_category"].size();
  EXPECT_EQ(FindFigure(*report, "acva-1-pass-rates")->spec["data"]["values"].size(), pass_rows);
  EXPECT_EQ(FindFigure(*report, "acva-1-quadrants")->spec["data"]["values"].size(), 4 * acva_models.size());
}

TEST(Report, ViolinMetricTablesMarkTheBestAndSecondBest) {
  // The fixture's two models and a third, worse everywhere (every metric 1): per column the ground
  // truth is best (lower is better) and the degraded run second.
  ResultsFolder violin = Read("violin");
  const size_t model = internal::ColumnIndex(violin.summary_csv, "model");
  const size_t rgb_ed = internal::ColumnIndex(violin.summary_csv, "rgb_ed");
  std::vector<std::vector<std::string>> worse;
  for (std::vector<std::string> row : violin.summary_csv.rows)
    if (row[0] == "group" && row[model] == "ground-truth") {
      row[model] = "worse";
      for (size_t c = rgb_ed; c < rgb_ed + 11; ++c) row[c] = "1";
      worse.push_back(std::move(row));
    }
  violin.summary_csv.rows.insert(violin.summary_csv.rows.end(), worse.begin(), worse.end());
  Result<Report> report = BuildReport({violin}, {}, {});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  const std::string& body = report->sections[0].body;
  // Variation 1: the ground truth's rgb_ed is 0 (best), the degraded run's 0.0015553215220947933 (second).
  const size_t table = body.find("id=\"violin-1-table-1\"");
  ASSERT_NE(table, std::string::npos);
  EXPECT_NE(body.find("<tr data-model=\"ground-truth\"><td>ground-truth</td><td class=\"best\">0</td>", table),
            std::string::npos);
  // Shown to 4 significant digits; the cell carries summary.csv's exact text.
  EXPECT_NE(body.find("<tr data-model=\"reference-noise\"><td>reference-noise</td><td class=\"second\" "
                      "data-value=\"0.0015553215220947933\" title=\"0.0015553215220947933\">0.001555</td>",
                      table),
            std::string::npos);
  EXPECT_NE(body.find("<tr data-model=\"worse\"><td>worse</td><td>1</td>", table), std::string::npos);
}

TEST(Report, TheNonsenseBaselineHasItsModesPerModel) {
  const ResultsFolder nonsense = Read("nonsense");
  EXPECT_EQ(nonsense.benchmark, "hues-nonsense");
  Result<Report> report = BuildReport({nonsense}, {}, {});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(report->sections.size(), 1u);
  EXPECT_EQ(report->sections[0].id, "hues-nonsense-1");
  // One data row per model (its mode) and per (model, group), ordered by mode as docs/hues.md lists them.
  const Json& models = nonsense.summary["models"];
  size_t groups = 0;
  for (const Json& m : models) groups += m["groups"].size();
  const Figure* modes = FindFigure(*report, "hues-nonsense-1-modes");
  ASSERT_NE(modes, nullptr);
  const Json& rows = modes->spec["data"]["values"];
  EXPECT_EQ(rows.size(), models.size() + groups);
  std::vector<std::string> order;
  for (const Json& row : rows)
    if (row["kind"] == "model") order.push_back(row["class"].get<std::string>());
  EXPECT_EQ(order, (std::vector<std::string>{"neutral_collapse", "specific_color_collapse", "selective_collapse",
                                             "high_entropy"}));
  EXPECT_NE(FindFigure(*report, "hues-nonsense-1-classes"), nullptr);
}

TEST(Report, NumbersInFiguresAreSummaryNumbers) {
  const ResultsFolder hues = Read("hues");
  Result<Report> report = BuildReport({hues}, {}, {});
  ASSERT_TRUE(report.ok());
  const Json& first = FindFigure(*report, "hues-1-fail-rates")->spec["data"]["values"][0];
  EXPECT_EQ(first["model"].get<std::string>(), hues.summary["models"][0]["model"].get<std::string>());
  EXPECT_EQ(first["rate"].get<double>(), hues.summary["models"][0]["mahalanobis"]["fail_rate"].get<double>());
}

TEST(Report, BoardWordsAreChosenOrRefused) {
  ReportOptions options;
  options.board_words = {"canary"};
  Result<Report> chosen = BuildReport({Read("hues")}, {}, options);
  ASSERT_TRUE(chosen.ok()) << chosen.status().ToString();
  EXPECT_NE(FindFigure(*chosen, "hues-1-xy-canary"), nullptr);
  EXPECT_EQ(FindFigure(*chosen, "hues-1-board-fox"), nullptr);
  options.board_words = {"no such word"};
  Result<Report> unknown = BuildReport({Read("hues")}, {}, options);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().where(), "board word");
}

TEST(Report, BoardFiguresNeedTheEvaluatedInputsUnchanged) {
  testing::TempDir t;
  Json changed = Read("hues").summary["inputs"]["humans"];
  changed["sha256"] = std::string(64, '0');
  Result<Report> report = BuildReport({*ReadResultsFolder(WithSummaryKey(t, "hues", "inputs",
                                                                         [&] {
                                                                           Json inputs = Read("hues").summary["inputs"];
                                                                           inputs["humans"] = changed;
                                                                           return inputs;
                                                                         }()))},
                                      {}, {});
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(FindFigure(*report, "hues-1-board-fox"), nullptr);
  EXPECT_NE(report->sections[0].body.find("Board figures left out: the human answers"), std::string::npos);
}

TEST(Report, BoardFiguresReadPredictionsWithEveryShippedNonsenseWord) {
  // `hues run --nonsense` plays both shipped nonsense lists; HER is only in the published one.
  testing::TempDir t;
  const fs::path predictions = testing::DataDir() / "hues" / "peer-sample" / "RN50-openai" / "results.csv";
  std::string csv = *ReadFile(predictions);
  csv +=
      "HER,I,18,191,193,194,0.25\nHER,I,17,192,196,189,0.24\nHER,I,16,194,198,180,0.23\n"
      "HER,I,15,204,200,166,0.22\nHER,I,14,209,200,158,0.21\n";
  const fs::path with_her = t.Write("results.csv", csv);
  Json inputs = Read("hues").summary["inputs"];
  for (const char* key : {"humans", "humans_exclusions"})  // relative to the fixture, which is copied elsewhere
    inputs[key]["path"] = (Fixture("hues") / inputs[key]["path"].get<std::string>()).string();
  for (Json& p : inputs["predictions"]) {
    p["path"] = with_her.string();
    p["sha256"] = *Sha256File(with_her);
  }
  Result<Report> report = BuildReport({*ReadResultsFolder(WithSummaryKey(t, "hues", "inputs", inputs))}, {}, {});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_NE(FindFigure(*report, "hues-1-board-fox"), nullptr) << report->sections[0].body;
}

// Conditions that make a section's numbers meaningless or partial open the section, in the words
// of the folder's summary.md (the benchmark's warnings function, which summary.md opens with).
TEST(Report, SectionsOpenWithWhatMakesTheirNumbersPartial) {
  // The ACVA fixture was analysed with random CLIP weights.
  const ResultsFolder acva = Read("acva");
  Result<Report> report = BuildReport({acva}, {}, {});
  ASSERT_TRUE(report.ok());
  const std::vector<std::string> acva_warnings = acva::SummaryWarnings(acva.summary);
  ASSERT_EQ(acva_warnings.size(), 1u);
  EXPECT_EQ(acva_warnings[0].rfind("the CLIP model's weights are RANDOM", 0), 0u) << acva_warnings[0];
  EXPECT_EQ(report->sections[0].notes, acva_warnings);
  EXPECT_NE(acva::SummaryMarkdown(acva.summary).find("**Warning:** " + acva_warnings[0]), std::string::npos);
  const std::string html = RenderHtml(*report);
  const size_t note =
      html.find("<p class=\"note\"><strong>Warning:</strong> " + internal::EscapeHtml(acva_warnings[0]) + "</p>");
  ASSERT_NE(note, std::string::npos);
  EXPECT_LT(html.find("<h2>ACVA-Bench"), note);
  EXPECT_LT(note, html.find("class=\"provenance\""));

  // VIOLIN: coverage below 100 % on an overall row.
  testing::TempDir t;
  Json overall = Read("violin").summary["overall"];
  overall[1]["coverage"] = 0.5;
  overall[1]["n_missing"] = 241;
  const ResultsFolder violin = *ReadResultsFolder(WithSummaryKey(t, "violin", "overall", overall));
  ReportOptions no_thumbnails;  // the fixture keeps only the ground truth's images: see the thumbnail test
  no_thumbnails.worst_images = 0;
  report = BuildReport({violin}, {}, no_thumbnails);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(
      report->sections[0].notes,
      std::vector<std::string>{"coverage below 100 %: model reference-noise has a scored image for 241 of 482 items "
                               "(50.0 %; 241 without any image, 0 unreadable images), so its means cover only the "
                               "items it has images for."});
  EXPECT_EQ(report->sections[0].notes, violin::SummaryWarnings(violin.summary));

  // Hues and Cues: a model without some words.
  Json models = Read("hues").summary["models"];
  models[0]["n_words"] = 98;
  models[0]["missing_words"] = {"WHALE", "FOX"};
  const ResultsFolder hues = *ReadResultsFolder(WithSummaryKey(t, "hues", "models", models));
  report = BuildReport({hues}, {}, {});
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->sections[0].notes,
            std::vector<std::string>{"model RN50-openai has no predictions for 2 of 100 words "
                                     "(WHALE, FOX), so its fail rates cover only the other 98."});
  EXPECT_EQ(report->sections[0].notes, hues::EvaluationWarnings(hues.summary));

  // Nothing to say about complete results.
  report = BuildReport({Read("violin"), Read("hues"), Read("nonsense")}, {}, no_thumbnails);
  ASSERT_TRUE(report.ok());
  for (const Report::Section& section : report->sections)
    EXPECT_EQ(section.notes, std::vector<std::string>()) << section.id;
  EXPECT_EQ(RenderHtml(*report).find("class=\"notes\""), std::string::npos);
}

// The fail-rate figures name the measures as the paper does: leave-one-out is the human baseline's.
TEST(Report, HuesMeasuresAreLabelledAsThePaper) {
  Result<Report> report = BuildReport({Read("hues")}, {}, {});
  ASSERT_TRUE(report.ok());
  std::set<std::string> metrics;
  for (const Json& row : FindFigure(*report, "hues-1-fail-rates")->spec["data"]["values"])
    metrics.insert(row["metric"].get<std::string>());
  EXPECT_EQ(metrics, (std::set<std::string>{"Mahalanobis outlier (top-1)", "Hotelling T² (top-5, BH)"}));
}

// Thumbnails: an image path of an earlier version (relative to where the benchmark ran) is found
// from the results folder's parent folders; an image that cannot be read is named in a note.
TEST(Report, ThumbnailsResolveOldRelativePathsAndNameUnreadableImages) {
  testing::TempDir t;
  // The benchmark ran in t, writing "images/<id>.png" (relative to t) into t/runs/eval/items.jsonl.
  fs::create_directories(t / "runs");
  fs::copy(Fixture("violin"), t / "runs" / "eval", fs::copy_options::recursive);
  fs::rename(t / "runs" / "eval" / "images", t / "images");
  Result<Report> report = BuildReport({*ReadResultsFolder(t / "runs" / "eval")}, {}, {});
  ASSERT_TRUE(report.ok());
  // The ground truth's 6 worst images are found; the degraded run's were not kept (fixture README).
  const std::string& body = report->sections[0].body;
  size_t thumbnails = 0;
  for (size_t at = body.find("<img alt="); at != std::string::npos; at = body.find("<img alt=", at + 1)) ++thumbnails;
  EXPECT_EQ(thumbnails, 6u);
  ASSERT_EQ(report->sections[0].notes.size(), 1u);
  EXPECT_EQ(report->sections[0].notes[0].rfind("6 of the 12 worst images shown cannot be read and have no thumbnail "
                                               "(first: images/not-kept/",
                                               0),
            0u)
      << report->sections[0].notes[0];
  // Without any of the images: every thumbnail shown is counted in the one note.
  fs::rename(t / "images", t / "elsewhere");
  report = BuildReport({*ReadResultsFolder(t / "runs" / "eval")}, {}, {});
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->sections[0].notes.size(), 1u);
  const std::string& note = report->sections[0].notes[0];
  EXPECT_EQ(note.rfind("12 of the 12 worst images shown cannot be read and have no thumbnail (first: images/v4-", 0),
            0u)
      << note;
  EXPECT_NE(report->sections[0].body.find("image not readable"), std::string::npos);
}

TEST(Report, AMissingBenchmarkHasNoSection) {
  Result<Report> report = BuildReport({Read("acva")}, {}, {});
  ASSERT_TRUE(report.ok());
  const std::string html = RenderHtml(*report);
  EXPECT_EQ(html.find("data-benchmark=\"violin\""), std::string::npos);
  EXPECT_EQ(html.find("data-benchmark=\"hues\""), std::string::npos);
  EXPECT_NE(html.find("data-benchmark=\"acva\""), std::string::npos);
  EXPECT_EQ(html.find("href=\"#violin-1\""), std::string::npos);
}

TEST(Report, PageHoldsNoUrlAndIsByteStable) {
  const std::vector<ResultsFolder> folders = {Read("violin"), Read("hues"), Read("acva")};
  const std::string first = RenderHtml(*BuildReport(folders, {}, {}));
  EXPECT_EQ(first.find("http://"), std::string::npos);
  EXPECT_EQ(first.find("https://"), std::string::npos);
  EXPECT_EQ(RenderHtml(*BuildReport(folders, {}, {})), first);
  // The worst images are inline thumbnails.
  EXPECT_NE(first.find("<img alt=\"\" src=\"data:image/png;base64,"), std::string::npos);
}

TEST(PageText, NeverHoldsAUrlWhateverTheNamesSay) {
  EXPECT_EQ(internal::EscapeHtml("model <a href=\"https://x\">"), "model &lt;a href=&quot;https&#58;//x&quot;&gt;");
  EXPECT_EQ(internal::ScriptJson(Json{{"u", "http://x</script>"}}), "{\"u\":\"http:\\/\\/x<\\/script>\"}");
  EXPECT_EQ(Json::parse(internal::ScriptJson(Json{{"u", "http://x</script>"}}))["u"], "http://x</script>");
}

// docs/report.md, "Numbers": 4 significant digits, integers from 10 000 up, integers and text as written.
TEST(PageText, TableNumbersShowFourSignificantDigits) {
  EXPECT_EQ(internal::DisplayNumber("0.0015553215220947933"), "0.001555");
  EXPECT_EQ(internal::DisplayNumber("0.8888888888888888"), "0.8889");
  EXPECT_EQ(internal::DisplayNumber("12.345678"), "12.35");
  EXPECT_EQ(internal::DisplayNumber("0.5"), "0.5");
  EXPECT_EQ(internal::DisplayNumber("1e-07"), "1e-07");
  EXPECT_EQ(internal::DisplayNumber("1.2345678e-05"), "1.235e-05");
  EXPECT_EQ(internal::DisplayNumber("-3.14159"), "-3.142");
  EXPECT_EQ(internal::DisplayNumber("9999.96"), "1e+04");
  EXPECT_EQ(internal::DisplayNumber("12345.678"), "12346");
  EXPECT_EQ(internal::DisplayNumber("482"), "482");
  EXPECT_EQ(internal::DisplayNumber("123456789"), "123456789");
  EXPECT_EQ(internal::DisplayNumber(""), "");
  EXPECT_EQ(internal::DisplayNumber("v1 en"), "v1 en");
  EXPECT_EQ(internal::DisplayNumber("nan"), "nan");
  // Cells shown as written carry no data-value; the model column is never rounded.
  CsvTable table;
  table.header = {"model", "rate", "n"};
  table.rows = {{"1.23456", "0.123456", "7"}};
  const std::string html = internal::SortableTable(table, "t", "");
  EXPECT_NE(html.find("<td>1.23456</td><td data-value=\"0.123456\" title=\"0.123456\">0.1235</td><td>7</td>"),
            std::string::npos)
      << html;
}

TEST(PageText, CountsHavePlurals) {
  EXPECT_EQ(Counted(1, "section"), "1 section");
  EXPECT_EQ(Counted(0, "section"), "0 sections");
  EXPECT_EQ(Counted(2, "figure"), "2 figures");
}

TEST(PageText, CsvCellsBecomeNumbersOrNull) {
  EXPECT_EQ(internal::CsvNumber("0.1"), 0.1);
  EXPECT_EQ(internal::CsvNumber("1e-07"), 1e-07);
  EXPECT_TRUE(internal::CsvNumber("").is_null());
  EXPECT_TRUE(internal::CsvNumber("abc").is_null());
}

}  // namespace
}  // namespace visalign::report
