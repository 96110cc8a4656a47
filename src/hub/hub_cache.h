// The cache in huggingface_hub's layout, one folder per repository:
//   models--ORG--NAME/refs/<revision>              the commit a branch or tag pointed to when fetched
//   models--ORG--NAME/blobs/<etag>                 a file's bytes (etag: LFS SHA-256 or git blob id)
//   models--ORG--NAME/blobs/<etag>.incomplete      a download in progress (resumed from its size)
//   models--ORG--NAME/snapshots/<commit>/<file>    a relative link to ../../blobs/<etag>
//   models--ORG--NAME/.no_exist/<commit>/<file>    the Hub answered 404 (so offline runs know)
//   .locks/models--ORG--NAME/<etag>.lock           flock()ed by the process downloading the blob
// Blobs, links and refs appear by rename only, so a reader never sees a partial file. Internal.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "visalign/core/status.h"

namespace visalign::hub {

class RepoCache {
 public:
  RepoCache(const std::filesystem::path& root, const std::string& repo);

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path Blob(const std::string& etag) const { return dir_ / "blobs" / etag; }
  std::filesystem::path Partial(const std::string& etag) const { return dir_ / "blobs" / (etag + ".incomplete"); }
  std::filesystem::path Snapshot(const std::string& commit, const std::string& file) const {
    return dir_ / "snapshots" / commit / file;
  }
  std::filesystem::path LockFile(const std::string& etag) const { return locks_ / (etag + ".lock"); }

  // The commit `revision` names: itself when it is a commit id, else refs/<revision>; nullopt if unknown.
  std::optional<std::string> CommitOf(const std::string& revision) const;
  Status WriteRef(const std::string& revision, const std::string& commit) const;
  // snapshots/<commit>/<file> -> the blob (relative link, replaced atomically).
  Status LinkSnapshot(const std::string& commit, const std::string& file, const std::string& etag) const;
  bool KnownMissing(const std::string& commit, const std::string& file) const;
  Status MarkMissing(const std::string& commit, const std::string& file) const;

 private:
  std::filesystem::path dir_;
  std::filesystem::path locks_;
};

// An exclusive flock() on a file (created if missing), released on destruction: downloads of one blob
// by several processes happen once.
class FileLock {
 public:
  static Result<FileLock> Acquire(const std::filesystem::path& path);
  FileLock(FileLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  FileLock& operator=(FileLock&&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// 40 hex digits (a git commit or blob id) / 64 (a SHA-256).
bool IsHexId(std::string_view s, size_t length);

}  // namespace visalign::hub
