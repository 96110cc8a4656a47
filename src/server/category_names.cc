#include "visalign/server/category_names.h"

#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"
#include "visalign/server/study.h"

namespace visalign::server {

Result<CategoryNames> CategoryNames::Load(const std::filesystem::path& csv) {
  const std::string where = "category names " + csv.string();
  auto table = ReadCsv(csv);
  if (!table.ok()) return Status(table.status().code(), table.status().what(), where, "a CSV file category,en,es");
  std::string expected = "columns category";
  for (const Language& l : SupportedLanguages()) expected += "," + l.code;
  Result<size_t> category = table->Column("category");
  if (!category.ok()) return Status::InvalidArgument("no column category", where, expected);
  CategoryNames out;
  for (const Language& l : SupportedLanguages()) {
    Result<size_t> column = table->Column(l.code);
    if (!column.ok()) return Status::InvalidArgument("no column " + QuoteText(l.code), where, expected);
    for (size_t r = 0; r < table->rows.size(); ++r) {
      const std::string& name = table->rows[r][*column];
      if (name.find_first_not_of(' ') == std::string::npos)
        return Status::InvalidArgument("an empty " + l.code + " name",
                                       where + ":" + std::to_string(table->line_numbers[r]),
                                       "a name in every language");
      out.names_[table->rows[r][*category]][l.code] = name;
    }
  }
  if (out.names_.size() != table->rows.size())
    return Status::InvalidArgument("a category listed twice", where, "one row per category");
  return out;
}

Result<CategoryNames> CategoryNames::Default() {
  VISALIGN_ASSIGN_OR_RETURN(std::filesystem::path csv, DataFile("hues/category_names.csv"));
  return Load(csv);
}

std::string CategoryNames::Display(const std::string& category, const std::string& language) const {
  auto it = names_.find(category);
  if (it == names_.end()) return category;
  auto name = it->second.find(language);
  return name == it->second.end() ? category : name->second;
}

}  // namespace visalign::server
