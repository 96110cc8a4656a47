#include "benchmarks/hues/text_util.h"

namespace visalign::hues::internal {

std::string AsciiUpper(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

}  // namespace visalign::hues::internal
