// Internal to the clip module's config readers (config.cc: OpenCLIP, hf_config.cc: Hugging Face
// transformers): typed access to one JSON object that remembers the keys it consumed (an unknown key
// is refused, never ignored), and the checks both layouts share (config_checks.cc).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "visalign/clip.h"
#include "visalign/core/json.h"
#include "visalign/core/status.h"
#include "visalign/core/untrusted.h"

namespace visalign::clip::config_internal {

constexpr std::array<float, 3> kOpenAiMean{0.48145466f, 0.4578275f, 0.40821073f};
constexpr std::array<float, 3> kOpenAiStd{0.26862954f, 0.26130258f, 0.27577711f};
constexpr int kDefaultVocabSize = 49408;
// OpenCLIP models use 4 (ViT-bigG 4.9231); a ratio above this is a broken or hostile config.
constexpr double kMaxMlpRatio = 64.0;
constexpr int64_t kMaxElements = (int64_t{1} << 31) - 1;
// The largest size field accepted (widths, layers, heads, image and patch sizes).
constexpr int64_t kMaxSizeField = int64_t{1} << 24;

// A size field's value: a whole number in 1..kMaxSizeField, else nullopt (never cast to int outside
// that range, where 2^32 + 224 would read as 224).
inline std::optional<int> SizeValue(int64_t v) {
  if (v <= 0 || v > kMaxSizeField) return std::nullopt;
  return static_cast<int>(v);
}
inline std::optional<int> SizeValue(const Json& v) {
  if (!v.is_number_integer()) return std::nullopt;
  return SizeValue(v.get<int64_t>());
}
// A number as a float, or nullopt when it is not a number or beyond float's range (where it would
// become infinite and every pixel or activation NaN).
inline std::optional<float> FloatValue(const Json& v) {
  if (!v.is_number() || std::fabs(v.get<double>()) > std::numeric_limits<float>::max()) return std::nullopt;
  return static_cast<float>(v.get<double>());
}
// What a refused option is measured against: the towers visalign runs natively (docs/clip.md).
constexpr const char* kNativeTowersExpected =
    "an option the native towers implement (ViT, ModifiedResNet, ConvNeXt, SigLIP; docs/clip.md)";

// Reads typed fields from one JSON object, remembering which keys were consumed so the rest can be
// checked: a key we do not understand must not be silently ignored.
class Fields {
 public:
  Fields(const Json& obj, std::string where) : obj_(obj), where_(std::move(where)) {}

  bool Has(const std::string& key) const { return obj_.contains(key) && !obj_[key].is_null(); }

  Result<int> Int(const std::string& key, std::optional<int> fallback) {
    used_.insert(key);
    if (!Has(key)) {
      if (fallback) return *fallback;
      return Status::InvalidArgument("missing field \"" + key + "\"", where_, "a positive integer");
    }
    const Json& v = obj_[key];
    const std::optional<int> size = SizeValue(v);
    if (!size)
      return Status::InvalidArgument("field " + QuoteText(key) + " is " + QuoteJson(v), where_, "a positive integer");
    return *size;
  }

  Result<double> Number(const std::string& key, double fallback) {
    used_.insert(key);
    if (!Has(key)) return fallback;
    const Json& v = obj_[key];
    if (!v.is_number())
      return Status::InvalidArgument("field " + QuoteText(key) + " is " + QuoteJson(v), where_, "a number");
    return v.get<double>();
  }

  // A normalisation epsilon: a positive number that is a positive float (a negative one would take
  // square roots of negative variances).
  Result<float> Epsilon(const std::string& key, float fallback) {
    used_.insert(key);
    if (!Has(key)) return fallback;
    const std::optional<float> eps = FloatValue(obj_[key]);
    if (!eps || !(*eps > 0)) {
      return Status::InvalidArgument("field " + QuoteText(key) + " is " + QuoteJson(obj_[key]), where_,
                                     "a positive number within a 32-bit float's range");
    }
    return *eps;
  }

  Result<std::string> String(const std::string& key, const std::string& fallback) {
    used_.insert(key);
    if (!Has(key)) return fallback;
    const Json& v = obj_[key];
    if (!v.is_string())
      return Status::InvalidArgument("field " + QuoteText(key) + " is " + QuoteJson(v), where_, "a string");
    return v.get<std::string>();
  }

  Result<bool> Bool(const std::string& key, bool fallback) {
    used_.insert(key);
    if (!Has(key)) return fallback;
    const Json& v = obj_[key];
    if (!v.is_boolean())
      return Status::InvalidArgument("field " + QuoteText(key) + " is " + QuoteJson(v), where_, "true or false");
    return v.get<bool>();
  }

