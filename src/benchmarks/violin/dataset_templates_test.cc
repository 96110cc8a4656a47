#include "dataset_templates.h"

#include <gtest/gtest.h>

#include <map>

#include "visalign/core/io.h"

namespace visalign::violin {
namespace {

std::string Doc(const std::string& templates_json) { return "{\"templates\": [" + templates_json + "]}"; }

// A complete, valid document whose first template can be replaced to provoke one error.
std::string ValidDocWith(const std::string& first) {
  std::string rest;
  for (const VariationSpec& spec : VariationSpecs()) {
    for (const GroupSpec& g : spec.groups) {
      const std::vector<std::string_view> names = PlaceholderNames(spec.layouts.front(), spec.fuzzy);
      std::string text;
      for (std::string_view n : names) text += " {" + std::string(n) + "}";
      for (const char* split : {"train", "test"}) {
        rest += ",{\"id\": \"v" + std::to_string(spec.variation) + "-" + std::string(g.language) + "-" +
                std::string(g.notation) + "-" + split + "\", \"variation\": " + std::to_string(spec.variation) +
                ", \"language\": \"" + std::string(g.language) + "\", \"notation\": \"" + std::string(g.notation) +
                "\", \"layout\": \"" + std::string(LayoutName(spec.layouts.front())) + "\", \"prompt_split\": \"" +
                split + "\", \"text\": \"Make" + text + "\"}";
      }
    }
  }
  return Doc(first + rest);
}

const std::string kGood =
    R"({"id": "x", "variation": 1, "language": "en", "notation": "hex", "layout": "single", "prompt_split": "train", "text": "Paint {color}."})";

TEST(Templates, ShippedFileHasTheDocumentedTemplateCounts) {
  auto path = DataFile("violin/templates.json");
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  auto t = LoadTemplates(*path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  std::map<std::string, int> per_group, held_out;
  for (const PromptTemplate& p : *t) {
    const std::string key =
        std::to_string(p.variation) + "/" + p.language + "/" + p.notation + "/" + std::string(LayoutName(p.layout));
    ++per_group[key];
    if (p.prompt_split == "test") ++held_out[key];
  }
  const std::map<std::string, int> expected{{"1/en/hex/single", 10}, {"2/en/hex/h2", 10},     {"2/en/hex/v2", 10},
                                            {"3/en/hex/q4", 30},     {"4/en/hex/single", 10}, {"5/zh/hex/single", 10},
                                            {"5/fr/hex/single", 10}, {"6/en/rgb/single", 5},  {"6/en/hsl/single", 5}};
  EXPECT_EQ(per_group, expected);
  const std::map<std::string, int> expected_held_out{
      {"1/en/hex/single", 2}, {"2/en/hex/h2", 2},     {"2/en/hex/v2", 2},
      {"3/en/hex/q4", 6},     {"4/en/hex/single", 2}, {"5/zh/hex/single", 2},
      {"5/fr/hex/single", 2}, {"6/en/rgb/single", 1}, {"6/en/hsl/single", 1}};
  EXPECT_EQ(held_out, expected_held_out);
  EXPECT_EQ(t->front().id, "v1-en-01");
  EXPECT_EQ(t->front().number, 1);
  EXPECT_EQ(t->back().number, 10);  // the 10th template of variation 6
}

TEST(Templates, ValidDocumentParses) {
  auto t = ParseTemplates(ValidDocWith(kGood), "t.json");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->front().text, "Paint {color}.");
}

struct BadCase {
  std::string first;
  std::string message;  // expected inside ToString()
};

TEST(Templates, RejectsBadTemplatesNamingTheTemplateAndField) {
  const std::vector<BadCase> cases{
      {R"({"id": "x", "variation": 7, "language": "en", "notation": "hex", "layout": "single", "prompt_split": "train", "text": "{color}"})",
       "bad variation 7 (t.json template x field variation)"},
      {R"({"id": "x", "variation": 1, "language": "zh", "notation": "hex", "layout": "single", "prompt_split": "train", "text": "{color}"})",
       "language/notation zh/hex not in variation 1"},
      {R"({"id": "x", "variation": 1, "language": "en", "notation": "hex", "layout": "h2", "prompt_split": "train", "text": "{top} {bottom}"})",
       "layout \"h2\" not allowed in variation 1"},
      {R"({"id": "x", "variation": 1, "language": "en", "notation": "hex", "layout": "single", "prompt_split": "dev", "text": "{color}"})",
       "bad prompt_split \"dev\""},
      {R"({"id": "x", "variation": 1, "language": "en", "notation": "hex", "layout": "single", "prompt_split": "train", "text": "{colour}"})",
       "unknown placeholder {colour} (t.json template x field text)"},
      {R"({"id": "x", "variation": 1, "language": "en", "notation": "hex", "layout": "single", "prompt_split": "train", "text": "{color} or {color}"})",
       "placeholder {color} appears 2 times"},
      {R"({"id": "x", "variation": 2, "language": "en", "notation": "hex", "layout": "h2", "prompt_split": "train", "text": "{top} only"})",
       "placeholder {bottom} appears 0 times"},
      {R"({"id": "x", "variation": 4, "language": "en", "notation": "hex", "layout": "single", "prompt_split": "train", "text": "{color}"})",
       "unknown placeholder {color}"},
      {R"({"id": "x", "variation": 1, "language": "en", "notation": "hex", "layout": "single", "prompt_split": "train", "text": "{color"})",
       "unclosed '{'"},
  };
  for (const BadCase& c : cases) {
    auto t = ParseTemplates(ValidDocWith(c.first), "t.json");
    ASSERT_FALSE(t.ok()) << c.first;
    EXPECT_NE(t.status().ToString().find(c.message), std::string::npos) << t.status().ToString();
  }
}

TEST(Templates, RejectsDuplicateIdsAndGroupsWithoutHeldOutTemplates) {
  auto dup = ParseTemplates(ValidDocWith(kGood + "," + kGood), "t.json");
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().what().find("duplicate id \"x\""), std::string::npos);
  auto lonely = ParseTemplates(Doc(kGood), "t.json");
  ASSERT_FALSE(lonely.ok());
  EXPECT_NE(lonely.status().what().find("variation 1 en/hex lacks a train or a test template"), std::string::npos)
      << lonely.status().ToString();
  EXPECT_FALSE(ParseTemplates("[1, 2]", "t.json").ok());
}

TEST(Templates, FillReplacesPlaceholdersInLayoutOrder) {
  PromptTemplate q4;
  q4.layout = Layout::kQ4;
  q4.text = "TR {top_right}, TL {top_left}, BL {bottom_left}, BR {bottom_right}.";
  EXPECT_EQ(FillTemplate(q4, false, {"#000001", "#000002", "#000003", "#000004"}),
            "TR #000002, TL #000001, BL #000003, BR #000004.");
  PromptTemplate fuzzy;
  fuzzy.text = "生成 {low} 到 {high} 之间的颜色";
  EXPECT_EQ(FillTemplate(fuzzy, true, {"#111111", "#EEEEEE"}), "生成 #111111 到 #EEEEEE 之间的颜色");
}

}  // namespace
}  // namespace visalign::violin
