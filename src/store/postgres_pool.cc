#include "store/postgres_pool.h"

namespace visalign::store::pg {

Result<std::unique_ptr<Pool>> Pool::Open(const std::string& location, const std::string& password,
                                         const std::string& where, size_t max_connections) {
  std::unique_ptr<Pool> pool(new Pool(location, password, where, std::max<size_t>(max_connections, 1)));
  VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<Connection> first, Connection::Open(location, password, where));
  pool->idle_.push_back(std::move(first));
  pool->open_ = 1;
  return pool;
}

Pool::Lease::~Lease() {
  if (conn_) pool_->GiveBack(std::move(conn_));
}

Result<Pool::Lease> Pool::Borrow() {
  std::unique_lock lock(mu_);
  returned_.wait(lock, [&] { return !idle_.empty() || open_ < max_; });
  if (!idle_.empty()) {
    std::unique_ptr<Connection> conn = std::move(idle_.back());
    idle_.pop_back();
    return Lease(this, std::move(conn));
  }
  ++open_;
  lock.unlock();
  auto conn = Connection::Open(location_, password_, where_);
  if (!conn.ok()) {
    lock.lock();
    --open_;
    returned_.notify_one();
    return conn.status();
  }
  return Lease(this, std::move(*conn));
}

void Pool::GiveBack(std::unique_ptr<Connection> conn) {
  {
    std::lock_guard lock(mu_);
    if (conn->connected())
      idle_.push_back(std::move(conn));
    else
      --open_;
  }
  returned_.notify_one();
}

}  // namespace visalign::store::pg
