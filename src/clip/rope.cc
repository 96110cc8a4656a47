#include "clip/rope.h"

#include <cmath>
#include <cstddef>

#include "clip/kernels.h"

namespace visalign::clip {

RopeTable MakeRopeTable(int grid, int head_dim, const RopeGrid& layout) {
  RopeTable t;
  t.tokens = grid * grid;
  t.pairs = head_dim / 2;
  const int bands = head_dim / 4;
  t.sin.resize(static_cast<size_t>(t.tokens) * t.pairs);
  t.cos.resize(t.sin.size());
  // timm computes positions, frequencies and angles in float32.
  std::vector<float> frequency(static_cast<size_t>(bands));
  for (int j = 0; j < bands; ++j) {
    frequency[j] = static_cast<float>(1.0 / std::pow(layout.temperature, static_cast<double>(j) / bands));
  }
  for (int k = 0; k < t.tokens; ++k) {
    const float scale = static_cast<float>(layout.ref_grid);
    const float row = (static_cast<float>(k / grid) + layout.offset) / static_cast<float>(grid) * scale;
    const float column = (static_cast<float>(k % grid) + layout.offset) / static_cast<float>(grid) * scale;
    const float position[2] = {layout.xy ? column : row, layout.xy ? row : column};
    for (int axis = 0; axis < 2; ++axis) {
      for (int j = 0; j < bands; ++j) {
        const float angle = position[axis] * frequency[j];
        const size_t at = static_cast<size_t>(k) * t.pairs + axis * bands + j;
        t.sin[at] = std::sin(angle);
        t.cos[at] = std::cos(angle);
      }
    }
  }
  return t;
}

void ApplyRope(const RopeTable& table, float* qkv, int batch, int seq, int prefix, int width, int heads) {
  const int head_dim = width / heads;
  const int rows = batch * table.tokens;
#pragma omp parallel for schedule(static) if (Parallel(static_cast <size_t>(rows) * width))
  for (int r = 0; r < rows; ++r) {
    const int k = r % table.tokens;
    float* row = qkv + (static_cast<size_t>(r / table.tokens) * seq + prefix + k) * 3 * width;
    const float* s = table.sin.data() + static_cast<size_t>(k) * table.pairs;
    const float* c = table.cos.data() + static_cast<size_t>(k) * table.pairs;
    for (int part = 0; part < 2; ++part) {  // q, then k
      for (int h = 0; h < heads; ++h) {
        float* x = row + part * width + h * head_dim;
        for (int i = 0; i < table.pairs; ++i) {
          const float a = x[2 * i], b = x[2 * i + 1];
          x[2 * i] = a * c[i] - b * s[i];
          x[2 * i + 1] = b * c[i] + a * s[i];
        }
      }
    }
  }
}

}  // namespace visalign::clip
