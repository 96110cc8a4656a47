// The RoPE tables against timm's own buffers: the fixtures' debug files hold
// `visual.trunk.rope.sin_cos` [patches, 2 * head_dim] = [sin | cos] per patch token (each angle
// repeated for its pair of dimensions), EVA02's 'ij' layout without offset (eva02-tiny) and
// PE-Core's 'xy' layout with offset 1 (pe-core-tiny).
#include "clip/rope.h"

#include <gtest/gtest.h>

#include <cmath>

#include "clip/fixture_testing.h"
#include "clip/safetensors.h"

namespace visalign::clip {
namespace {

// timm computes the angles in float32 (as MakeRopeTable does); sin/cos of angles up to ~16 rad.
constexpr float kTableTolerance = 1e-6f;

void ExpectTimmTable(const std::string& fixture, int grid, int head_dim, const RopeGrid& layout) {
  const SafetensorsFile debug =
      SafetensorsFile::Open(testing::FixtureDir(fixture) / "debug_activations.safetensors").value();
  const TensorInfo* t = debug.Find("visual.trunk.rope.sin_cos");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->shape, (std::vector<int64_t>{grid * grid, 2 * head_dim}));
  const std::vector<float> want = SafetensorsFile::ToFloat(*t, "debug").value();
  const RopeTable table = MakeRopeTable(grid, head_dim, layout);
  ASSERT_EQ(table.tokens, grid * grid);
  ASSERT_EQ(table.pairs, head_dim / 2);
  float worst = 0.0f;
  for (int k = 0; k < table.tokens; ++k) {
    for (int d = 0; d < head_dim; ++d) {
      const float* row = want.data() + static_cast<size_t>(k) * 2 * head_dim;
      const size_t pair = static_cast<size_t>(k) * table.pairs + d / 2;
      worst = std::max({worst, std::abs(table.sin[pair] - row[d]), std::abs(table.cos[pair] - row[head_dim + d])});
    }
  }
  EXPECT_LE(worst, kTableTolerance) << fixture;
}

TEST(RopeTable, Eva02IjLayoutMatchesTimmsBuffer) {
  ExpectTimmTable("eva02-tiny", 4, 16, RopeGrid{/*ref_grid=*/16, /*offset=*/0.0f, /*xy=*/false});
}

TEST(RopeTable, PeCoreXyLayoutWithOffsetMatchesTimmsBuffer) {
  ExpectTimmTable("pe-core-tiny", 4, 16, RopeGrid{/*ref_grid=*/14, /*offset=*/1.0f, /*xy=*/true});
}

TEST(RopeTable, XySwapsTheAxesOfIj) {
  const RopeTable ij = MakeRopeTable(3, 8, RopeGrid{6, 0.5f, false});
  const RopeTable xy = MakeRopeTable(3, 8, RopeGrid{6, 0.5f, true});
  for (int k = 0; k < 9; ++k) {
    const int transposed = (k % 3) * 3 + k / 3;  // (r, c) -> (c, r)
    for (int i = 0; i < 4; ++i) EXPECT_EQ(xy.sin[k * 4 + i], ij.sin[transposed * 4 + i]) << k << " " << i;
  }
}

}  // namespace
}  // namespace visalign::clip
