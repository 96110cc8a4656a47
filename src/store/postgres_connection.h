// One libpq connection of the PostgreSQL store (internal to the store module). Statements are
// parameterised (PQexecParams; values never spliced into SQL text), results are text, and every
// message has the password cut out. Transaction() retries a body that PostgreSQL aborted to
// resolve a deadlock or a serialization conflict, and reconnects a connection the server dropped.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "visalign/core/status.h"

namespace visalign::store::pg {

// The libpq URI `location` without the passwords it carries (in its user info or a password=
// parameter).
std::string WithoutPasswords(const std::string& location);

// The password held by environment variable `variable`; "" for no variable (libpq then reads its
// own sources: PGPASSWORD, ~/.pgpass). InvalidArgument at "store password variable" when unset.
Result<std::string> PasswordFromEnvironment(const std::string& variable);

// The values of one statement's $1, $2, ... in order.
class Params {
 public:
  Params& Add(std::string value);
  Params& Add(int64_t value);
  Params& Add(double value);
  Params& Add(std::optional<int64_t> value);  // nullopt is NULL
  Params& AddBytes(std::string bytes);        // a bytea value, sent as binary
  // A text[] value: PostgreSQL's array literal of `values`.
  Params& AddTextArray(const std::vector<std::string>& values);
  // An int8[] value; nullopt elements are NULL.
  Params& AddIntArray(const std::vector<std::optional<int64_t>>& values);
  // A float8[] value.
  Params& AddRealArray(const std::vector<double>& values);

 private:
  friend class Connection;
  std::vector<std::optional<std::string>> values_;
  std::vector<int> formats_;  // 0 text, 1 binary
};

// A statement's result rows (text format, or binary when asked for).
class Rows {
 public:
  explicit Rows(PGresult* result);
  int size() const;
  std::string Text(int row, int col) const;
  int64_t Int(int row, int col) const;
  double Real(int row, int col) const;
  bool IsNull(int row, int col) const;
  // Rows an INSERT/UPDATE/DELETE touched.
  size_t affected() const;

 private:
  std::shared_ptr<PGresult> result_;
};

class Connection {
 public:
  // Connects to the libpq URI `location` (password: `password` if not empty, else libpq's own
  // sources), loading libpq on the first call (store/pq_library.h). Errors are Unavailable at
  // `where`, without the password.
  static Result<std::unique_ptr<Connection>> Open(const std::string& location, const std::string& password,
                                                  const std::string& where);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  Result<Rows> Exec(const char* sql, const Params& params = {}, bool binary_results = false);
  // False once libpq found the server gone (a statement failed on a lost connection).
  bool connected() const;
  // Several statements without parameters (schema changes).
  Status ExecScript(const char* sql);

  // Runs `body` between BEGIN and COMMIT (ROLLBACK if it fails), again (up to kMaxTries) when the
  // server aborted it as a deadlock victim or serialization failure or the connection dropped.
  template <typename Body>
  Status Transaction(Body body) {
    Status st;
    for (int attempt = 0; attempt < kMaxTries; ++attempt) {
      last_sqlstate_.clear();  // a body's own error is never retried for an earlier statement's
      st = ExecScript("BEGIN");
      if (st.ok()) {
        st = body();
        Status end = ExecScript(st.ok() ? "COMMIT" : "ROLLBACK");
        if (st.ok()) st = end;
      }
      if (st.ok() || !Retryable()) return st;
    }
    return st;
  }

 private:
  static constexpr int kMaxTries = 5;
  Connection(PGconn* conn, std::vector<std::string> secrets, std::string where)
      : conn_(conn), secrets_(std::move(secrets)), where_(std::move(where)) {}
  // The error of `result` (or of the connection), passwords removed, as one line; remembers its
  // SQLSTATE for Retryable.
  Status Error(const PGresult* result);
  // Whether the last error was a deadlock, a serialization failure or a lost connection (which
  // is then reset).
  bool Retryable();

  PGconn* conn_;
  std::vector<std::string> secrets_;  // passwords to cut out of messages
  std::string where_;
  std::string last_sqlstate_;
};

}  // namespace visalign::store::pg
