// The embedded run store: one SQLite database in WAL mode, shared by the threads of a process
// through one connection behind a mutex (writes are tiny; the images themselves are files).
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "store/row_semantics.h"
#include "store/sqlite_schema.h"
#include "store/sqlite_statement.h"
#include "store/sqlite_store.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"

namespace visalign::store {
namespace {
namespace fs = std::filesystem;

constexpr int kBusyTimeoutMs = 30000;
constexpr const char* kDbFileName = "visalign.db";

constexpr int kPragmaRetryMs = 10;

class SqliteStore final : public RunStore {
 public:
  SqliteStore(fs::path root, sqlite3* db)
      : RunStore(std::move(root)), db_(db), where_((this->root() / kDbFileName).string()) {}
  ~SqliteStore() override { sqlite3_close_v2(db_); }

  Status Exec(const char* sql) { return ExecSql(db_, sql, where_, "a writable, uncorrupted visalign store"); }

  Status Initialize(SchemaMigration* migration) {
    std::lock_guard lock(mu_);
    sqlite3_busy_timeout(db_, kBusyTimeoutMs);
    // WAL: readers never block the writer; NORMAL sync is durable against process crashes
    // (SIGKILL); images are fsynced by WriteImage before their row commits.
    // Switching a new database to WAL needs a lock SQLite does not wait for (no busy handler): when
    // processes open a new store at once, the losers retry until the busy timeout.
    Status pragmas;
    for (int waited_ms = 0;; waited_ms += kPragmaRetryMs) {
      pragmas = Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;");
      const int code = sqlite3_errcode(db_);
      if (pragmas.ok() || (code != SQLITE_BUSY && code != SQLITE_LOCKED) || waited_ms >= kBusyTimeoutMs) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(kPragmaRetryMs));
    }
    VISALIGN_RETURN_IF_ERROR(pragmas);
    return Transaction([&] { return MigrateSqliteRunSchema(db_, where_, migration); });
  }

  // One transaction, so workers starting together on a new run create it once.
  Result<RunOpening> OpenRun(const RunInfo& info) override {
    VISALIGN_RETURN_IF_ERROR(ValidateRunName(info.name));
    std::lock_guard lock(mu_);
    RunOpening opening = RunOpening::kCreated;
    VISALIGN_RETURN_IF_ERROR(Transaction([&]() -> Status {
      VISALIGN_ASSIGN_OR_RETURN(std::vector<RunInfo> existing, QueryRunsLocked(&info.name));
      if (existing.empty()) {
        Stmt s(db_,
               "INSERT INTO runs(name, benchmark, dataset_fingerprint, backend, created_at, connection) "
               "VALUES (?, ?, ?, ?, ?, ?)",
               where_);
        VISALIGN_RETURN_IF_ERROR(s.prepared());
        return s.Bind(info.name)
            .Bind(info.benchmark)
            .Bind(info.dataset_fingerprint)
            .Bind(info.identity.dump())
            .Bind(NowUtc())
            .Bind(info.connection.dump())
            .Run();
      }
      Stmt done(db_, fmt::format("SELECT count(*) FROM items WHERE run = ? AND {}", kFinalStatusSql).c_str(), where_);
      VISALIGN_RETURN_IF_ERROR(done.prepared());
      done.Bind(info.name);
      Status st;
      const size_t done_rows = done.Step(st) ? static_cast<size_t>(done.Int(0)) : 0;
      VISALIGN_RETURN_IF_ERROR(st);
      VISALIGN_ASSIGN_OR_RETURN(opening, CheckRunReuse(existing.front(), info, done_rows, where_));
      Stmt s(db_, "UPDATE runs SET backend = ?, connection = ? WHERE name = ?", where_);
      VISALIGN_RETURN_IF_ERROR(s.prepared());
      VISALIGN_RETURN_IF_ERROR(s.Bind(info.identity.dump()).Bind(info.connection.dump()).Bind(info.name).Run());
      if (opening != RunOpening::kTakenOver) return Status::Ok();
      Stmt reopen(db_,
                  "UPDATE items SET status = 'pending', job = '', updated_at = ? WHERE run = ? AND status = 'failed'",
                  where_);
      VISALIGN_RETURN_IF_ERROR(reopen.prepared());
      return reopen.Bind(NowUtc()).Bind(info.name).Run();
    }));
    return opening;
  }

  Result<std::optional<RunInfo>> FindRun(const std::string& name) override {
    VISALIGN_ASSIGN_OR_RETURN(std::vector<RunInfo> runs, QueryRuns(&name));
    if (runs.empty()) return std::optional<RunInfo>();
    return std::optional<RunInfo>(std::move(runs.front()));
  }

