// What the two SQLite databases of a store folder (the run store's visalign.db and the study
// store's study.db) share, internal to the store module: a prepared statement with positional
// binding (parameterised SQL only) and running SQL scripts; the timestamps both write are
// row_semantics.h's NowUtc.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>

#include "store/row_semantics.h"
#include "visalign/core/status.h"

namespace visalign::store {

// Runs the SQL script `sql` on `db`; an IoError at `where`, expecting `expected`, when it fails.
inline Status ExecSql(sqlite3* db, const char* sql, const std::string& where, const char* expected) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    return Status::IoError("database error: " + msg, where, expected);
  }
  return Status::Ok();
}

// A prepared statement with positional binding; finalized on destruction.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql, const std::string& where) : db_(db), where_(where) {
    rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
  }
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    n_ = 0;
  }
  Status prepared() const { return rc_ == SQLITE_OK ? Status::Ok() : Error(); }
  Stmt& Bind(const std::string& v) {
    sqlite3_bind_text(stmt_, ++n_, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& Bind(int64_t v) {
    sqlite3_bind_int64(stmt_, ++n_, v);
    return *this;
  }
  Stmt& Bind(double v) {
    sqlite3_bind_double(stmt_, ++n_, v);
    return *this;
  }
  Stmt& Bind(std::optional<int64_t> v) {
    if (v) return Bind(*v);
    sqlite3_bind_null(stmt_, ++n_);
    return *this;
  }
  // Steps once: true if a row is available, false when done; errors set `status`.
  bool Step(Status& status) {
    rc_ = sqlite3_step(stmt_);
    if (rc_ == SQLITE_ROW) return true;
    if (rc_ != SQLITE_DONE) status = Error();
    return false;
  }
  Status Run() {
    Status st;
    while (Step(st)) {}
    return st;
  }
  std::string Text(int col) const {
    const unsigned char* p = sqlite3_column_text(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, col)) : std::string();
  }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Real(int col) const { return sqlite3_column_double(stmt_, col); }
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

 private:
  Status Error() const {
    return Status::IoError(std::string("database error: ") + sqlite3_errmsg(db_), where_,
                           "a writable, uncorrupted visalign store");
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string where_;
  int rc_ = SQLITE_OK;
  int n_ = 0;
};

}  // namespace visalign::store
