// The embedded run store's schema and its upgrades (internal to the store module), apart from the
// store's queries so either can change without the other.
#pragma once

#include <sqlite3.h>

#include <string>

#include "visalign/store.h"

namespace visalign::store {

// Inside a write transaction on `db` (the store at `where`): creates the schema in a new database or
// brings an older one to this visalign's version in place; refuses a newer one (Unsupported).
// `migration`, when given, says from which version to which.
Status MigrateSqliteRunSchema(sqlite3* db, const std::string& where, SchemaMigration* migration);

}  // namespace visalign::store
