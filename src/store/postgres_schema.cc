#include "store/postgres_schema.h"

#include <array>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "visalign/core/untrusted.h"

namespace visalign::store {
namespace {

// Serialises schema changes of every visalign worker on one database (pg_advisory_xact_lock key).
constexpr int64_t kSchemaLockKey = 0x76697361'6c69676eLL;  // "visalign"

// Version 1: the embedded store's schema 3, and table images for stores that keep images in the
// database. A run's rows, and their images, go when the run is deleted.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE visalign_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs(
  name TEXT PRIMARY KEY,
  benchmark TEXT NOT NULL,
  dataset_fingerprint TEXT NOT NULL,
  backend TEXT NOT NULL,
  created_at TEXT NOT NULL,
  connection TEXT NOT NULL DEFAULT '{}');
CREATE TABLE items(
  run TEXT NOT NULL REFERENCES runs(name) ON DELETE CASCADE,
  item_id TEXT NOT NULL,
  k INTEGER NOT NULL,
  prompt TEXT NOT NULL,
  seed BIGINT,
  status TEXT NOT NULL CHECK (status IN ('pending', 'done', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT NOT NULL DEFAULT '',
  latency_ms DOUBLE PRECISION NOT NULL DEFAULT 0,
  image_path TEXT NOT NULL DEFAULT '',
  sha256 TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  done_at TEXT NOT NULL DEFAULT '',
  lease_owner TEXT NOT NULL DEFAULT '',
  lease_expires BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (run, item_id, k));
CREATE INDEX items_by_lease_owner ON items(run, lease_owner);
CREATE TABLE images(
  run TEXT NOT NULL,
  item_id TEXT NOT NULL,
  k INTEGER NOT NULL,
  bytes BYTEA NOT NULL,
  PRIMARY KEY (run, item_id, k),
  FOREIGN KEY (run, item_id, k) REFERENCES items(run, item_id, k) ON DELETE CASCADE);
CREATE TABLE cache(
  namespace TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (namespace, key));
CREATE TABLE cache_leases(
  namespace TEXT NOT NULL,
  key TEXT NOT NULL,
  owner TEXT NOT NULL,
  expires BIGINT NOT NULL,
  PRIMARY KEY (namespace, key));
)sql";

constexpr std::array<const char*, 1> kMigrations = {kSchemaV1};
constexpr int kSchemaVersion = static_cast<int>(kMigrations.size());

constexpr const char* kImagesInFiles = "files";
constexpr const char* kImagesInDatabase = "database";

}  // namespace

Result<SchemaState> PrepareSchema(pg::Connection& db, const StoreOptions& options, bool migrate,
                                  const std::string& where) {
  SchemaState state;
  VISALIGN_RETURN_IF_ERROR(db.Transaction([&]() -> Status {
    VISALIGN_RETURN_IF_ERROR(db.Exec("SELECT pg_advisory_xact_lock($1)", pg::Params().Add(kSchemaLockKey)).status());
    VISALIGN_ASSIGN_OR_RETURN(pg::Rows has_meta, db.Exec("SELECT to_regclass('visalign_meta') IS NOT NULL"));
    std::map<std::string, std::string> meta;
    if (has_meta.Text(0, 0) == "t") {
      VISALIGN_ASSIGN_OR_RETURN(pg::Rows rows, db.Exec("SELECT key, value FROM visalign_meta"));
      for (int i = 0; i < rows.size(); ++i) meta[rows.Text(i, 0)] = rows.Text(i, 1);
    }
    int version = 0;
    if (!meta.empty()) {
      const std::string& text = meta["schema_version"];
      char* end = nullptr;
      const long parsed = std::strtol(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || parsed < 1)
        return Status::Corrupt("schema version " + QuoteText(text) + " in table visalign_meta", where,
                               "a database written by visalign");
      if (parsed > kSchemaVersion)
        return Status::Unsupported(
            fmt::format("store schema version {} is newer than this visalign's {}", text, kSchemaVersion), where,
            "a newer visalign, or another store location");
      version = static_cast<int>(parsed);
    }
    if (version > 0 && version < kSchemaVersion && !migrate)
      return Status::Unsupported(
          fmt::format("store schema version {} is older than this visalign's {}", version, kSchemaVersion), where,
          "`visalign store migrate` on the store first (its other workers then need this visalign too)");
    state.migration = {version, kSchemaVersion};
    for (int v = version; v < kSchemaVersion; ++v) VISALIGN_RETURN_IF_ERROR(db.ExecScript(kMigrations[v]));
    if (version == 0) {
      meta["images"] = options.images_in_database || options.image_root.empty() ? kImagesInDatabase : kImagesInFiles;
      VISALIGN_RETURN_IF_ERROR(db.Exec("INSERT INTO visalign_meta(key, value) VALUES ('images', $1)",
                                       pg::Params().Add(meta["images"]))
                                   .status());
    }
    VISALIGN_RETURN_IF_ERROR(db.Exec("INSERT INTO visalign_meta(key, value) VALUES ('schema_version', $1) "
                                     "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                                     pg::Params().Add(std::to_string(kSchemaVersion)))
                                 .status());
    if (meta["images"] != kImagesInFiles && meta["images"] != kImagesInDatabase)
      return Status::Corrupt("image keeping " + QuoteText(meta["images"]) + " in table visalign_meta", where,
                             "files or database");
    state.images = meta["images"] == kImagesInFiles ? ImageKeeping::kFiles : ImageKeeping::kDatabase;
    return Status::Ok();
  }));
  return state;
}

}  // namespace visalign::store