  // A square size given as N or [N, N].
  Result<int> SquareSize(const std::string& key, std::optional<int> fallback) {
    if (Has(key) && obj_[key].is_array()) {
      used_.insert(key);
      const Json& v = obj_[key];
      const std::optional<int> size = v.size() == 2 && v[0] == v[1] ? SizeValue(v[0]) : std::nullopt;
      if (!size) {
        return Status::Unsupported("non-square or invalid " + key + " " + QuoteJson(v), where_,
                                   "a square size N or [N, N]");
      }
      return *size;
    }
    return Int(key, fallback);
  }

  // Accepts `key` only when absent/null or equal to one of `allowed`; otherwise the feature is unsupported.
  Status Require(const std::string& key, const std::vector<Json>& allowed, const std::string& feature) {
    used_.insert(key);
    if (!Has(key)) return Status::Ok();
    for (const Json& a : allowed) {
      if (obj_[key] == a) return Status::Ok();
    }
    return Status::Unsupported("unsupported " + feature + " (" + key + " = " + QuoteJson(obj_[key]) + ")", where_,
                               kNativeTowersExpected);
  }

  // Keys that do not change inference (training-only or output-format options).
  void Ignore(std::initializer_list<const char*> keys) {
    for (const char* k : keys) used_.insert(k);
  }

  Status CheckAllUsed() const {
    for (const auto& [key, value] : obj_.items()) {
      if (!used_.count(key)) {
        return Status::Unsupported(
            "unknown config field " + QuoteText(key) + " = " + QuoteJson(value), where_,
            "only fields of the natively run towers' configs (refusing rather than ignoring it)");
      }
    }
    return Status::Ok();
  }

  const std::string& where() const { return where_; }

 private:
  const Json& obj_;
  std::string where_;
  std::set<std::string> used_;
};

Result<const Json*> Object(const Json& parent, const std::string& key, const std::string& where);
Status CheckHeads(const TowerConfig& t, const std::string& where);
// A ViT's patch grid is image_size / patch_size rounded down: a remainder (image 384, patch 14 in
// ViT-SO400M-14-SigLIP-384) is dropped, as PyTorch's stride-P convolution drops it. Requires
// patch_size <= image_size.
Status CheckPatchGrid(const VisionConfig& v, const std::string& where);
// OpenCLIP's int(width * mlp_ratio), for a ratio in (0, kMaxMlpRatio] giving at least one unit.
Result<int> MlpWidth(int width, double mlp_ratio, const std::string& where);
// The model's largest tensors and activations must have fewer than 2^31 elements (int indexing).
Status CheckSizesFit(const ClipConfig& c, const std::string& where);
// Three numbers (or one for all channels) under `key`, `fallback` when absent.
Result<std::array<float, 3>> Triple(const Json& obj, const std::string& key, const std::array<float, 3>& fallback,
                                    const std::string& where);
Status CheckPreprocess(const PreprocessConfig& p, const std::string& where);
// Four positive integers (ResNet layers, ConvNeXt depths/dims).
Result<std::array<int, 4>> FourInts(const Json& v, const std::string& key, const std::string& where);

// timm_config.cc: a vision_cfg naming a timm SigLIP ViT (vit_*_siglip_*), and any other timm trunk
// (ConvNeXt, or a refusal naming its family).
Result<VisionConfig> ParseTimmSiglipVision(const Json& v, const std::string& where);
Result<VisionConfig> ParseOpenClipTimm(const Json& v, const std::string& where);
// timm_model_kwargs of a timm ViT trunk (img_size, embed_dim, depth, num_heads, patch_size,
// mlp_ratio) over the named model's defaults in `c` and `mlp_ratio`; `ignored` keys are accepted
// unread, any other is refused naming it. Shared by the SigLIP and Eva trunks.
Status ApplyTimmVitKwargs(const Json& kwargs, const std::string& where, std::initializer_list<const char*> ignored,
                          VisionConfig& c, double& mlp_ratio);
// timm's Eva trunks (EVA-CLIP, PE-Core) and CLIP-layout ViTs (eva_config.cc); IsTimmEvaName says
// whether a timm_model_name is one of them.
bool IsTimmEvaName(const std::string& name);
Result<VisionConfig> ParseTimmEva(const Json& v, const std::string& where);
// timm's ViTamin trunks (vitamin_*; vitamin_config.cc).
Result<VisionConfig> ParseTimmVitamin(const Json& v, const std::string& where);
// MobileCLIP's timm trunks (mobileclip_config.cc): FastViT MCi fastvit_mci0..4 and the MCi ViT vit_base_mci_224.
Result<VisionConfig> ParseTimmFastVit(const Json& v, const std::string& where);
Result<VisionConfig> ParseTimmMciVit(const Json& v, const std::string& where);

}  // namespace visalign::clip::config_internal
