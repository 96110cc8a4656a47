// The embedded SQLite store, internal to the store module: everyone else opens stores with
// store::OpenStore(location), which calls these for a folder.
#pragma once

#include <filesystem>
#include <memory>

#include "visalign/store.h"

namespace visalign::store {

// Opens (creating if needed) the embedded store in folder `dir` (see OpenStore), upgrading an older
// schema in place; `migration`, when given, says from which schema version to which.
Result<std::unique_ptr<RunStore>> OpenSqliteStore(const std::filesystem::path& dir,
                                                  SchemaMigration* migration = nullptr);
// Whether folder `dir` holds an embedded store.
bool SqliteStoreExists(const std::filesystem::path& dir);

}  // namespace visalign::store
