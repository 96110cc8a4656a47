#include "visalign/core/format.h"

#include <fmt/format.h>

#include <cmath>

namespace visalign {

std::string FormatNumber(double value) {
  if (!std::isfinite(value)) return "";
  return fmt::format("{}", value);
}

std::string FormatFixed(double value, int decimals) {
  if (!std::isfinite(value)) return "";
  return fmt::format("{:.{}f}", value, decimals);
}

}  // namespace visalign
