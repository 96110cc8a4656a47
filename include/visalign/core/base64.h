// Base64 (RFC 4648, standard alphabet): images inside JSON replies and requests, data URLs in the
// report's pages, embeddings in caches. In core because every layer above it needs it and none of
// them should depend on the HTTP backends for it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace visalign {

// Strict standard base64 (padding required, whitespace ignored). nullopt if invalid.
std::optional<std::string> DecodeBase64(std::string_view text);
std::string EncodeBase64(std::string_view bytes);

}  // namespace visalign
