// The SQLite study store, internal to the store module: everyone else opens it with
// StudyStore::Open(folder).
#pragma once

#include <filesystem>
#include <memory>

#include "visalign/store/study_store.h"

namespace visalign::store {

// Opens (creating if needed) <dir>/study.db; creates `dir`.
Result<std::unique_ptr<StudyStore>> OpenSqliteStudyStore(const std::filesystem::path& dir);
bool SqliteStudyStoreExists(const std::filesystem::path& dir);

}  // namespace visalign::store
