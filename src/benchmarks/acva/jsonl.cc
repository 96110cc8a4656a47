#include "benchmarks/acva/jsonl.h"

#include <cmath>

#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"

namespace visalign::acva::jsonl {

Status ForEachLine(std::string_view text, const std::string& source,
                   const std::function<Status(const Json&, const std::string&)>& fn) {
  const std::vector<std::string_view> lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (i == 0 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    const std::string where = source + ":" + std::to_string(i + 1);
    auto j = ParseJson(line);
    if (!j.ok()) return Status::InvalidArgument("line is not valid JSON", where, "one JSON object per line");
    VISALIGN_RETURN_IF_ERROR(fn(*j, where));
  }
  return Status::Ok();
}

Status CheckKnownFields(const Json& object, std::initializer_list<std::string_view> known, const std::string& where) {
  for (const auto& [key, value] : object.items()) {
    bool found = false;
    std::string names;
    for (std::string_view k : known) {
      found = found || key == k;
      names += (names.empty() ? "" : ", ") + std::string(k);
    }
    if (!found) return Status::InvalidArgument("unknown field " + QuoteText(key), where, "one of: " + names);
  }
  return Status::Ok();
}

Result<std::string> RequiredString(const Json& object, const std::string& key, const std::string& where) {
  auto it = object.find(key);
  if (it == object.end()) return Status::InvalidArgument("missing field \"" + key + "\"", where, "a non-empty string");
  if (!it->is_string() || it->get<std::string>().empty())
    return Status::InvalidArgument("field \"" + key + "\" is " + (it->is_string() ? "empty" : QuoteJson(*it)),
                                   where + " field " + key, "a non-empty string");
  return it->get<std::string>();
}

Result<double> RequiredNumber(const Json& object, const std::string& key, const std::string& where) {
  auto it = object.find(key);
  if (it == object.end()) return Status::InvalidArgument("missing field \"" + key + "\"", where, "a number");
  if (!it->is_number() || !std::isfinite(it->get<double>()))
    return Status::InvalidArgument("field \"" + key + "\" is " + QuoteJson(*it), where + " field " + key,
                                   "a finite number");
  return it->get<double>();
}

}  // namespace visalign::acva::jsonl