  Result<std::vector<RunInfo>> ListRuns() override { return QueryRuns(nullptr); }

  Status DeleteRun(const std::string& name) override {
    std::lock_guard lock(mu_);
    return Transaction([&]() -> Status {
      VISALIGN_ASSIGN_OR_RETURN(std::vector<RunInfo> existing, QueryRunsLocked(&name));
      if (existing.empty())
        return Status::NotFound("no run named \"" + name + "\"", where_, "the name of one of the store's runs");
      Stmt leased(db_, "SELECT count(*) FROM items WHERE run = ? AND status <> 'done' AND lease_expires > ?", where_);
      VISALIGN_RETURN_IF_ERROR(leased.prepared());
      leased.Bind(name).Bind(int64_t{NowUnixMs()});
      Status st;
      const int64_t live = leased.Step(st) ? leased.Int(0) : 0;
      VISALIGN_RETURN_IF_ERROR(st);
      if (live > 0)
        return Status::InvalidArgument(fmt::format("run \"{}\" has {} rows leased by running workers", name, live),
                                       where_, "no worker on the run: stop them, or wait until their leases expire");
      for (const char* sql : {"DELETE FROM items WHERE run = ?", "DELETE FROM runs WHERE name = ?"}) {
        Stmt d(db_, sql, where_);
        VISALIGN_RETURN_IF_ERROR(d.prepared());
        VISALIGN_RETURN_IF_ERROR(d.Bind(name).Run());
      }
      return Status::Ok();
    });
  }

  Status AddItems(const std::string& run, const std::vector<ItemSpec>& items) override {
    std::lock_guard lock(mu_);
    return Transaction([&]() -> Status {
      Stmt s(db_,
             "INSERT OR IGNORE INTO items(run, item_id, k, prompt, seed, status, created_at, updated_at) "
             "VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)",
             where_);
      VISALIGN_RETURN_IF_ERROR(s.prepared());
      std::string now = NowUtc();
      for (const ItemSpec& it : items) {
        s.Reset();
        VISALIGN_RETURN_IF_ERROR(
            s.Bind(run).Bind(it.item_id).Bind(int64_t{it.k}).Bind(it.prompt).Bind(it.seed).Bind(now).Bind(now).Run());
      }
      return Status::Ok();
    });
  }

  Result<std::vector<Row>> Rows(const std::string& run) override {
    std::lock_guard lock(mu_);
    Stmt s(
        db_,
        "SELECT item_id, k, prompt, seed, status, attempts, last_error, latency_ms, image_path, sha256, "
        "created_at, updated_at, done_at, lease_owner, lease_expires, job FROM items WHERE run = ? ORDER BY item_id, k",
        where_);
    VISALIGN_RETURN_IF_ERROR(s.prepared());
    s.Bind(run);
    std::vector<Row> rows;
    Status st;
    while (s.Step(st)) {
      Row r;
      r.item_id = s.Text(0);
      r.k = static_cast<int>(s.Int(1));
      r.prompt = s.Text(2);
      if (!s.IsNull(3)) r.seed = s.Int(3);
      VISALIGN_ASSIGN_OR_RETURN(r.status, ParseRowStatus(s.Text(4), where_ + " run " + run + " item " + r.item_id));
      r.attempts = static_cast<int>(s.Int(5));
      r.last_error = s.Text(6);
      r.latency_ms = s.Real(7);
      r.image_path = s.Text(8);
      r.sha256 = s.Text(9);
      r.created_at = s.Text(10);
      r.updated_at = s.Text(11);
      r.done_at = s.Text(12);
      r.lease_owner = s.Text(13);
      r.lease_expires_ms = s.Int(14);
      r.job = s.Text(15);
      rows.push_back(std::move(r));
    }
    VISALIGN_RETURN_IF_ERROR(st);
    return rows;
  }

