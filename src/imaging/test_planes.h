// Test helper shared by the imaging tests: a gray plane whose pixel (x, y) is f(x, y).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "visalign/imaging/purity.h"

namespace visalign::imaging::testing {

inline GrayImage Plane(int w, int h, const std::function<uint8_t(int, int)>& f) {
  GrayImage g{w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h)};
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) g.pixels[static_cast<size_t>(y) * w + x] = f(x, y);
  return g;
}

}  // namespace visalign::imaging::testing
