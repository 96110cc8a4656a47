// JSON Lines reading with "file:line" error locations, and typed field access for ACVA's files.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>

#include "visalign/core/json.h"
#include "visalign/core/status.h"

namespace visalign::acva::jsonl {

// Calls fn(object, "source:line") for every non-blank line; a line that is not JSON is an error
// naming its location. Stops at the first error fn returns.
Status ForEachLine(std::string_view text, const std::string& source,
                   const std::function<Status(const Json&, const std::string&)>& fn);

// InvalidArgument naming the first field of `object` that is not in `known` (a misspelt field is an
// error, not ignored).
Status CheckKnownFields(const Json& object, std::initializer_list<std::string_view> known, const std::string& where);
// A non-empty string field, or InvalidArgument naming "<where> field <key>".
Result<std::string> RequiredString(const Json& object, const std::string& key, const std::string& where);
// A finite number field.
Result<double> RequiredNumber(const Json& object, const std::string& key, const std::string& where);

}  // namespace visalign::acva::jsonl
