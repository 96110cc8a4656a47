// 2-d rotary position embedding of a ViT's patch tokens, as timm's RotaryEmbeddingCat builds it for
// EVA02 and PE-Core ('cat' layout, interleaved pairs): per head of width d, d/4 frequencies f_j =
// temperature^(-j / (d/4)); patch (r, c) of a g x g grid sits at t = ((r, c) + offset) / g * ref_grid
// (rope_grid_offset: EVA02 0, PE-Core 1); its angles are [t_r·f, t_c·f] (grid_indexing 'ij', EVA02) or
// [t_c·f, t_r·f] ('xy', PE-Core), d/2 of them, each used by one pair of dimensions (2i, 2i+1):
// x'_2i = x_2i cos θ_i − x_2i+1 sin θ_i, x'_2i+1 = x_2i+1 cos θ_i + x_2i sin θ_i. Internal to the clip module.
#pragma once

#include <vector>

namespace visalign::clip {

struct RopeTable {
  int tokens = 0;               // patch tokens (g * g), row-major
  int pairs = 0;                // d / 2 angles per token
  std::vector<float> sin, cos;  // [tokens, pairs]
};

struct RopeGrid {
  int ref_grid = 0;     // ref_feat_shape
  float offset = 0.0f;  // rope_grid_offset
  bool xy = false;      // column angles first
  double temperature = 10000.0;
};
RopeTable MakeRopeTable(int grid, int head_dim, const RopeGrid& layout);

// Rotates q and k (columns [0, width) and [width, 2 width) of qkv[batch * seq, 3 * width], heads of
// width / heads) of every item's tokens prefix .. prefix + table.tokens − 1; v and the first
// `prefix` tokens (class token) are left alone.
void ApplyRope(const RopeTable& table, float* qkv, int batch, int seq, int prefix, int width, int heads);

}  // namespace visalign::clip
