// The checks every config reader shares (config_fields.h): required objects, the patch grid, heads
// dividing widths, OpenCLIP's MLP width, the 2^31-element bound on tensors and activations, and the
// preprocessing constants.
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "clip/config_fields.h"

namespace visalign::clip {

namespace config_internal {

Result<const Json*> Object(const Json& parent, const std::string& key, const std::string& where) {
  if (!parent.contains(key) || !parent[key].is_object()) {
    return Status::InvalidArgument("missing object " + QuoteText(key), where, "a JSON object");
  }
  return &parent[key];
}

Status CheckPatchGrid(const VisionConfig& v, const std::string& where) {
  if (v.patch_size > v.image_size) {
    return Status::InvalidArgument(fmt::format("patch_size {} exceeds image_size {}", v.patch_size, v.image_size),
                                   where, "a patch size of at most the image size");
  }
  return Status::Ok();
}

Status CheckHeads(const TowerConfig& t, const std::string& where) {
  if (t.width % t.heads != 0) {
    return Status::InvalidArgument(fmt::format("width {} is not divisible by {} heads", t.width, t.heads), where,
                                   "width = heads * head_width");
  }
  return Status::Ok();
}

// OpenCLIP's int(width * mlp_ratio), for a ratio in (0, kMaxMlpRatio] giving at least one unit.
Result<int> MlpWidth(int width, double mlp_ratio, const std::string& where) {
  const std::string expected = fmt::format("a number above 0 and at most {}", kMaxMlpRatio);
  if (!(mlp_ratio > 0.0 && mlp_ratio <= kMaxMlpRatio)) {
    return Status::InvalidArgument(fmt::format("field \"mlp_ratio\" is {}", mlp_ratio), where, expected);
  }
  const double mlp_width = std::floor(width * mlp_ratio);
  if (mlp_width < 1.0) {
    return Status::InvalidArgument(fmt::format("mlp_ratio {} gives an MLP of width 0 for width {}", mlp_ratio, width),
                                   where, "a ratio giving at least one hidden unit");
  }
  return static_cast<int>(mlp_width);
}

// The model's largest tensors and activations must have fewer than 2^31 elements: the kernels
// index them with int. Each field is bounded on its own (Fields::Int); this bounds their products.
Status CheckSizesFit(const ClipConfig& c, const std::string& where) {
  // Convolutional towers (ResNet, ConvNeXt) have no patches: their vision rows below are zero.
  const int64_t grid = c.vision.patch_size > 0 ? c.vision.image_size / c.vision.patch_size : 0;
  const int64_t tokens = grid > 0 ? grid * grid + 1 : 0;
  const int64_t patch_in = int64_t{3} * c.vision.patch_size * c.vision.patch_size;
  struct Product {
    const char* what;
    int64_t a, b;
  };
  const Product products[] = {
      {"vision tokens x width", tokens, std::max(c.vision.width, c.vision.mlp_width)},
      {"vision attention scores (tokens x tokens x heads)", tokens * tokens, c.vision.heads},
      {"patch embedding (3 x patch_size^2 x width)", patch_in, c.vision.width},
      {"vision MLP weights (width x mlp_width)", c.vision.width, c.vision.mlp_width},
      {"vision projection (width x embed_dim)", c.vision.width, c.embed_dim},
      {"token embedding (vocab_size x width)", c.text.vocab_size, c.text.width},
      {"text tokens x width", c.text.context_length, std::max(c.text.width, c.text.mlp_width)},
      {"text attention scores (context x context x heads)", int64_t{c.text.context_length} * c.text.context_length,
       c.text.heads},
      {"text MLP weights (width x mlp_width)", c.text.width, c.text.mlp_width},
      {"text projection (width x embed_dim)", c.text.width, c.embed_dim},
  };
  for (const Product& p : products) {
    // Factors are below 2^31 (fields up to 2^24, tokens up to 2^48 / 1 only when patch_size is 1).
    if (p.a > kMaxElements || p.b > kMaxElements || p.a * p.b > kMaxElements) {
      return Status::Unsupported(fmt::format("{} is {} x {} elements", p.what, p.a, p.b), where,
                                 "a model whose tensors have fewer than 2^31 elements");
    }
  }
  return Status::Ok();
}

Result<std::array<float, 3>> Triple(const Json& obj, const std::string& key, const std::array<float, 3>& fallback,
                                    const std::string& where) {
  if (!obj.contains(key) || obj[key].is_null()) return fallback;
  const Json& v = obj[key];
  std::array<float, 3> out{};
  if (v.is_array() && v.size() == 3) {
    for (size_t i = 0; i < 3; ++i) {
      const std::optional<float> x = FloatValue(v[i]);
      if (!x) break;
      out[i] = *x;
      if (i == 2) return out;
    }
  }
  if (const std::optional<float> x = FloatValue(v)) return std::array<float, 3>{*x, *x, *x};
  return Status::InvalidArgument("field " + QuoteText(key) + " is " + QuoteJson(v), where,
                                 "three numbers (one per RGB channel) within a 32-bit float's range");
}

Status CheckPreprocess(const PreprocessConfig& p, const std::string& where) {
  for (float s : p.std) {
    if (!(s > 0.0f)) return Status::InvalidArgument("std must be positive", where, "three positive numbers");
  }
  return Status::Ok();
}

// Four positive integers (ResNet layers, ConvNeXt depths/dims).
Result<std::array<int, 4>> FourInts(const Json& v, const std::string& key, const std::string& where) {
  std::array<int, 4> out{};
  if (v.is_array() && v.size() == out.size()) {
    for (size_t i = 0; i < out.size(); ++i) {
      if (!v[i].is_number_integer() || v[i].get<int64_t>() <= 0 || v[i].get<int64_t>() > (1 << 16)) break;
      out[i] = static_cast<int>(v[i].get<int64_t>());
      if (i + 1 == out.size()) return out;
    }
  }
  return Status::InvalidArgument("field " + QuoteText(key) + " is " + QuoteJson(v), where,
                                 "four positive integers (one per stage)");
}

}  // namespace config_internal

}  // namespace visalign::clip
