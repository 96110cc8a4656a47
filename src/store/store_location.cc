#include "store/store_location.h"

#include <fmt/format.h>

namespace visalign::store {
namespace {

constexpr const char* kSchemeSeparator = "://";

}  // namespace

std::string SchemeOf(const std::string& location) {
  const size_t at = location.find(kSchemeSeparator);
  if (at == std::string::npos || at == 0) return {};
  for (size_t i = 0; i < at; ++i) {
    const char c = location[i];
    const bool scheme_char = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                             (i > 0 && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'));
    if (!scheme_char) return {};
  }
  return location.substr(0, at);
}

bool IsPostgres(const std::string& scheme) { return scheme == "postgres" || scheme == "postgresql"; }

Status UnknownScheme(const std::string& scheme) {
  return Status::Unsupported(fmt::format("unknown store scheme \"{}://\"", scheme), "store location",
                             "a folder (the embedded SQLite store) or postgres://user@host:port/database");
}

}  // namespace visalign::store
