// Small text helpers shared by the Hues and Cues sources (internal).
#pragma once

#include <string>
#include <string_view>

namespace visalign::hues::internal {

// ASCII upper-case copy (non-ASCII bytes, e.g. UTF-8 accents, are kept as they are).
std::string AsciiUpper(std::string_view text);

}  // namespace visalign::hues::internal
