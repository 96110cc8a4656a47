#include "benchmarks/hues/text_util.h"

#include <fmt/format.h>

#include <cmath>

namespace visalign::hues::internal {

std::string AsciiUpper(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

std::string FormatNumber(double value) {
  if (std::isnan(value)) return "";
  return fmt::format("{}", value);
}

}  // namespace visalign::hues::internal
