// A few libpq connections to one database shared by many threads (internal to the store module): a
// libpq connection serves one thread at a time, so each caller borrows one for what it does and
// gives it back. Connections are opened as callers need them, up to a maximum; beyond it callers
// wait for one to come back. A connection given back lost (the server restarted or dropped it) is
// closed, and the next caller gets a new one: one statement fails, not every later one.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "store/postgres_connection.h"
#include "visalign/core/status.h"

namespace visalign::store::pg {

class Pool {
 public:
  // Opens the first connection (its error is Connection::Open's); later ones as needed, up to
  // `max_connections`.
  static Result<std::unique_ptr<Pool>> Open(const std::string& location, const std::string& password,
                                            const std::string& where, size_t max_connections);

  // A borrowed connection, given back when it goes.
  class Lease {
   public:
    Lease(Pool* pool, std::unique_ptr<Connection> conn) : pool_(pool), conn_(std::move(conn)) {}
    Lease(Lease&&) = default;
    ~Lease();
    Connection* operator->() const { return conn_.get(); }
    Connection& operator*() const { return *conn_; }

   private:
    Pool* pool_;
    std::unique_ptr<Connection> conn_;
  };
  // An idle connection, a new one while fewer than the maximum are open, else the next one given
  // back. The pool must outlive its leases.
  Result<Lease> Borrow();

 private:
  Pool(std::string location, std::string password, std::string where, size_t max_connections)
      : location_(std::move(location)),
        password_(std::move(password)),
        where_(std::move(where)),
        max_(max_connections) {}
  void GiveBack(std::unique_ptr<Connection> conn);

  const std::string location_, password_, where_;
  const size_t max_;
  std::mutex mu_;
  std::condition_variable returned_;
  std::vector<std::unique_ptr<Connection>> idle_;
  size_t open_ = 0;  // idle and lent
};

}  // namespace visalign::store::pg
