// StudyStore::Open and Exists: which implementation a location names.
#include "visalign/store/study_store.h"

#include "store/postgres_study_store.h"
#include "store/sqlite_study_store.h"
#include "store/store_location.h"

namespace visalign::store {

Result<std::unique_ptr<StudyStore>> StudyStore::Open(const std::string& location, const StoreOptions& options) {
  const std::string scheme = SchemeOf(location);
  if (scheme.empty()) return OpenSqliteStudyStore(location);
  if (IsPostgres(scheme)) return OpenPostgresStudyStore(location, options);
  return UnknownScheme(scheme);
}

Result<bool> StudyStore::Exists(const std::string& location, const StoreOptions& options) {
  const std::string scheme = SchemeOf(location);
  if (scheme.empty()) return SqliteStudyStoreExists(location);
  if (IsPostgres(scheme)) return PostgresStudyStoreExists(location, options);
  return UnknownScheme(scheme);
}

}  // namespace visalign::store
