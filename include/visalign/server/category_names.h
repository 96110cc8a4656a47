// The names participants see for the word categories (words.csv's `category` column: `Animal`,
// `Pop Culture`, ...) in each language the game is played in, from a table with a `category`
// column and one column per supported language code (data/hues/category_names.csv). Only what is
// shown changes: answers keep storing and exporting the published code (PublishedCategory:
// `SUBJETIVO`/`SUBJETIVE`, `PIEDRA`/`STONE`, ...), as the published answer files spell them.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "visalign/core/status.h"

namespace visalign::server {

class CategoryNames {
 public:
  // InvalidArgument at "category names <file>[:<line>]" for a missing language column, an empty
  // name, or a category listed twice.
  static Result<CategoryNames> Load(const std::filesystem::path& csv);
  static Result<CategoryNames> Default();  // data/hues/category_names.csv

  // The name of `category` in `language` (a code of SupportedLanguages); a category the table does
  // not list (one of a `--words` list's own) is shown as words.csv writes it.
  std::string Display(const std::string& category, const std::string& language) const;
  bool Has(const std::string& category) const { return names_.count(category) > 0; }

 private:
  std::map<std::string, std::map<std::string, std::string>> names_;  // category -> language -> name
};

}  // namespace visalign::server
