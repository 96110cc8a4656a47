// One file of a Hub repository into the cache (hub_cache.h) through the `resolve` endpoint, or from
// the cache alone when offline. Internal to the hub module.
#pragma once

#include <optional>
#include <string>

#include "visalign/hub/hub.h"

namespace visalign::hub {

// `revision` a branch, tag or commit. nullopt when the file does not exist in the repository (404)
// and `optional`; a missing required file is kNotFound.
Result<std::optional<FetchedFile>> FetchFile(const HubOptions& options, const std::string& repo,
                                             const std::string& revision, const std::string& file, bool optional,
                                             std::string* commit);

}  // namespace visalign::hub
