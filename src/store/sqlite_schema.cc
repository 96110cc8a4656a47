#include "store/sqlite_schema.h"

#include <array>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "store/sqlite_statement.h"
#include "visalign/core/untrusted.h"

namespace visalign::store {
namespace {

// 1: runs.backend held the whole backend configuration. 2: runs.backend is the identity (what the
// images depend on); where the model was reached is in runs.connection. 3: rows have leases
// (items.lease_owner, items.lease_expires in Unix ms) and so have cache keys (cache_leases).
// 4: rows may be refused (status 'refused') and keep their provider job (items.job).
constexpr int kSchemaVersion = 4;
// The fields of a schema-1 backend configuration that are connection, not identity.
constexpr std::array<const char*, 3> kV1ConnectionFields = {"endpoint", "api_key_env", "timeout_ms"};

// The items table of schema 4, named {0} (items, or items_v4 while schema 3 is rebuilt into it).
constexpr const char* kItemsTable = R"sql(
CREATE TABLE IF NOT EXISTS {0}(
  run TEXT NOT NULL REFERENCES runs(name),
  item_id TEXT NOT NULL,
  k INTEGER NOT NULL,
  prompt TEXT NOT NULL,
  seed INTEGER,
  status TEXT NOT NULL CHECK (status IN ('pending', 'done', 'failed', 'refused')),
  attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT NOT NULL DEFAULT '',
  latency_ms REAL NOT NULL DEFAULT 0,
  image_path TEXT NOT NULL DEFAULT '',
  sha256 TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  done_at TEXT NOT NULL DEFAULT '',
  lease_owner TEXT NOT NULL DEFAULT '',
  lease_expires INTEGER NOT NULL DEFAULT 0,
  job TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (run, item_id, k));
)sql";
constexpr const char* kOtherTables = R"sql(
CREATE TABLE IF NOT EXISTS runs(
  name TEXT PRIMARY KEY,
  benchmark TEXT NOT NULL,
  dataset_fingerprint TEXT NOT NULL,
  backend TEXT NOT NULL,
  created_at TEXT NOT NULL,
  connection TEXT NOT NULL DEFAULT '{}');
CREATE TABLE IF NOT EXISTS cache(
  namespace TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (namespace, key));
CREATE TABLE IF NOT EXISTS cache_leases(
  namespace TEXT NOT NULL,
  key TEXT NOT NULL,
  owner TEXT NOT NULL,
  expires INTEGER NOT NULL,
  PRIMARY KEY (namespace, key));
)sql";
// Schema 2 -> 3.
constexpr const char* kAddLeases = R"sql(
ALTER TABLE items ADD COLUMN lease_owner TEXT NOT NULL DEFAULT '';
ALTER TABLE items ADD COLUMN lease_expires INTEGER NOT NULL DEFAULT 0;
)sql";
// Schema 3 -> 4 after kItemsTable made items_v4: SQLite cannot change a CHECK constraint in place.
constexpr const char* kRebuildItems = R"sql(
INSERT INTO items_v4(run, item_id, k, prompt, seed, status, attempts, last_error, latency_ms, image_path, sha256,
                     created_at, updated_at, done_at, lease_owner, lease_expires)
  SELECT run, item_id, k, prompt, seed, status, attempts, last_error, latency_ms, image_path, sha256,
         created_at, updated_at, done_at, lease_owner, lease_expires FROM items;
DROP TABLE items;
ALTER TABLE items_v4 RENAME TO items;
)sql";
constexpr const char* kLeaseIndex = "CREATE INDEX IF NOT EXISTS items_by_lease_owner ON items(run, lease_owner)";

Status Exec(sqlite3* db, const std::string& sql, const std::string& where) {
  return ExecSql(db, sql.c_str(), where, "a writable, uncorrupted visalign store");
}

// Schema 1 -> 2: the connection column, filled with the fields of the old configuration that
// are connection (a run made before resumes when only its endpoint changed).
Status MigrateV1(sqlite3* db, const std::string& where) {
  VISALIGN_RETURN_IF_ERROR(Exec(db, "ALTER TABLE runs ADD COLUMN connection TEXT NOT NULL DEFAULT '{}'", where));
  std::vector<std::pair<std::string, std::string>> runs;  // name, backend
  {
    Stmt q(db, "SELECT name, backend FROM runs", where);
    VISALIGN_RETURN_IF_ERROR(q.prepared());
    Status st;
    while (q.Step(st)) runs.emplace_back(q.Text(0), q.Text(1));
    VISALIGN_RETURN_IF_ERROR(st);
  }
  Stmt u(db, "UPDATE runs SET backend = ?, connection = ? WHERE name = ?", where);
  VISALIGN_RETURN_IF_ERROR(u.prepared());
  for (const auto& [name, text] : runs) {
    auto parsed = ParseJson(text);
    if (!parsed.ok() || !parsed->is_object()) continue;  // QueryRuns reports it when the run is read
    Json& identity = *parsed;
    Json connection = Json::object();
    for (const char* field : kV1ConnectionFields) {
      if (!identity.contains(field)) continue;
      connection[field] = identity[field];
      identity.erase(field);
    }
    u.Reset();
    VISALIGN_RETURN_IF_ERROR(u.Bind(identity.dump()).Bind(connection.dump()).Bind(name).Run());
  }
  return Status::Ok();
}

}  // namespace

Status MigrateSqliteRunSchema(sqlite3* db, const std::string& where, SchemaMigration* migration) {
  int64_t version = 0;
  {  // finalized before the upgrade: an open statement would keep DROP TABLE from running
    Stmt v(db, "PRAGMA user_version", where);
    VISALIGN_RETURN_IF_ERROR(v.prepared());
    Status st;
    version = v.Step(st) ? v.Int(0) : 0;
    VISALIGN_RETURN_IF_ERROR(st);
  }
  if (migration) *migration = {static_cast<int>(version), std::max(static_cast<int>(version), kSchemaVersion)};
  if (version > kSchemaVersion)
    return Status::Unsupported(
        fmt::format("store schema version {} is newer than this visalign's {}", version, kSchemaVersion), where,
        "a newer visalign, or another store location");
  if (version == kSchemaVersion) return Status::Ok();
  if (version == 1) VISALIGN_RETURN_IF_ERROR(MigrateV1(db, where));
  if (version == 1 || version == 2) VISALIGN_RETURN_IF_ERROR(Exec(db, kAddLeases, where));
  if (version >= 1) {
    VISALIGN_RETURN_IF_ERROR(Exec(db, fmt::format(kItemsTable, "items_v4"), where));
    VISALIGN_RETURN_IF_ERROR(Exec(db, kRebuildItems, where));
  }
  VISALIGN_RETURN_IF_ERROR(Exec(db, kOtherTables, where));
  VISALIGN_RETURN_IF_ERROR(Exec(db, fmt::format(kItemsTable, "items"), where));
  VISALIGN_RETURN_IF_ERROR(Exec(db, kLeaseIndex, where));
  return Exec(db, fmt::format("PRAGMA user_version = {}", kSchemaVersion), where);
}

}  // namespace visalign::store
