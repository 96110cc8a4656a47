#include "visalign/core/json.h"

namespace visalign {

// nlohmann::json keeps objects in a std::map: converting to it sorts every object's keys.
std::string CanonicalJsonText(const Json& value) { return nlohmann::json(value).dump(); }

bool SameJson(const Json& a, const Json& b) { return nlohmann::json(a) == nlohmann::json(b); }

}  // namespace visalign
