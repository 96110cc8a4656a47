// A real PostgreSQL server for tests: Debian's initdb into a fresh folder and postgres listening on
// a loopback port, started once per test program on first use and stopped (its folder removed)
// when the program exits; if the program dies, the server gets SIGQUIT too. It runs as the
// current user, or as `nobody` when that is root (CI runs as root; initdb refuses root). Tuned for
// tests, not durability (fsync off). The server binaries: $VISALIGN_PG_BINDIR, else the newest
// /usr/lib/postgresql/<version>/bin. Password authentication (SCRAM) is on; starting sets
// PGPASSWORD in this process's environment, so this program and the processes it starts connect
// without naming the password.
#pragma once

#include <string>

#include "visalign/core/status.h"

namespace visalign::testing {

class PostgresServer {
 public:
  static constexpr const char* kUser = "visalign";

  // The program's server, started on the first call; an error says why it could not start.
  static Result<PostgresServer*> Shared();
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  int port() const { return port_; }
  const std::string& password() const { return password_; }
  // postgres://visalign@127.0.0.1:<port>/<database> (no password in it).
  std::string Url(const std::string& database) const;
  // A new empty database: its URL.
  Result<std::string> CreateDatabase();
  // Runs `sql` (no parameters) in `database` as the server's superuser.
  Status Execute(const std::string& database, const std::string& sql) const;

 private:
  PostgresServer() = default;
  Status Start();

  std::string dir_;  // initdb's folder, logs, password file
  std::string password_;
  int port_ = 0;
  int pid_ = -1;
  int databases_ = 0;
};

}  // namespace visalign::testing
