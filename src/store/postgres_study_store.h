// The PostgreSQL study store, internal to the store module: everyone else opens it with
// StudyStore::Open(postgres://...).
#pragma once

#include <memory>
#include <string>

#include "visalign/store/study_store.h"

namespace visalign::store {

// Opens the study store in the database at libpq URI `location`, creating its tables there on
// first use.
Result<std::unique_ptr<StudyStore>> OpenPostgresStudyStore(const std::string& location, const StoreOptions& options);
// Whether that database has the study tables; creates nothing.
Result<bool> PostgresStudyStoreExists(const std::string& location, const StoreOptions& options);

}  // namespace visalign::store