  Result<Completion> MarkDone(const std::string& run, const std::string& item_id, int k, const std::string& owner,
                              const StoredImage& image, double latency_ms) override {
    std::lock_guard lock(mu_);
    Completion completion = Completion::kRecorded;
    Status st = Transaction([&]() -> Status {
      VISALIGN_ASSIGN_OR_RETURN(completion, CheckOwnerLocked(run, item_id, k, owner));
      if (completion == Completion::kLeaseLost) return Status::Ok();
      // Published while this transaction holds the write lock: no other completion of the row
      // can happen in between, and the row is done only once the file is in place.
      VISALIGN_RETURN_IF_ERROR(PublishImage(image));
      Stmt s(db_,
             "UPDATE items SET status = 'done', attempts = attempts + 1, last_error = '', latency_ms = ?, "
             "image_path = ?, sha256 = ?, updated_at = ?, done_at = ?, lease_owner = '', lease_expires = 0 "
             "WHERE run = ? AND item_id = ? AND k = ?",
             where_);
      VISALIGN_RETURN_IF_ERROR(s.prepared());
      std::string now = NowUtc();
      return s.Bind(latency_ms)
          .Bind(image.relative_path)
          .Bind(image.sha256)
          .Bind(now)
          .Bind(now)
          .Bind(run)
          .Bind(item_id)
          .Bind(int64_t{k})
          .Run();
    });
    if (!st.ok() || completion == Completion::kLeaseLost) DiscardImage(image);
    VISALIGN_RETURN_IF_ERROR(st);
    return completion;
  }

  Result<Completion> MarkFailure(const std::string& run, const std::string& item_id, int k, const std::string& owner,
                                 const std::string& error, double latency_ms, bool final) override {
    return Unsuccessful(run, item_id, k, owner, error, latency_ms, final ? "failed" : "pending");
  }

  Result<Completion> MarkRefused(const std::string& run, const std::string& item_id, int k, const std::string& owner,
                                 const std::string& reason, double latency_ms) override {
    return Unsuccessful(run, item_id, k, owner, reason, latency_ms, "refused");
  }

  Result<Completion> SetJob(const std::string& run, const std::string& item_id, int k, const std::string& owner,
                            const std::string& job) override {
    std::lock_guard lock(mu_);
    Completion completion = Completion::kRecorded;
    VISALIGN_RETURN_IF_ERROR(Transaction([&]() -> Status {
      VISALIGN_ASSIGN_OR_RETURN(completion, CheckOwnerLocked(run, item_id, k, owner));
      if (completion == Completion::kLeaseLost) return Status::Ok();
      Stmt s(db_, "UPDATE items SET job = ?, updated_at = ? WHERE run = ? AND item_id = ? AND k = ?", where_);
      VISALIGN_RETURN_IF_ERROR(s.prepared());
      return s.Bind(job).Bind(NowUtc()).Bind(run).Bind(item_id).Bind(int64_t{k}).Run();
    }));
    return completion;
  }

  Result<Claim> ClaimRows(const std::string& run, const std::string& owner, const std::vector<RowKey>& wanted,
                          std::chrono::milliseconds ttl, bool include_failed) override {
    std::lock_guard lock(mu_);
    Claim claim;
    VISALIGN_RETURN_IF_ERROR(Transaction([&]() -> Status {
      Stmt q(db_, "SELECT status, lease_owner, lease_expires, job FROM items WHERE run = ? AND item_id = ? AND k = ?",
             where_);
      Stmt u(db_, "UPDATE items SET lease_owner = ?, lease_expires = ? WHERE run = ? AND item_id = ? AND k = ?",
             where_);
      VISALIGN_RETURN_IF_ERROR(q.prepared());
      VISALIGN_RETURN_IF_ERROR(u.prepared());
      const int64_t now = NowUnixMs();
      for (const RowKey& key : wanted) {
        q.Reset();
        q.Bind(run).Bind(key.item_id).Bind(int64_t{key.k});
        Status st;
        if (!q.Step(st)) {
          VISALIGN_RETURN_IF_ERROR(st);
          continue;
        }
        const ClaimDecision decision = DecideClaim(q.Text(0), q.Text(1), q.Int(2), owner, now, include_failed);
        if (decision == ClaimDecision::kSkip) continue;
        if (decision == ClaimDecision::kBusy) {
          claim.busy.push_back(key);
          continue;
        }
        u.Reset();
        VISALIGN_RETURN_IF_ERROR(
            u.Bind(owner).Bind(int64_t{now + ttl.count()}).Bind(run).Bind(key.item_id).Bind(int64_t{key.k}).Run());
        claim.claimed.push_back(key);
        claim.jobs.push_back(q.Text(3));
      }
      return Status::Ok();
    }));
    return claim;
  }

  Result<size_t> RenewLeases(const std::string& run, const std::string& owner, std::chrono::milliseconds ttl) override {
    std::lock_guard lock(mu_);
    Stmt s(db_, "UPDATE items SET lease_expires = ? WHERE run = ? AND lease_owner = ?", where_);
    VISALIGN_RETURN_IF_ERROR(s.prepared());
    VISALIGN_RETURN_IF_ERROR(s.Bind(int64_t{NowUnixMs() + ttl.count()}).Bind(run).Bind(owner).Run());
    return static_cast<size_t>(sqlite3_changes(db_));
  }

