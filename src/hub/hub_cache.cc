#include "hub/hub_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <utility>

#include "visalign/core/io.h"
#include "visalign/hub/hub.h"

namespace visalign::hub {
namespace {

namespace fs = std::filesystem;

std::string RepoFolder(const std::string& repo) {
  std::string out = "models--";
  for (char c : repo) {
    if (c == '/') {
      out += "--";
    } else {
      out += c;
    }
  }
  return out;
}

// A name beside `path` no other process picks.
fs::path TempBeside(const fs::path& path) {
  static thread_local std::mt19937_64 random(std::random_device{}());
  return path.parent_path() / fmt::format(".{}.{}.{:x}.tmp", path.filename().string(), ::getpid(), random());
}

Status CreateFolders(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IoError("cannot create folder: " + ec.message(), dir.string(), "a writable model cache");
  return Status::Ok();
}

}  // namespace

bool IsHexId(std::string_view s, size_t length) {
  if (s.size() != length) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

RepoCache::RepoCache(const fs::path& root, const std::string& repo)
    : dir_(root / RepoFolder(repo)), locks_(root / ".locks" / RepoFolder(repo)) {}

std::optional<std::string> RepoCache::CommitOf(const std::string& revision) const {
  if (IsHexId(revision, 40)) return revision;
  Result<std::string> text = ReadFile(dir_ / "refs" / revision);
  if (!text.ok()) return std::nullopt;
  std::string commit = *text;
  while (!commit.empty() && (commit.back() == '\n' || commit.back() == ' ')) commit.pop_back();
  if (!IsHexId(commit, 40)) return std::nullopt;
  return commit;
}

Status RepoCache::WriteRef(const std::string& revision, const std::string& commit) const {
  if (revision == commit) return Status::Ok();
  const fs::path ref = dir_ / "refs" / revision;
  VISALIGN_RETURN_IF_ERROR(CreateFolders(ref.parent_path()));
  return WriteFileAtomic(ref, commit);
}

Status RepoCache::LinkSnapshot(const std::string& commit, const std::string& file, const std::string& etag) const {
  const fs::path link = Snapshot(commit, file);
  VISALIGN_RETURN_IF_ERROR(CreateFolders(link.parent_path()));
  const fs::path target = fs::relative(Blob(etag), link.parent_path());
  const fs::path temp = TempBeside(link);
  std::error_code ec;
  fs::create_symlink(target, temp, ec);
  if (!ec) fs::rename(temp, link, ec);
  if (ec) {
    fs::remove(temp, ec);
    return Status::IoError("cannot link the cached file", link.string(), "a writable model cache");
  }
  return Status::Ok();
}

bool RepoCache::KnownMissing(const std::string& commit, const std::string& file) const {
  std::error_code ec;
  return fs::exists(dir_ / ".no_exist" / commit / file, ec);
}

Status RepoCache::MarkMissing(const std::string& commit, const std::string& file) const {
  const fs::path marker = dir_ / ".no_exist" / commit / file;
  VISALIGN_RETURN_IF_ERROR(CreateFolders(marker.parent_path()));
  return WriteFileAtomic(marker, "");
}

Result<FileLock> FileLock::Acquire(const fs::path& path) {
  VISALIGN_RETURN_IF_ERROR(CreateFolders(path.parent_path()));
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return Status::IoError(fmt::format("cannot open lock file: {}", std::strerror(errno)), path.string(),
                           "a writable model cache");
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      const int err = errno;
      ::close(fd);
      return Status::IoError(fmt::format("cannot lock: {}", std::strerror(err)), path.string(),
                             "a file system with flock()");
    }
  }
  return FileLock(fd);
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

uint64_t CacheBlobBytes(const fs::path& cache) {
  uint64_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator repo(cache, ec), end; !ec && repo != end; repo.increment(ec)) {
    if (!repo->path().filename().string().starts_with("models--")) continue;
    std::error_code blob_ec;
    for (fs::directory_iterator blob(repo->path() / "blobs", blob_ec); !blob_ec && blob != end;
         blob.increment(blob_ec)) {
      std::error_code size_ec;
      const uintmax_t size = blob->is_regular_file(size_ec) ? fs::file_size(blob->path(), size_ec) : 0;
      if (!size_ec) total += size;
    }
  }
  return total;
}

}  // namespace visalign::hub
