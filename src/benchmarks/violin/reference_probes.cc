#include "benchmarks/violin/reference_probes.h"

#include <array>
#include <cmath>
#include <utility>

namespace visalign::violin {
namespace {

constexpr double kMaxRipple = 127;

constexpr std::array<std::pair<std::string_view, Profile::Kind>, 4> kProbeProfiles{{
    {"split-bias", Profile::Kind::kSplitBias},
    {"pull", Profile::Kind::kPull},
    {"ripples", Profile::Kind::kRipples},
    {"shape-offset", Profile::Kind::kShapeOffset},
}};

}  // namespace

std::optional<Profile::Kind> ParseProbeProfile(std::string_view name) {
  for (const auto& [n, kind] : kProbeProfiles)
    if (n == name) return kind;
  return std::nullopt;
}

bool IsProbeProfile(const Profile& profile) {
  for (const auto& entry : kProbeProfiles)
    if (entry.second == profile.kind) return true;
  return false;
}

Status CheckProbeProfile(const Profile& profile, const std::string& text) {
  const double v = profile.param;
  const std::string where = "degradation profile";
  if (!std::isfinite(v))
    return Status::InvalidArgument("parameter of \"" + text + "\" is not finite", where, "a finite number");
  if (profile.kind == Profile::Kind::kSplitBias && (v < 0 || v > 1))
    return Status::InvalidArgument("split bias " + std::to_string(v) + " out of range", where,
                                   "split-bias:F with 0 <= F <= 1");
  if (profile.kind == Profile::Kind::kRipples && (v < 0 || v > kMaxRipple))
    return Status::InvalidArgument("ripple amplitude " + std::to_string(v) + " out of range", where,
                                   "ripples:A with 0 <= A <= 127 levels");
  return Status::Ok();
}

ProbeDistortion ProbeDistortionOf(const Profile& profile) {
  ProbeDistortion d;
  switch (profile.kind) {
    case Profile::Kind::kSplitBias:
      d.split_bias = profile.param;
      break;
    case Profile::Kind::kPull:
      d.pull = profile.param;
      break;
    case Profile::Kind::kRipples:
      d.ripple_amplitude = profile.param;
      break;
    case Profile::Kind::kShapeOffset:
      d.shape_offset = profile.param;
      break;
    default:
      break;
  }
  return d;
}

}  // namespace visalign::violin
