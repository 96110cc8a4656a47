// The PostgreSQL store's schema and its migrations (internal to the store module). The database
// records its schema version and where the store keeps its images in table visalign_meta, so every
// worker of a store agrees on both:
//   schema_version  the run store's tables: 1, 2, ...; migration v brings them from v - 1 to v
//   study_schema_version  the study store's tables (StudyStore), versioned apart: a database may
//                   hold runs, a study, or both
//   images          "files" (under a folder the workers share) or "database" (table images, bytea),
//                   chosen when the store is created: files when given an image root (and not
//                   asked for the database)
#pragma once

#include <string>

#include "store/postgres_connection.h"
#include "visalign/store.h"

namespace visalign::store {

enum class ImageKeeping { kFiles, kDatabase };

struct SchemaState {
  SchemaMigration migration;  // from the version found to the one now in place
  ImageKeeping images = ImageKeeping::kFiles;
};

// Creates the schema in a database without one, or checks the one there: a newer version is
// refused, an older one is migrated when `migrate` and refused otherwise (Unsupported at `where`).
// With `migrate`, the study store's tables, when the database has them, are brought up to date too.
// One transaction under an advisory lock, so workers starting together create the schema once.
Result<SchemaState> PrepareSchema(pg::Connection& db, const StoreOptions& options, bool migrate,
                                  const std::string& where);

inline constexpr const char* kStudySchemaKey = "study_schema_version";
// The same for the study store's tables: created in a database without them, a newer version
// refused, an older one refused until PrepareSchema with `migrate` (`visalign store migrate`).
Status PrepareStudySchema(pg::Connection& db, const std::string& where);
// Whether the database has the study store's tables; creates nothing.
Result<bool> HasStudySchema(pg::Connection& db);

}  // namespace visalign::store
