#include "benchmarks/violin/provider_imitation.h"

#include <algorithm>

#include "benchmarks/violin/provider_imitation_base.h"
#include "visalign/core/untrusted.h"
#include "visalign/imaging/image.h"

namespace visalign::violin {
namespace internal {

std::string Bearer(const HttpServerRequest& req) {
  const std::string h = req.Header("Authorization");
  return h.rfind("Bearer ", 0) == 0 ? h.substr(7) : "";
}

std::optional<Json> ObjectBody(const HttpServerRequest& req) {
  auto parsed = ParseJson(req.body);
  if (!parsed.ok() || !parsed->is_object()) return std::nullopt;
  return std::move(*parsed);
}

std::optional<int64_t> IntIn(const Json& o, const char* name, int64_t fallback, int64_t lo, int64_t hi) {
  if (!o.contains(name)) return fallback;
  const Json& v = o[name];
  if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi) return std::nullopt;
  return v.get<int64_t>();
}

Result<std::string> Watermarked(const std::string& png) {
  VISALIGN_ASSIGN_OR_RETURN(imaging::Image img, imaging::DecodeImage(png, "rendered image"));
  for (int y = img.height - std::max(1, img.height / 8); y < img.height; ++y)
    for (int x = img.width - std::max(1, img.width / 4); x < img.width; ++x) std::fill_n(img.pixel(x, y), 3, 255);
  return imaging::EncodePng(img);
}

}  // namespace internal

std::unique_ptr<ProviderImitation> MakeProviderImitation(ApiFlavor api, const ReferenceServerOptions& options,
                                                         ImitationHooks hooks) {
  switch (api) {
    case ApiFlavor::kGemini:
    case ApiFlavor::kSeedream:
    case ApiFlavor::kGlmImage:
      return internal::MakeSyncImitation(api, options, std::move(hooks));
    case ApiFlavor::kA1111:
    case ApiFlavor::kComfyUi:
      return internal::MakeLocalImitation(api, options, std::move(hooks));
    default:
      return internal::MakeJobImitation(api, options, std::move(hooks));
  }
}

}  // namespace visalign::violin