  Status ReleaseLeases(const std::string& run, const std::string& owner) override {
    std::lock_guard lock(mu_);
    Stmt s(db_, "UPDATE items SET lease_owner = '', lease_expires = 0 WHERE run = ? AND lease_owner = ?", where_);
    VISALIGN_RETURN_IF_ERROR(s.prepared());
    return s.Bind(run).Bind(owner).Run();
  }

  Result<std::optional<std::string>> CacheGet(const std::string& ns, const std::string& key) override {
    std::lock_guard lock(mu_);
    Stmt s(db_, "SELECT value FROM cache WHERE namespace = ? AND key = ?", where_);
    VISALIGN_RETURN_IF_ERROR(s.prepared());
    s.Bind(ns).Bind(key);
    Status st;
    if (s.Step(st)) return std::optional<std::string>(s.Text(0));
    VISALIGN_RETURN_IF_ERROR(st);
    return std::optional<std::string>();
  }

  Status CachePut(const std::string& ns, const std::string& key, const std::string& value) override {
    std::lock_guard lock(mu_);
    return Transaction([&]() -> Status {
      Stmt s(db_,
             "INSERT INTO cache(namespace, key, value, updated_at) VALUES (?, ?, ?, ?) "
             "ON CONFLICT(namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
             where_);
      VISALIGN_RETURN_IF_ERROR(s.prepared());
      VISALIGN_RETURN_IF_ERROR(s.Bind(ns).Bind(key).Bind(value).Bind(NowUtc()).Run());
      Stmt unlease(db_, "DELETE FROM cache_leases WHERE namespace = ? AND key = ?", where_);
      VISALIGN_RETURN_IF_ERROR(unlease.prepared());
      return unlease.Bind(ns).Bind(key).Run();
    });
  }

  Result<CacheClaim> ClaimCacheKeys(const std::string& ns, const std::string& owner,
                                    const std::vector<std::string>& keys, std::chrono::milliseconds ttl) override {
    std::lock_guard lock(mu_);
    CacheClaim claim;
    VISALIGN_RETURN_IF_ERROR(Transaction([&]() -> Status {
      Stmt q(db_, "SELECT owner, expires FROM cache_leases WHERE namespace = ? AND key = ?", where_);
      Stmt u(db_,
             "INSERT INTO cache_leases(namespace, key, owner, expires) VALUES (?, ?, ?, ?) "
             "ON CONFLICT(namespace, key) DO UPDATE SET owner = excluded.owner, expires = excluded.expires",
             where_);
      VISALIGN_RETURN_IF_ERROR(q.prepared());
      VISALIGN_RETURN_IF_ERROR(u.prepared());
      const int64_t now = NowUnixMs();
      for (const std::string& key : keys) {
        q.Reset();
        q.Bind(ns).Bind(key);
        Status st;
        const bool leased = q.Step(st);
        VISALIGN_RETURN_IF_ERROR(st);
        if (leased && q.Text(0) != owner && q.Int(1) > now) {
          claim.busy.push_back(key);
          continue;
        }
        u.Reset();
        VISALIGN_RETURN_IF_ERROR(u.Bind(ns).Bind(key).Bind(owner).Bind(int64_t{now + ttl.count()}).Run());
        claim.claimed.push_back(key);
      }
      return Status::Ok();
    }));
    return claim;
  }

  Status RenewCacheLeases(const std::string& ns, const std::string& owner, std::chrono::milliseconds ttl) override {
    std::lock_guard lock(mu_);
    Stmt s(db_, "UPDATE cache_leases SET expires = ? WHERE namespace = ? AND owner = ?", where_);
    VISALIGN_RETURN_IF_ERROR(s.prepared());
    return s.Bind(int64_t{NowUnixMs() + ttl.count()}).Bind(ns).Bind(owner).Run();
  }

  Status ReleaseCacheLeases(const std::string& ns, const std::string& owner) override {
    std::lock_guard lock(mu_);
    Stmt s(db_, "DELETE FROM cache_leases WHERE namespace = ? AND owner = ?", where_);
    VISALIGN_RETURN_IF_ERROR(s.prepared());
    return s.Bind(ns).Bind(owner).Run();
  }

 private:
  // Runs `body` in a BEGIN IMMEDIATE transaction (the write lock is taken at once, so two
  // processes never both read a row as free and then both claim it): committed if it succeeds.
  template <typename Body>
  Status Transaction(Body body) {
    VISALIGN_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
    Status st = body();
    Status end = Exec(st.ok() ? "COMMIT" : "ROLLBACK");
    return st.ok() ? end : st;
  }

