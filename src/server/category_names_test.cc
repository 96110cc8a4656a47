// The category names participants see: one for every category of the shipped words in every
// language the game offers, correctly spelt (not the published codes), and a bad table named.
#include "visalign/server/category_names.h"

#include <gtest/gtest.h>

#include <tuple>

#include "testing/dirs.h"
#include "visalign/benchmarks/hues/words.h"
#include "visalign/server/humans_export.h"
#include "visalign/server/study.h"

namespace visalign::server {
namespace {

TEST(CategoryNames, EveryShippedCategoryHasACorrectlySpeltNameInEveryLanguage) {
  auto names = CategoryNames::Default();
  ASSERT_TRUE(names.ok()) << names.status().ToString();
  auto words = hues::Vocabulary::Default();
  ASSERT_TRUE(words.ok()) << words.status().ToString();
  for (const hues::Word& w : words->words()) {
    EXPECT_TRUE(names->Has(w.category)) << w.category;
    for (const Language& l : SupportedLanguages()) {
      const std::string shown = names->Display(w.category, l.code);
      EXPECT_NE(shown, PublishedCategory(w.category, l.code)) << "the published code, not a name: " << shown;
      EXPECT_NE(shown.find_first_of("abcdefghijklmnopqrstuvwxyz"), std::string::npos) << shown;
    }
  }
  const std::vector<std::tuple<std::string, std::string, std::string>> expected = {
      {"Subjective", "en", "Subjective"},
      {"Subjective", "es", "Subjetivo"},
      {"Mineral", "en", "Stones and minerals"},
      {"Mineral", "es", "Piedras y minerales"},
      {"Pop Culture", "en", "Pop culture"},
      {"Pop Culture", "es", "Cultura popular"},
      {"Food", "es", "Comida"},
      {"Environment", "es", "Entorno"}};
  for (const auto& [category, language, name] : expected) EXPECT_EQ(names->Display(category, language), name);
  // A --words list's own category is shown as written; the stored code stays the published one.
  EXPECT_EQ(names->Display("Vehicles", "es"), "Vehicles");
  EXPECT_EQ(PublishedCategory("Subjective", "en"), "SUBJETIVE");
}

TEST(CategoryNames, ABadTableIsNamed) {
  visalign::testing::TempDir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"category,en\nAnimal,Animal\n", "no column \"es\""},
      {"name,en,es\nAnimal,Animal,Animal\n", "no column category"},
      {"category,en,es\nAnimal,Animal,\n", "an empty es name"},
      {"category,en,es\nAnimal,Animal,Animal\nAnimal,Beast,Bestia\n", "a category listed twice"}};
  for (const auto& [text, what] : cases) {
    const auto path = dir.Write("names.csv", text);
    auto names = CategoryNames::Load(path);
    ASSERT_FALSE(names.ok()) << text;
    EXPECT_EQ(names.status().what(), what) << text;
    EXPECT_EQ(names.status().where().rfind("category names " + path.string(), 0), 0u) << names.status().ToString();
  }
  EXPECT_EQ(CategoryNames::Load(dir.Write("names.csv", "category,en,es\nAnimal,Animal,Animal\n"))
                .value()
                .Display("Animal", "es"),
            "Animal");
}

}  // namespace
}  // namespace visalign::server
