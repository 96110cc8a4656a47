// OpenStore: which RunStore implementation a location names.
#include "store/postgres_connection.h"
#include "store/postgres_store.h"
#include "store/sqlite_store.h"
#include "store/store_location.h"

namespace visalign::store {

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