  // A failed (`status` failed or pending: to be retried) or refused attempt by `owner`. Pending rows
  // keep their lease (the owner retries); the others are final and unleased.
  Result<Completion> Unsuccessful(const std::string& run, const std::string& item_id, int k, const std::string& owner,
                                  const std::string& error, double latency_ms, const char* status) {
    std::lock_guard lock(mu_);
    Completion completion = Completion::kRecorded;
    const bool retry = std::string_view(status) == "pending";
    VISALIGN_RETURN_IF_ERROR(Transaction([&]() -> Status {
      VISALIGN_ASSIGN_OR_RETURN(completion, CheckOwnerLocked(run, item_id, k, owner));
      if (completion == Completion::kLeaseLost) return Status::Ok();
      Stmt s(db_,
             retry ? "UPDATE items SET status = ?, attempts = attempts + 1, last_error = ?, latency_ms = ?, "
                     "updated_at = ? WHERE run = ? AND item_id = ? AND k = ?"
                   : "UPDATE items SET status = ?, attempts = attempts + 1, last_error = ?, latency_ms = ?, "
                     "updated_at = ?, lease_owner = '', lease_expires = 0 WHERE run = ? AND item_id = ? AND k = ?",
             where_);
      VISALIGN_RETURN_IF_ERROR(s.prepared());
      return s.Bind(std::string(status))
          .Bind(error)
          .Bind(latency_ms)
          .Bind(NowUtc())
          .Bind(run)
          .Bind(item_id)
          .Bind(int64_t{k})
          .Run();
    }));
    return completion;
  }

  // Whether `owner` may complete the row: NotFound for a missing row, kLeaseLost for a done one
  // (another worker finished it) or one whose lease is another owner's.
  Result<Completion> CheckOwnerLocked(const std::string& run, const std::string& item_id, int k,
                                      const std::string& owner) {
    Stmt q(db_, "SELECT status, lease_owner FROM items WHERE run = ? AND item_id = ? AND k = ?", where_);
    VISALIGN_RETURN_IF_ERROR(q.prepared());
    q.Bind(run).Bind(item_id).Bind(int64_t{k});
    Status st;
    const bool found = q.Step(st);
    VISALIGN_RETURN_IF_ERROR(st);
    if (!found)
      return Status::NotFound(fmt::format("no row for item \"{}\" sample {} in run \"{}\"", item_id, k, run), where_,
                              "a row added by AddItems");
    return CompletionFor(q.Text(0), q.Text(1), owner);
  }

  Result<std::vector<RunInfo>> QueryRuns(const std::string* name) {
    std::lock_guard lock(mu_);
    return QueryRunsLocked(name);
  }

  Result<std::vector<RunInfo>> QueryRunsLocked(const std::string* name) {
    Stmt s(db_,
           name
               ? "SELECT name, benchmark, dataset_fingerprint, backend, created_at, connection FROM runs WHERE name = ?"
               : "SELECT name, benchmark, dataset_fingerprint, backend, created_at, connection FROM runs ORDER BY name",
           where_);
    VISALIGN_RETURN_IF_ERROR(s.prepared());
    if (name) s.Bind(*name);
    std::vector<RunInfo> runs;
    Status st;
    while (s.Step(st)) {
      VISALIGN_ASSIGN_OR_RETURN(
          RunInfo r, RunFromColumns(s.Text(0), s.Text(1), s.Text(2), s.Text(3), s.Text(4), s.Text(5), where_));
      runs.push_back(std::move(r));
    }
    VISALIGN_RETURN_IF_ERROR(st);
    return runs;
  }

  sqlite3* db_;
  std::string where_;
  std::mutex mu_;
};

}  // namespace

bool SqliteStoreExists(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / kDbFileName, ec);
}

Result<std::unique_ptr<RunStore>> OpenSqliteStore(const fs::path& dir, SchemaMigration* migration) {
  VISALIGN_RETURN_IF_ERROR(EnsureDirectory(dir));
  fs::path db_path = dir / kDbFileName;
  sqlite3* db = nullptr;
  int rc =
      sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    return Status::IoError("cannot open database: " + msg, db_path.string(), "a writable store folder");
  }
  auto store = std::make_unique<SqliteStore>(dir, db);
  Status st = store->Initialize(migration);
  if (!st.ok()) {
    if (st.code() == StatusCode::kIoError)
      return Status::Corrupt(st.what(), st.where(), "an SQLite database written by visalign (or an empty folder)");
    return st;
  }
  return std::unique_ptr<RunStore>(std::move(store));
}

}  // namespace visalign::store
