#include "testing/fault_injection_store.h"

namespace visalign::testing {

FaultInjectionStore::FaultInjectionStore(std::unique_ptr<store::RunStore> base)
    : store::RunStore(base->root()), base_(std::move(base)) {}

void FaultInjectionStore::FailOperation(StoreOperation op, Status error, int skip, int times) {
  std::lock_guard lock(mu_);
  faults_[op] = {std::move(error), skip, times};
}

int FaultInjectionStore::calls(StoreOperation op) const {
  std::lock_guard lock(mu_);
  auto it = calls_.find(op);
  return it == calls_.end() ? 0 : it->second;
}

int FaultInjectionStore::injected(StoreOperation op) const {
  std::lock_guard lock(mu_);
  auto it = injected_.find(op);
  return it == injected_.end() ? 0 : it->second;
}

Status FaultInjectionStore::Check(StoreOperation op) {
  std::lock_guard lock(mu_);
  ++calls_[op];
  auto it = faults_.find(op);
  if (it == faults_.end() || it->second.times == 0) return Status::Ok();
  Fault& f = it->second;
  if (f.skip > 0) {
    --f.skip;
    return Status::Ok();
  }
  if (f.times > 0) --f.times;
  ++injected_[op];
  return f.error;
}

Result<store::RunOpening> FaultInjectionStore::OpenRun(const store::RunInfo& info) {
  VISALIGN_RETURN_IF_ERROR(Check(StoreOperation::kOpenRun));
  return base_->OpenRun(info);
}

Result<std::optional<store::RunInfo>> FaultInjectionStore::FindRun(const std::string& name) {
  VISALIGN_RETURN_IF_ERROR(Check(StoreOperation::kFindRun));
  return base_->FindRun(name);
}

Result<std::vector<store::RunInfo>> FaultInjectionStore::ListRuns() {
  VISALIGN_RETURN_IF_ERROR(Check(StoreOperation::kListRuns));
  return base_->ListRuns();
}

Status FaultInjectionStore::DeleteRun(const std::string& name) {
  VISALIGN_RETURN_IF_ERROR(Check(StoreOperation::kDeleteRun));
  return base_->DeleteRun(name);
}

Status FaultInjectionStore::AddItems(const std::string& run, const std::vector<store::ItemSpec>& items) {
  VISALIGN_RETURN_IF_ERROR(Check(StoreOperation::kAddItems));
  return base_->AddItems(run, items);
}

Result<std::vector<store::Row>> FaultInjectionStore::Rows(const std::string& run) {
  VISALIGN_RETURN_IF_ERROR(Check(StoreOperation::kRows));
  return base_->Rows(run);
}

Result<store::Completion> FaultInjectionStore::MarkDone(const std::string& run, const std::string& item_id, int k,
                                                        const std::string& owner, const store::StoredImage& image,
                                                        double latency_ms) {
  if (Status st = Check(StoreOperation::kMarkDone); !st.ok()) {
    DiscardImage(image);  // as a store whose MarkDone fails does
    return st;
  }
  return base_->MarkDone(run, item_id, k, owner, image, latency_ms);
}

Result<store::Completion> FaultInjectionStore::MarkFailure(const std::string& run, const std::string& item_id, int k,
                                                           const std::string& owner, const std::string& error,
                                                           double latency_ms, bool final) {
  VISALIGN_RETURN_IF_ERROR(Check(StoreOperation::kMarkFailure));
  return base_->MarkFailure(run, item_id, k, owner, error, latency_ms, final);
}

Result<store::Completion> FaultInjectionStore::MarkRefused(const std::string& run, const std::string& item_id, int k,
                                                           const std::string& owner, const std::string& reason,
                                                           double latency_ms) {
  VISALIGN_RETURN_IF_ERROR(Check(StoreOperation::kMarkRefused));
  return base_->MarkRefused(run, item_id, k, owner, reason, latency_ms);
}

Result<store::Completion> FaultInjectionStore::SetJob(const std::string& run, const std::string& item_id, int k,
                                                      const std::string& owner, const std::string& job) {
  VISALIGN_RETURN_IF_ERROR(Check(StoreOperation::kSetJob));
  return base_->SetJob(run, item_id, k, owner, job);
}

Result<store::Claim> FaultInjectionStore::ClaimRows(const std::string& run, const std::string& owner,
                                                    const std::vector<store::RowKey>& wanted,
                                                    std::chrono::milliseconds ttl, bool include_failed) {
  VISALIGN_RETURN_IF_ERROR(Check(StoreOperation::kClaimRows));
  return base_->ClaimRows(run, owner, wanted, ttl, include_failed);
}

Result<size_t> FaultInjectionStore::RenewLeases(const std::string& run, const std::string& owner,
                                                std::chrono::milliseconds ttl) {
  VISALIGN_RETURN_IF_ERROR(Check(StoreOperation::kRenewLeases));
  return base_->RenewLeases(run, owner, ttl);
}

Status FaultInjectionStore::ReleaseLeases(const std::string& run, const std::string& owner) {
  VISALIGN_RETURN_IF_ERROR(Check(StoreOperation::kReleaseLeases));
  return base_->ReleaseLeases(run, owner);
}

Result<std::optional<std::string>> FaultInjectionStore::CacheGet(const std::string& ns, const std::string& key) {
  VISALIGN_RETURN_IF_ERROR(Check(StoreOperation::kCacheGet));
  return base_->CacheGet(ns, key);
}

Status FaultInjectionStore::CachePut(const std::string& ns, const std::string& key, const std::string& value) {
  VISALIGN_RETURN_IF_ERROR(Check(StoreOperation::kCachePut));
  return base_->CachePut(ns, key, value);
}

Result<store::CacheClaim> FaultInjectionStore::ClaimCacheKeys(const std::string& ns, const std::string& owner,
                                                              const std::vector<std::string>& keys,
                                                              std::chrono::milliseconds ttl) {
  VISALIGN_RETURN_IF_ERROR(Check(StoreOperation::kClaimCacheKeys));
  return base_->ClaimCacheKeys(ns, owner, keys, ttl);
}

Status FaultInjectionStore::RenewCacheLeases(const std::string& ns, const std::string& owner,
                                             std::chrono::milliseconds ttl) {
  VISALIGN_RETURN_IF_ERROR(Check(StoreOperation::kRenewCacheLeases));
  return base_->RenewCacheLeases(ns, owner, ttl);
}

Status FaultInjectionStore::ReleaseCacheLeases(const std::string& ns, const std::string& owner) {
  VISALIGN_RETURN_IF_ERROR(Check(StoreOperation::kReleaseCacheLeases));
  return base_->ReleaseCacheLeases(ns, owner);
}

}  // namespace visalign::testing
