// The PostgreSQL run store, internal to the store module: everyone else opens stores with
// store::OpenStore(location), which calls these for a postgres:// or postgresql:// location.
#pragma once

#include <memory>
#include <string>

#include "visalign/store.h"

namespace visalign::store {

// Opens the store in the PostgreSQL database at libpq URI `location` (see OpenStore), creating its
// schema in an empty database. With `migrate`, an older schema is brought up to date (MigrateStore)
// and `migration`, when given, says from which version to which; without, it is refused.
Result<std::unique_ptr<RunStore>> OpenPostgresStore(const std::string& location, const StoreOptions& options,
                                                    bool migrate, SchemaMigration* migration = nullptr);

}  // namespace visalign::store
