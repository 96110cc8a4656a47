#include <fmt/format.h>

#include <limits>

#include "visalign/clip.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"

namespace visalign::clip {

Result<std::vector<std::vector<int32_t>>> ReadTokenIdsFile(const std::filesystem::path& path) {
  constexpr const char* kExpected =
      "a JSON array of token id rows ([[49406, 320, 49407], ...]) or {\"rows\": [{\"ids\": [...]}]}";
  VISALIGN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  Result<Json> j = ParseJson(text);
  if (!j.ok()) return Status::InvalidArgument(j.status().what(), path.string(), kExpected);
  const bool wrapped = j->is_object() && j->contains("rows") && (*j)["rows"].is_array();
  const Json& rows = wrapped ? (*j)["rows"] : *j;
  if (!rows.is_array() || rows.empty()) {
    return Status::InvalidArgument(rows.is_array() ? "no rows" : "not an array of rows", path.string(), kExpected);
  }
  std::vector<std::vector<int32_t>> out;
  for (size_t r = 0; r < rows.size(); ++r) {
    const Json& row = wrapped && rows[r].is_object() && rows[r].contains("ids") ? rows[r]["ids"] : rows[r];
    const std::string where = fmt::format("{} row {}", path.string(), r + 1);
    if (!row.is_array() || row.empty())
      return Status::InvalidArgument("row is " + QuoteJson(row), where, "a non-empty array of ids");
    std::vector<int32_t> ids;
    for (const Json& id : row) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
        return Status::InvalidArgument("token id " + QuoteJson(id), where, "non-negative integers");
      }
      ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
    }
    out.push_back(std::move(ids));
  }
  return out;
}

}  // namespace visalign::clip
