#include "hub/fetch_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstring>

#include "hub/hub_cache.h"
#include "hub/hub_http.h"
#include "visalign/core/io.h"
#include "visalign/core/progress.h"
#include "visalign/core/untrusted.h"

namespace visalign::hub {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxRelativeRedirects = 5;
constexpr int kMaxAttempts = 5;  // a transfer cut short is resumed this many times

// What a HEAD of the resolve URL says about a file.
struct Remote {
  std::string commit;
  std::string etag;
  uint64_t size = 0;
  bool lfs = false;  // the etag is the file's SHA-256
};

std::string Escape(std::string_view s) {  // a path segment; '/' kept between a file's folders
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

std::string ResolveUrl(const HubOptions& o, const std::string& repo, const std::string& revision,
                       const std::string& file) {
  std::string revision_escaped;
  for (char c : Escape(revision)) revision_escaped += c == '/' ? std::string("%2F") : std::string(1, c);
  return fmt::format("{}/{}/resolve/{}/{}", o.endpoint, repo, revision_escaped, Escape(file));
}

std::string Origin(const std::string& url) {  // scheme://host[:port]
  const size_t scheme = url.find("://");
  const size_t slash = scheme == std::string::npos ? std::string::npos : url.find('/', scheme + 3);
  return slash == std::string::npos ? url : url.substr(0, slash);
}

std::string CleanEtag(std::string etag) {
  if (etag.rfind("W/", 0) == 0) etag.erase(0, 2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1, etag.size() - 2);
  return etag;
}

Status HttpError(const HubResponse& r, const std::string& repo, const std::string& file, const std::string& url) {
  if (r.status == 401 || r.status == 403) {
    return Status::Unavailable(fmt::format("HTTP {}: repository {} is gated, private or needs a token", r.status, repo),
                               url,
                               "access on the Hub (accept the model's terms) and its token in HF_TOKEN (export "
                               "HF_TOKEN=hf_...; the token is never printed or stored)");
  }
  if (r.status == 404) {
    const std::string code = r.Header("x-error-code");
    return Status::NotFound(code == "RepoNotFound" ? fmt::format("repository {} not found (HTTP 404)", repo)
                            : code == "RevisionNotFound"
                                ? fmt::format("revision not found in {} (HTTP 404)", repo)
                                : fmt::format("file {} not found in {} (HTTP 404)", QuoteText(file), repo),
                            url, "an existing repository, revision and file");
  }
  return Status::Unavailable(fmt::format("HTTP {} from the Hub", r.status), url, "a 200 answer (or a redirect)");
}

// HEAD, following only relative redirects (a renamed repository); an absolute one is the content server.
Result<HubResponse> HeadResolve(const HubOptions& o, std::string url) {
  for (int i = 0; i <= kMaxRelativeRedirects; ++i) {
    VISALIGN_ASSIGN_OR_RETURN(HubResponse r, Head(url, o.token));
    const std::string location = r.Header("location");
    if (r.status < 300 || r.status >= 400 || location.empty() || location.front() != '/') return r;
    url = Origin(url) + location;
  }
  return Status::Unavailable("too many redirects", url, "a Hub that answers the resolve endpoint");
}

Result<Remote> ReadRemote(const HubResponse& r, const std::string& url) {
  Remote out;
  out.commit = r.Header("x-repo-commit");
  const std::string linked = CleanEtag(r.Header("x-linked-etag"));
  out.lfs = !linked.empty();
  out.etag = out.lfs ? linked : CleanEtag(r.Header("etag"));
  const std::string size = r.Header(out.lfs ? "x-linked-size" : "content-length");
  if (!IsHexId(out.commit, 40)) {
    return Status::Unavailable(fmt::format("X-Repo-Commit {}", QuoteText(out.commit)), url,
                               "a Hub answer naming the repository's commit (40 hex digits)");
  }
  if (!IsHexId(out.etag, out.lfs ? 64 : 40)) {
    return Status::Unavailable(fmt::format("ETag {}", QuoteText(out.etag)), url,
                               "X-Linked-Etag (a SHA-256) or ETag (a git blob id) from the Hub");
  }
  char* end = nullptr;
  out.size = std::strtoull(size.c_str(), &end, 10);
  if (size.empty() || end == nullptr || *end != '\0') {
    return Status::Unavailable(fmt::format("file size {}", QuoteText(size)), url, "X-Linked-Size or Content-Length");
  }
  return out;
}

uint64_t FileSize(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// Downloads the blob into its .incomplete file (resuming it), checks size and SHA-256, renames it into place.
Status DownloadBlob(const HubOptions& o, const RepoCache& cache, const Remote& remote, const std::string& url,
                    const std::string& file) {
  const fs::path partial = cache.Partial(remote.etag);
  std::error_code ec;
  fs::create_directories(partial.parent_path(), ec);
  const int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return Status::IoError(fmt::format("cannot create download: {}", std::strerror(errno)), partial.string(),
                           "a writable model cache");
  DownloadSink sink;
  sink.fd = fd;
  sink.offset = FileSize(partial);
  if (sink.offset > remote.size) {
    if (::ftruncate(fd, 0) != 0) sink.offset = 0;
    sink.offset = 0;
  }
  ::lseek(fd, static_cast<off_t>(sink.offset), SEEK_SET);
  Progress progress(fmt::format("download {}", file), remote.size, o.show_progress);
  progress.SetUnit(ProgressUnit::kBytes);
  progress.Add(sink.offset);
  sink.on_bytes = [&](uint64_t n) { progress.Add(n); };
  Status result = Status::Ok();
  for (int attempt = 0; attempt < kMaxAttempts && sink.offset < remote.size; ++attempt) {
    uint64_t written = 0;
    Result<HubResponse> r = Get(url, o.token, sink, &written);
    sink.offset += written;
    if (!r.ok()) {
      result = r.status();
      if (r.status().code() == StatusCode::kIoError) break;  // a full disk does not get better
      continue;
    }
    if (r->status == 416) {  // the partial file is not a prefix of this one: start over
      if (::ftruncate(fd, 0) != 0 || ::lseek(fd, 0, SEEK_SET) != 0) break;
      sink.offset = 0;
      continue;
    }
    if (r->status != 200 && r->status != 206) {
      result = HttpError(*r, "", file, url);
      break;
    }
    result = Status::Ok();
  }
  progress.Finish();
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (sink.offset < remote.size) {
    if (result.ok()) result = Status::Unavailable("the download stopped early", url, "the whole file");
    return result.WithContext(
        fmt::format("{} of {} bytes of {} kept in the cache to resume", sink.offset, remote.size, file));
  }
  if (!synced) return Status::IoError("cannot flush the download", partial.string(), "a writable model cache");
  const uint64_t size = FileSize(partial);
  Result<std::string> sha = Sha256File(partial);
  if (!sha.ok()) return sha.status();
  if (size != remote.size || (remote.lfs && *sha != remote.etag)) {
    fs::remove(partial, ec);
    return Status::Corrupt(fmt::format("checksum mismatch for {}: {} bytes with SHA-256 {}; the file was deleted",
                                       QuoteText(file), size, *sha),
                           url, fmt::format("{} bytes with SHA-256 {} (X-Linked-Etag)", remote.size, remote.etag));
  }
  fs::rename(partial, cache.Blob(remote.etag), ec);
  if (ec)
    return Status::IoError("cannot move the download into place: " + ec.message(), partial.string(),
                           "a writable model cache");
  return Status::Ok();
}

std::string Bytes(uint64_t n) {  // as `du -h` would say it, in SI units
  return n >= 1'000'000'000 ? fmt::format("{:.1f} GB", n / 1e9)
         : n >= 1'000'000   ? fmt::format("{:.1f} MB", n / 1e6)
                            : fmt::format("{} bytes", n);
}

// Before a download: room under o.disk_budget (making room if the caller can) and on the disk.
Status EnsureRoom(const HubOptions& o, const RepoCache& cache, const Remote& remote, const std::string& file) {
  const uint64_t have = FileSize(cache.Partial(remote.etag));
  const uint64_t need = remote.size > have ? remote.size - have : 0;
  if (o.disk_budget > 0) {
    uint64_t used = CacheBlobBytes(o.cache);
    if (used + need > o.disk_budget && o.make_room) {
      o.make_room(used + need - o.disk_budget);
      used = CacheBlobBytes(o.cache);
    }
    if (used + need > o.disk_budget) {
      return Status::InvalidArgument(fmt::format("{} needs {} more, the cache holds {} and --disk-budget is {}",
                                                 QuoteText(file), Bytes(need), Bytes(used), Bytes(o.disk_budget)),
                                     o.cache.string(), "a larger --disk-budget, or room freed in the cache");
    }
  }
  std::error_code ec;
  const fs::space_info space = fs::space(o.cache, ec);
  if (!ec && need > space.available) {
    return Status::IoError(
        fmt::format("disk full: {} needs {}, {} are free", QuoteText(file), Bytes(need), Bytes(space.available)),
        o.cache.string(), "free disk space for the download (or another cache: VISALIGN_CACHE)");
  }
  return Status::Ok();
}

Result<std::optional<FetchedFile>> FetchOffline(const HubOptions& o, const RepoCache& cache, const std::string& repo,
                                                const std::string& revision, const std::string& file, bool optional,
                                                std::string* commit) {
  const std::optional<std::string> pinned = commit->empty() ? cache.CommitOf(revision) : std::optional(*commit);
  const std::string where = fmt::format("{} (offline: HF_HUB_OFFLINE or --offline)", o.cache.string());
  if (!pinned) {
    return Status::NotFound(fmt::format("{}@{} is not in the cache", repo, revision), where,
                            "a model fetched once online, or no offline mode");
  }
  *commit = *pinned;
  const fs::path path = cache.Snapshot(*pinned, file);
  std::error_code ec;
  if (fs::exists(path, ec)) {
    FetchedFile f{file, path, FileSize(path), fs::read_symlink(path, ec).filename().string(), false};
    return std::optional<FetchedFile>(std::move(f));
  }
  if (optional && cache.KnownMissing(*pinned, file)) return std::optional<FetchedFile>();
  return Status::NotFound(fmt::format("file {} of {}@{} is not in the cache", QuoteText(file), repo, *pinned), where,
                          "a model fetched once online, or no offline mode");
}

}  // namespace

Result<std::optional<FetchedFile>> FetchFile(const HubOptions& o, const std::string& repo, const std::string& revision,
                                             const std::string& file, bool optional, std::string* commit) {
  const RepoCache cache(o.cache, repo);
  if (o.offline) return FetchOffline(o, cache, repo, revision, file, optional, commit);
  const std::string pinned_revision = commit->empty() ? revision : *commit;
  const std::string url = ResolveUrl(o, repo, pinned_revision, file);
  VISALIGN_ASSIGN_OR_RETURN(HubResponse head, HeadResolve(o, url));
  const std::string error_code = head.Header("x-error-code");
  if (head.status == 404 && optional && error_code != "RepoNotFound" && error_code != "RevisionNotFound") {
    const std::string missing_commit = head.Header("x-repo-commit");
    if (IsHexId(missing_commit, 40)) VISALIGN_RETURN_IF_ERROR(cache.MarkMissing(missing_commit, file));
    return std::optional<FetchedFile>();
  }
  if (head.status >= 400 || (head.status >= 300 && head.Header("location").empty()))
    return HttpError(head, repo, file, url);
  VISALIGN_ASSIGN_OR_RETURN(Remote remote, ReadRemote(head, url));
  if (!commit->empty() && remote.commit != *commit) {
    return Status::Unavailable(fmt::format("the Hub answered commit {} for commit {}", remote.commit, *commit), url,
                               "files of one commit");
  }
  *commit = remote.commit;
  FetchedFile fetched{file, cache.Snapshot(remote.commit, file), remote.size, remote.etag, false};
  std::error_code ec;
  if (!fs::exists(cache.Blob(remote.etag), ec)) {
    VISALIGN_ASSIGN_OR_RETURN(FileLock lock, FileLock::Acquire(cache.LockFile(remote.etag)));
    if (!fs::exists(cache.Blob(remote.etag), ec)) {  // another process may have finished it meanwhile
      VISALIGN_RETURN_IF_ERROR(EnsureRoom(o, cache, remote, file));
      VISALIGN_RETURN_IF_ERROR(DownloadBlob(o, cache, remote, ResolveUrl(o, repo, remote.commit, file), file));
      fetched.downloaded = true;
    }
  }
  VISALIGN_RETURN_IF_ERROR(cache.LinkSnapshot(remote.commit, file, remote.etag));
  VISALIGN_RETURN_IF_ERROR(cache.WriteRef(revision, remote.commit));
  return std::optional<FetchedFile>(std::move(fetched));
}

}  // namespace visalign::hub
