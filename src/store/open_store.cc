// OpenStore: which RunStore implementation a location names.
#include <fmt/format.h>

#include "store/postgres_connection.h"
#include "store/postgres_store.h"
#include "store/sqlite_store.h"

namespace visalign::store {
namespace {

constexpr const char* kWhere = "store location";
constexpr const char* kSchemeSeparator = "://";

// "postgres" for "postgres://user:secret@host/db"; empty for a folder.
std::string SchemeOf(const std::string& location) {
  const size_t at = location.find(kSchemeSeparator);
  if (at == std::string::npos || at == 0) return {};
  for (size_t i = 0; i < at; ++i) {
    const char c = location[i];
    const bool scheme_char = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && ((c >= '0' && c <= '9') ||
                                                                                         c == '+' || c == '-' || c == '.'));
    if (!scheme_char) return {};
  }
  return location.substr(0, at);
}

bool IsPostgres(const std::string& scheme) { return scheme == "postgres" || scheme == "postgresql"; }

Status UnknownScheme(const std::string& scheme) {
  return Status::Unsupported(fmt::format("unknown store scheme \"{}://\"", scheme), kWhere,
                             "a folder (the embedded SQLite store) or postgres://user@host:port/database");
}

}  // namespace

Result<std::unique_ptr<RunStore>> OpenStore(const std::string& location, const StoreOptions& options) {
  const std::string scheme = SchemeOf(location);
  if (scheme.empty()) return OpenSqliteStore(location);
  if (IsPostgres(scheme)) return OpenPostgresStore(location, options, /*migrate=*/false);
  return UnknownScheme(scheme);
}

Result<SchemaMigration> MigrateStore(const std::string& location, const StoreOptions& options) {
  const std::string scheme = SchemeOf(location);
  SchemaMigration migration;
  if (scheme.empty()) {
    VISALIGN_RETURN_IF_ERROR(OpenSqliteStore(location, &migration).status());
  } else if (IsPostgres(scheme)) {
    VISALIGN_RETURN_IF_ERROR(OpenPostgresStore(location, options, /*migrate=*/true, &migration).status());
  } else {
    return UnknownScheme(scheme);
  }
  return migration;
}

std::string DisplayLocation(const std::string& location) {
  return SchemeOf(location).empty() ? location : pg::WithoutPasswords(location);
}

bool StoreExists(const std::string& location) {
  if (!SchemeOf(location).empty()) return true;
  return SqliteStoreExists(location);
}

}  // namespace visalign::store
