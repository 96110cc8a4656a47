// Small text helpers shared by the Hues and Cues sources (internal).
#pragma once

#include <string>
#include <string_view>

namespace visalign::hues::internal {

// ASCII upper-case copy (non-ASCII bytes, e.g. UTF-8 accents, are kept as they are).
std::string AsciiUpper(std::string_view text);
// Shortest round-trip text of a double; empty for NaN (a missing value in CSV output).
std::string FormatNumber(double value);

}  // namespace visalign::hues::internal
