// The reference server's probe profiles (split-bias, pull, ripples, shape-offset): their names, ranges
// and the ProbeDistortion each stands for (internal to the VIOLIN benchmark).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "visalign/benchmarks/violin/probes.h"
#include "visalign/benchmarks/violin/reference_server.h"

namespace visalign::violin {

// The probe profile called `name`, if it is one.
std::optional<Profile::Kind> ParseProbeProfile(std::string_view name);
bool IsProbeProfile(const Profile& profile);
// Range of the parameter: split-bias in [0, 1], ripples in [0, 127], pull and shape-offset finite.
Status CheckProbeProfile(const Profile& profile, const std::string& text);
ProbeDistortion ProbeDistortionOf(const Profile& profile);

}  // namespace visalign::violin
