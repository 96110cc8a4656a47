// A RunStore that forwards to a real one and fails the operations a test chooses, in the spirit of
// leveldb's fault-injection Env: tests show what callers do when a write to the store fails (the
// generation runner must never mark an image done that was not recorded, nor lose one that was
// written). Images (WriteImage) go to the wrapped store's folder as usual. Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "visalign/store.h"

namespace visalign::testing {

enum class StoreOperation {
  kOpenRun,
  kFindRun,
  kListRuns,
  kDeleteRun,
  kAddItems,
  kRows,
  kMarkDone,
  kMarkFailure,
  kClaimRows,
  kRenewLeases,
  kReleaseLeases,
  kCacheGet,
  kCachePut,
  kClaimCacheKeys,
  kRenewCacheLeases,
  kReleaseCacheLeases,
  kMarkRefused,
  kSetJob,
};

class FaultInjectionStore : public store::RunStore {
 public:
  explicit FaultInjectionStore(std::unique_ptr<store::RunStore> base);

  // The calls of `op` after the next `skip` ones fail with `error`, `times` of them (-1: all).
  void FailOperation(StoreOperation op, Status error, int skip = 0, int times = 1);
  // How often `op` was called, and how often it failed because of an injected fault.
  int calls(StoreOperation op) const;
  int injected(StoreOperation op) const;
  store::RunStore& base() { return *base_; }

  Result<store::RunOpening> OpenRun(const store::RunInfo& info) override;
  Result<std::optional<store::RunInfo>> FindRun(const std::string& name) override;
  Result<std::vector<store::RunInfo>> ListRuns() override;
  Status DeleteRun(const std::string& name) override;
  Status AddItems(const std::string& run, const std::vector<store::ItemSpec>& items) override;
  Result<std::vector<store::Row>> Rows(const std::string& run) override;
  Result<store::Completion> MarkDone(const std::string& run, const std::string& item_id, int k,
                                     const std::string& owner, const store::StoredImage& image,
                                     double latency_ms) override;
  Result<store::Completion> MarkFailure(const std::string& run, const std::string& item_id, int k,
                                        const std::string& owner, const std::string& error, double latency_ms,
                                        bool final) override;
  Result<store::Completion> MarkRefused(const std::string& run, const std::string& item_id, int k,
                                        const std::string& owner, const std::string& reason,
                                        double latency_ms) override;
  Result<store::Completion> SetJob(const std::string& run, const std::string& item_id, int k, const std::string& owner,
                                   const std::string& job) override;
  Result<store::Claim> ClaimRows(const std::string& run, const std::string& owner,
                                 const std::vector<store::RowKey>& wanted, std::chrono::milliseconds ttl,
                                 bool include_failed) override;
  Result<size_t> RenewLeases(const std::string& run, const std::string& owner, std::chrono::milliseconds ttl) override;
  Status ReleaseLeases(const std::string& run, const std::string& owner) override;
  Result<std::optional<std::string>> CacheGet(const std::string& ns, const std::string& key) override;
  Status CachePut(const std::string& ns, const std::string& key, const std::string& value) override;
  Result<store::CacheClaim> ClaimCacheKeys(const std::string& ns, const std::string& owner,
                                           const std::vector<std::string>& keys,
                                           std::chrono::milliseconds ttl) override;
  Status RenewCacheLeases(const std::string& ns, const std::string& owner, std::chrono::milliseconds ttl) override;
  Status ReleaseCacheLeases(const std::string& ns, const std::string& owner) override;

 private:
  struct Fault {
    Status error;
    int skip = 0;
    int times = 0;
  };
  // Counts the call; the injected error if this call must fail, else OK.
  Status Check(StoreOperation op);

  std::unique_ptr<store::RunStore> base_;
  mutable std::mutex mu_;
  std::map<StoreOperation, Fault> faults_;
  std::map<StoreOperation, int> calls_, injected_;
};

}  // namespace visalign::testing
