#include <unistd.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "visalign/core/io.h"
#include "visalign/store.h"

namespace visalign::store {
namespace fs = std::filesystem;

namespace {
constexpr size_t kHostNameMax = 256;
constexpr int kRenewalsPerLease = 3;  // CacheLeaseRenewer

// 64 random bits, drawn once per process.
uint64_t ProcessNonce() {
  static const uint64_t nonce = [] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }();
  return nonce;
}

bool SafeChar(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}
}  // namespace

Status ValidateRunName(const std::string& name) {
  bool ok = !name.empty() && name != "." && name != "..";
  for (unsigned char c : name) ok = ok && SafeChar(c);
  if (!ok)
    return Status::InvalidArgument("invalid run name \"" + name + "\"", "run name",
                                   "letters, digits, '.', '_' or '-' (it names the image folder)");
  return Status::Ok();
}

std::string SafeFileName(std::string_view id) {
  static constexpr std::array<char, 16> kHex = {'0', '1', '2', '3', '4', '5', '6', '7',
                                                '8', '9', 'A', 'B', 'C', 'D', 'E', 'F'};
  std::string out;
  out.reserve(id.size());
  for (unsigned char c : id) {
    if (SafeChar(c) && !(c == '.' && out.empty())) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return out;
}

Result<RunOpening> CheckRunReuse(const RunInfo& existing, const RunInfo& wanted, size_t done,
                                 const std::string& where) {
  auto differs = [&](const std::string& field, const std::string& have, const std::string& want) {
    return Status::InvalidArgument(
        fmt::format("run \"{}\" exists with {} {} but this invocation has {}", wanted.name, field, have, want), where,
        "the same settings to resume it, or a new run name");
  };
  if (existing.benchmark != wanted.benchmark) return differs("benchmark", existing.benchmark, wanted.benchmark);
  if (existing.dataset_fingerprint != wanted.dataset_fingerprint)
    return differs("dataset fingerprint", existing.dataset_fingerprint, wanted.dataset_fingerprint);
  // Key order aside: a store written before Json kept insertion order holds identities key-sorted.
  if (SameJson(existing.identity, wanted.identity)) return RunOpening::kResumed;
  if (done == 0) return RunOpening::kTakenOver;
  return differs(fmt::format("{} done images made with", done), existing.identity.dump(), wanted.identity.dump());
}

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string MakeOwnerId() {
  static std::atomic<uint64_t> made{0};
  char host[kHostNameMax] = {};
  if (::gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "unknown-host");
  return fmt::format("{}:{}:{:016x}:{}", host, ::getpid(), ProcessNonce(), made.fetch_add(1));
}

Result<StoredImage> RunStore::WriteImage(const std::string& run, const std::string& item_id, int k,
                                         std::string_view bytes, std::string_view extension) {
  static std::atomic<uint64_t> staged_count{0};
  VISALIGN_RETURN_IF_ERROR(ValidateRunName(run));
  const std::string file = SafeFileName(item_id) + "__" + std::to_string(k) + "." + std::string(extension);
  fs::path rel = fs::path("images") / run / file;
  fs::path staged = fs::path("tmp") / "staged" / run /
                    fmt::format("{}.{}.{:016x}.{}", file, ::getpid(), ProcessNonce(), staged_count.fetch_add(1));
  VISALIGN_RETURN_IF_ERROR(EnsureDirectory((root_ / staged).parent_path()));
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(root_ / staged, bytes));
  return StoredImage{rel.generic_string(), Sha256Hex(bytes), bytes.size(), staged.generic_string()};
}

Status RunStore::PublishImage(const StoredImage& image) {
  if (image.staged_path.empty()) return Status::Ok();
  const fs::path target = root_ / image.relative_path;
  VISALIGN_RETURN_IF_ERROR(EnsureDirectory(target.parent_path()));
  std::error_code ec;
  fs::rename(root_ / image.staged_path, target, ec);
  if (ec) return Status::IoError("cannot publish image: " + ec.message(), target.string(), "a writable store folder");
  return Status::Ok();
}

void RunStore::DiscardImage(const StoredImage& image) {
  if (image.staged_path.empty()) return;
  std::error_code ec;
  fs::remove(root_ / image.staged_path, ec);
}

fs::path ScratchDir(const fs::path& store_root) { return store_root / "tmp"; }

struct CacheLeaseRenewer::State {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::thread renewer;
};

CacheLeaseRenewer::CacheLeaseRenewer(RunStore& store, std::string ns, std::string owner, std::chrono::milliseconds ttl)
    : state_(std::make_unique<State>()) {
  state_->renewer = std::thread([&store, ns = std::move(ns), owner = std::move(owner), ttl, s = state_.get()] {
    std::unique_lock lock(s->mu);
    while (!s->cv.wait_for(lock, ttl / kRenewalsPerLease, [s] { return s->done; }))
      (void)store.RenewCacheLeases(ns, owner, ttl);  // a failure is retried at the next turn
  });
}

CacheLeaseRenewer::~CacheLeaseRenewer() {
  {
    std::lock_guard lock(state_->mu);
    state_->done = true;
  }
  state_->cv.notify_all();
  state_->renewer.join();
}

Status RunStore::RemoveRun(const std::string& name) {
  VISALIGN_RETURN_IF_ERROR(ValidateRunName(name));
  VISALIGN_RETURN_IF_ERROR(DeleteRun(name));
  for (const fs::path& dir : {root_ / "images" / name, root_ / "tmp" / "staged" / name}) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (ec) return Status::IoError("cannot remove the run's files: " + ec.message(), dir.string(), "a writable store");
  }
  return Status::Ok();
}

Result<std::vector<DoneImage>> RunStore::DoneImages(const std::string& run) {
  VISALIGN_ASSIGN_OR_RETURN(std::optional<RunInfo> info, FindRun(run));
  if (!info)
    return Status::NotFound("no run named \"" + run + "\"", root_.string(), "the name of one of the store's runs");
  VISALIGN_ASSIGN_OR_RETURN(std::vector<Row> rows, Rows(run));
  std::vector<DoneImage> out;
  for (const Row& r : rows)
    if (r.status == RowStatus::kDone) out.push_back({r.item_id, r.k, root_ / r.image_path, r.sha256});
  VISALIGN_RETURN_IF_ERROR(MaterializeImages(run, out));
  return out;
}

const char* RowStatusName(RowStatus status) {
  switch (status) {
    case RowStatus::kPending:
      return "pending";
    case RowStatus::kDone:
      return "done";
    case RowStatus::kFailed:
      return "failed";
    case RowStatus::kRefused:
      return "refused";
  }
  return "pending";
}

Result<RunCounts> RunStore::Counts(const std::string& run) {
  VISALIGN_ASSIGN_OR_RETURN(std::vector<Row> rows, Rows(run));
  RunCounts c;
  const int64_t now = NowUnixMs();
  for (const Row& r : rows) {
    c.attempts += static_cast<size_t>(r.attempts);
    if (c.first_update.empty() || r.created_at < c.first_update) c.first_update = r.created_at;
    if (r.updated_at > c.last_update) c.last_update = r.updated_at;
    if (r.status != RowStatus::kDone && r.status != RowStatus::kRefused && !r.lease_owner.empty() &&
        r.lease_expires_ms > now)
      ++c.leased;
    switch (r.status) {
      case RowStatus::kPending:
        ++c.pending;
        break;
      case RowStatus::kDone:
        ++c.done;
        break;
      case RowStatus::kFailed:
        ++c.failed;
        break;
      case RowStatus::kRefused:
        ++c.refused;
        break;
    }
  }
  return c;
}

}  // namespace visalign::store
