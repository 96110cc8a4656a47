// What the two SQLite databases of a store folder (the run store's visalign.db and the study
// store's study.db) share, internal to the store module: a prepared statement with positional
// binding (parameterised SQL only), and the timestamps both write.
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "visalign/core/status.h"

namespace visalign::store {

// The current UTC time as ISO-8601 with milliseconds: 2025-07-15T17:14:02.825Z.
inline std::string NowUtc() {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03d}Z", buf, static_cast<int>(ms));
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
    while (Step(st)) {
    }
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
