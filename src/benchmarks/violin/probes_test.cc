#include "visalign/benchmarks/violin/probes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <set>

#include "testing/dirs.h"
#include "visalign/benchmarks/violin/dataset.h"
#include "visalign/benchmarks/violin/generation.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"

#include <fmt/format.h>

namespace visalign::violin {
namespace {

ProbeOptions Options(double scale = 0.25) {
  ProbeOptions o;
  o.scale = scale;
  o.data_dir = testing::DataDir();
  return o;
}

const std::vector<ManifestItem>& Items() {
  static const std::vector<ManifestItem> items = *BuildProbeItems(Options());
  return items;
}

std::vector<const ManifestItem*> Family(ProbeFamily family) {
  std::vector<const ManifestItem*> out;
  for (const ManifestItem& item : Items())
    if (item.probe->family == family) out.push_back(&item);
  return out;
}

TEST(ProbeDataset, EveryFamilyAndConditionWithCountsFromTheScale) {
  std::map<std::string, std::map<std::string, int>> counts;
  for (const ManifestItem& item : Items())
    ++counts[std::string(ProbeFamilyName(item.probe->family))][item.probe->condition];
  // scale 0.25: 6 colours for negation and gravity, 3 geometry items per condition, 1 inertia pair.
  EXPECT_EQ(counts["negation"], (std::map<std::string, int>{{"base", 6}, {"negated", 6}, {"entity", 6}}));
  EXPECT_EQ(counts["gravity"],
            (std::map<std::string, int>{{"none", 6}, {"consistent", 6}, {"conflicting", 6}, {"neutral", 6}}));
  EXPECT_EQ(counts["inertia"], (std::map<std::string, int>{{"percent", 22}, {"pixels", 22}}));
  EXPECT_EQ(counts["geometry"], (std::map<std::string, int>{{"pixels", 3}, {"fractions", 3}, {"pair", 3}}));
}

TEST(ProbeDataset, ManifestLinesRoundTripAndAreDeterministic) {
  const std::vector<ManifestItem> again = *BuildProbeItems(Options());
  ASSERT_EQ(again.size(), Items().size());
  std::set<std::string> ids;
  for (size_t i = 0; i < Items().size(); ++i) {
    const std::string line = ManifestLine(Items()[i]);
    EXPECT_EQ(line, ManifestLine(again[i]));
    auto parsed = ParseManifestLine(line, "test");
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString() << "\n" << line;
    EXPECT_EQ(ManifestLine(*parsed), line);
    EXPECT_TRUE(ids.insert(Items()[i].id).second) << Items()[i].id;
  }
  ProbeOptions other = Options();
  other.seed = 2;
  EXPECT_NE(ManifestLine(BuildProbeItems(other)->front()), ManifestLine(Items().front()));
}

TEST(ProbeDataset, ConditionsOfAGroupShareColourAndSeed) {
  std::map<std::string, std::vector<const ManifestItem*>> groups;
  for (const ManifestItem& item : Items()) groups[item.probe->group].push_back(&item);
  const std::vector<GenerationItem> gen = GenerationItems(Items(), {}, 1, 0, 0);
  std::map<std::string, int64_t> seed_of;
  for (const GenerationItem& g : gen) seed_of[g.id] = g.seed;
  for (const auto& [group, members] : groups) {
    for (const ManifestItem* m : members) {
      EXPECT_EQ(m->targets, members[0]->targets) << m->id;
      EXPECT_EQ(seed_of[m->id], seed_of[members[0]->id]) << m->id;
    }
  }
  EXPECT_NE(seed_of[Items()[0].id], seed_of[Items().back().id]);
}

TEST(ProbeDataset, PromptsStateTheParameters) {
  for (const ManifestItem* item : Family(ProbeFamily::kNegation)) {
    const std::string hex = color::ToHex(item->targets[0]);
    EXPECT_NE(item->prompt.find(hex), std::string::npos);
    if (item->probe->condition == "negated") EXPECT_NE(item->prompt.find("no texture"), std::string::npos);
    if (item->probe->condition == "entity")
      EXPECT_NE(item->prompt.find("No " + item->probe->entity + "."), std::string::npos);
  }
  for (const ManifestItem* item : Family(ProbeFamily::kGravity)) {
    const ProbeSpec& p = *item->probe;
    if (p.condition == "none") EXPECT_FALSE(p.context_lab);
    if (p.condition == "consistent" || p.condition == "conflicting") {
      ASSERT_TRUE(p.context_lab);
      EXPECT_NE(item->prompt.find("the color of " + p.context), std::string::npos);
      const double de = color::DeltaE2000(color::Srgb8ToLab(item->targets[0]), *p.context_lab);
      if (p.condition == "consistent")
        EXPECT_LE(de, 15.0) << item->id;
      else
        EXPECT_GE(de, 40.0) << item->id;
    }
  }
  std::set<double> splits;
  for (const ManifestItem* item : Family(ProbeFamily::kInertia)) {
    splits.insert(item->probe->split);
    if (item->probe->condition == "percent")
      EXPECT_NE(item->prompt.find("%"), std::string::npos);
    else
      EXPECT_NE(item->prompt.find("pixels of the"), std::string::npos);
  }
  EXPECT_TRUE(splits.count(31.5));
  const ManifestItem* pair = nullptr;
  for (const ManifestItem* item : Family(ProbeFamily::kGeometry))
    if (item->probe->condition == "pair") pair = item;
  ASSERT_NE(pair, nullptr);
  EXPECT_EQ(pair->probe->shapes.size(), 2u);
  EXPECT_DOUBLE_EQ(pair->probe->shapes[1].cx - pair->probe->shapes[0].cx, *pair->probe->distance);
}

// --languages en,zh,fr: each English item has a Chinese and a French twin with the same group, condition,
// colours and parameters (so pairing and seeds hold within and across languages), its prompt stating
// the same numbers; the English items are exactly those of an English-only dataset.
TEST(ProbeDataset, EveryLanguageStatesTheSameParameters) {
  ProbeOptions o = Options();
  o.languages = {"fr", "en", "zh"};
  const std::vector<ManifestItem> all = *BuildProbeItems(o);
  ASSERT_EQ(all.size(), 3 * Items().size());
  std::map<std::string, const ManifestItem*> by_id;
  for (const ManifestItem& item : all) by_id[item.id] = &item;
  size_t k = 0;
  for (const ManifestItem& en : Items()) {
    ASSERT_EQ(ManifestLine(*by_id.at(en.id)), ManifestLine(en));
    EXPECT_EQ(all[k].id, en.id) << "manifest order: en, zh, fr for each item";
    k += 3;
    const std::string hex = color::ToHex(en.targets[0]);
    for (const std::string language : {"zh", "fr"}) {
      const ManifestItem& twin = *by_id.at(en.id + "-" + language);
      EXPECT_EQ(twin.language, language);
      EXPECT_EQ(twin.probe->group, en.probe->group);
      EXPECT_EQ(twin.probe->condition, en.probe->condition);
      EXPECT_EQ(twin.targets, en.targets);
      EXPECT_EQ(twin.probe->split, en.probe->split);
      EXPECT_EQ(twin.probe->shapes.size(), en.probe->shapes.size());
      EXPECT_EQ(twin.probe->context_lab.has_value(), en.probe->context_lab.has_value());
      EXPECT_NE(twin.prompt.find(hex), std::string::npos) << twin.prompt;
      EXPECT_NE(twin.prompt, en.prompt);
      if (en.probe->family == ProbeFamily::kGeometry && en.probe->condition != "fractions")
        EXPECT_NE(twin.prompt.find(fmt::format("({}, {})", en.probe->shapes[0].cx, en.probe->shapes[0].cy)),
                  std::string::npos)
            << twin.prompt;
      if (en.probe->family == ProbeFamily::kNegation && en.probe->condition == "entity")
        EXPECT_NE(twin.prompt.find(twin.probe->entity), std::string::npos) << twin.prompt;
    }
  }
  const ManifestItem& fr = *by_id.at("p-inertia-00-h0315-percent-fr");
  EXPECT_NE(fr.prompt.find("31,5 %"), std::string::npos) << fr.prompt;  // French decimal comma
  EXPECT_NE(by_id.at("p-inertia-00-h0315-percent-zh")->prompt.find("上方色块"), std::string::npos);
}

// A hand-edited probe_prompts.json: each defect is one error naming the language and the field.
TEST(ProbeDataset, AMalformedPromptFileNamesTheLanguageAndField) {
  const std::vector<MemoryColor> memory = *LoadMemoryColors(testing::DataDir() / "violin" / "memory_colors.csv");
  const Json good = Json::parse(ReadFile(testing::DataDir() / "violin" / "probe_prompts.json").value());
  testing::TempDir dir;
  auto load = [&](const Json& j) {
    EXPECT_TRUE(WriteFileAtomic(dir / "p.json", j.dump()).ok());
    return LoadProbeLanguages(dir / "p.json", {"en", "zh", "fr"}, memory).status();
  };
  ASSERT_TRUE(load(good).ok());
  Json j = good;
  j["languages"]["zh"]["prompts"]["base"] = "一张图像。";  // the colour is not stated
  EXPECT_NE(load(j).ToString().find("language zh field prompts.base"), std::string::npos) << load(j).ToString();
  j = good;
  j["languages"]["fr"]["prompts"]["entity"] = "{base} Sans {objet}.";
  EXPECT_NE(load(j).ToString().find("unknown placeholder {objet}"), std::string::npos) << load(j).ToString();
  j = good;
  j["languages"]["fr"]["objects"].erase("tomato");
  EXPECT_NE(load(j).ToString().find("missing \"tomato\""), std::string::npos) << load(j).ToString();
  j = good;
  j["languages"]["zh"]["entities"].erase(0);
  EXPECT_NE(load(j).ToString().find("as many as English's"), std::string::npos) << load(j).ToString();
  j = good;
  j["languages"].erase("fr");
  EXPECT_NE(load(j).ToString().find("no language \"fr\""), std::string::npos) << load(j).ToString();
  // A file that is no JSON at all names the file.
  ASSERT_TRUE(WriteFileAtomic(dir / "p.json", "{\"languages\": ").ok());
  const Status broken = LoadProbeLanguages(dir / "p.json", {"en"}, memory).status();
  EXPECT_EQ(broken.where(), (dir / "p.json").string()) << broken.ToString();
}

TEST(ProbeDataset, WritesAManifestTheVIOLINLoaderReads) {
  testing::TempDir dir;
  ProbeOptions options = Options(0.1);
  options.out_dir = dir.path();
  auto report = GenerateProbeDataset(options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  auto items = LoadManifest(dir.path());
  ASSERT_TRUE(items.ok()) << items.status().ToString();
  EXPECT_EQ(items->size(), report->items);
  for (const ManifestItem& item : *items) {
    auto image = imaging::ReadImage(dir.path() / *item.image);
    ASSERT_TRUE(image.ok()) << item.id;
    EXPECT_EQ(image->rgb, RenderGroundTruth(item, 256, 256).rgb) << item.id;
  }
  EXPECT_FALSE(GenerateProbeDataset(options).ok());  // not empty any more
  options.force = true;
  EXPECT_TRUE(GenerateProbeDataset(options).ok());
}

TEST(ProbeDataset, BadOptionsNameTheOption) {
  ProbeOptions o = Options();
  o.languages = {"de"};
  EXPECT_EQ(BuildProbeItems(o).status().where(), "prompt languages");
  o.languages = {"zh", "zh"};
  EXPECT_EQ(BuildProbeItems(o).status().where(), "prompt languages");
  o.languages = {};
  EXPECT_EQ(BuildProbeItems(o).status().where(), "prompt languages");
  o = Options();
  o.scale = 0;
  EXPECT_EQ(BuildProbeItems(o).status().where(), "scale");
  o = Options();
  o.image_size = 10;
  EXPECT_EQ(BuildProbeItems(o).status().where(), "ground-truth image size");
}

// --- measures on constructed images ---------------------------------------------------------

TEST(ProbeSpecs, MalformedParametersNameTheField) {
  std::string line = ManifestLine(*Family(ProbeFamily::kInertia).front());
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = line;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  auto bad = ParseManifestLine(replace("\"split\":10.0", "\"split\":150"), "m.jsonl:3");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().where(), "m.jsonl:3 field probe.split");
  bad = ParseManifestLine(replace("\"orientation\":\"h\"", "\"orientation\":\"d\""), "m.jsonl:3");
  EXPECT_EQ(bad.status().where(), "m.jsonl:3 field probe.orientation");
  bad = ParseManifestLine(
      replace("\"family\":\"inertia\",\"condition\":\"percent\"", "\"family\":\"negation\",\"condition\":\"base\""),
      "m.jsonl:3");
  EXPECT_EQ(bad.status().where(), "m.jsonl:3 field layout");  // a negation probe on an h2 item
  bad = ParseManifestLine(replace("\"family\":\"inertia\"", "\"family\":\"gravity\""), "m.jsonl:3");
  EXPECT_EQ(bad.status().where(), "m.jsonl:3 field probe.condition");  // "percent" is no gravity condition
  bad = ParseManifestLine(replace("\"condition\":\"percent\"", "\"condition\":\"percentage\""), "m.jsonl:3");
  EXPECT_EQ(bad.status().where(), "m.jsonl:3 field probe.condition");
  bad = ParseManifestLine(replace("\"group\":\"", "\"grou\":\""), "m.jsonl:3");
  EXPECT_EQ(bad.status().where(), "m.jsonl:3 field probe");

  const ManifestItem geo = *Family(ProbeFamily::kGeometry).front();
  line = ManifestLine(geo);
  const size_t at = line.find("\"size\":");
  ASSERT_NE(at, std::string::npos);
  std::string huge = line;
  huge.replace(at, 7, "\"size\":9999,\"x\":");
  bad = ParseManifestLine(huge, "m.jsonl:9");
  EXPECT_EQ(bad.status().where(), "m.jsonl:9 field probe.shapes.size");
  bad = ParseManifestLine(replace("\"canvas\":[256,256]", "\"canvas\":[256]"), "m.jsonl:9");
  EXPECT_EQ(bad.status().where(), "m.jsonl:9 field probe.canvas");
  bad = ParseManifestLine(replace("\"color\":\"#", "\"color\":\"#Z"), "m.jsonl:9");
  EXPECT_EQ(bad.status().where(), "m.jsonl:9 field probe.color");
}

TEST(MemoryColors, RecomputedFromHuesAnswers) {
  auto memory = LoadMemoryColors(testing::DataDir() / "violin" / "memory_colors.csv");
  ASSERT_TRUE(memory.ok()) << memory.status().ToString();
  auto board = ReadCsv(testing::DataDir() / "hues" / "board.csv");
  auto answers = ReadCsv(testing::DataDir() / "hues" / "human_responses.csv");
  auto blind = ReadFile(testing::DataDir() / "hues" / "colorblind_ids.txt");
  ASSERT_TRUE(board.ok() && answers.ok() && blind.ok());
  std::map<std::string, color::Lab> cell_lab;
  for (const auto& row : board->rows)
    cell_lab[row[0]] =
        color::Srgb8ToLab({static_cast<uint8_t>(std::stoi(row[3])), static_cast<uint8_t>(std::stoi(row[4])),
                           static_cast<uint8_t>(std::stoi(row[5]))});
  std::set<std::string> blind_ids;
  for (std::string_view l : SplitLines(*blind))
    if (!l.empty()) blind_ids.insert(std::string(l));
  const size_t user = *answers->Column("userId"), cell = *answers->Column("coordinate"),
               word = *answers->Column("word_en");
  std::map<std::string, std::vector<color::Lab>> by_word;
  for (const auto& row : answers->rows)
    if (!blind_ids.count(row[user]) && cell_lab.count(row[cell])) by_word[row[word]].push_back(cell_lab[row[cell]]);
  ASSERT_EQ(memory->size(), 43u);
  for (const MemoryColor& m : *memory) {
    std::string upper = m.object;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const std::vector<color::Lab>& pts = by_word[upper];
    ASSERT_FALSE(pts.empty()) << m.object;
    color::Lab mean;
    for (const color::Lab& p : pts) mean.L += p.L / pts.size(), mean.a += p.a / pts.size(), mean.b += p.b / pts.size();
    EXPECT_NEAR(m.lab.L, mean.L, 5e-5) << m.object;  // the CSV keeps 4 decimals
    EXPECT_NEAR(m.lab.a, mean.a, 5e-5) << m.object;
    EXPECT_NEAR(m.lab.b, mean.b, 5e-5) << m.object;
  }
}

}  // namespace
}  // namespace visalign::violin
