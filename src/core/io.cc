#include "visalign/core/io.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "visalign/core/untrusted.h"

namespace visalign {
namespace fs = std::filesystem;

Status ReadFileInto(const fs::path& path, std::string& contents) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound("file does not exist", path.string(), "an existing file");
    return Status::IoError("cannot open file: " + std::string(std::strerror(errno)), path.string());
  }
  // A regular file is read straight into a string of its size (one copy); whatever follows (a
  // file that grew, a pipe) through a chunk buffer.
  struct stat st {};
  contents.resize(::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? static_cast<size_t>(st.st_size) : 0);
  size_t filled = 0;
  char chunk[1 << 16];
  for (;;) {
    const bool into_contents = filled < contents.size();
    char* dest = into_contents ? contents.data() + filled : chunk;
    const size_t room = into_contents ? contents.size() - filled : sizeof chunk;
    const ssize_t n = ::read(fd, dest, room);
    if (n < 0) {
      if (errno == EINTR) continue;
      Status err = Status::IoError("read failed: " + std::string(std::strerror(errno)), path.string());
      ::close(fd);
      return err;
    }
    if (n == 0) break;
    if (into_contents) {
      filled += static_cast<size_t>(n);
    } else {
      contents.resize(filled);
      contents.append(chunk, static_cast<size_t>(n));
      filled = contents.size();
    }
  }
  ::close(fd);
  contents.resize(filled);
  return Status::Ok();
}

Result<std::string> ReadFile(const fs::path& path) {
  std::string contents;
  VISALIGN_RETURN_IF_ERROR(ReadFileInto(path, contents));
  return contents;
}

Status EnsureDirectory(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IoError("cannot create directory: " + ec.message(), dir.string(), "a writable location");
  return Status::Ok();
}

Status WriteFileAtomic(const fs::path& path, std::string_view contents) {
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError("cannot create file: " + std::string(std::strerror(errno)), tmp.string());
  const char* p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      Status st = Status::IoError("write failed: " + std::string(std::strerror(errno)), tmp.string());
      ::close(fd);
      ::unlink(tmp.c_str());
      return st;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return Status::IoError("flush failed: " + std::string(std::strerror(errno)), tmp.string());
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status st = Status::IoError("rename failed: " + std::string(std::strerror(errno)), path.string());
    ::unlink(tmp.c_str());
    return st;
  }
  return Status::Ok();
}

Result<size_t> CsvTable::Column(std::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  std::string have;
  for (const auto& h : header) have += (have.empty() ? "" : ",") + h;
  return Status::NotFound("missing column " + QuoteText(name), source + ":1",
                          "a header with that column (found: " + have + ")");
}

std::string CsvTable::Where(size_t row) const { return source + ":" + std::to_string(line_numbers.at(row)); }

Result<CsvTable> ParseCsv(std::string_view text, std::string source) {
  CsvTable t;
  t.source = std::move(source);
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  if (text.empty()) return Status::Corrupt("empty file", t.source, "a CSV header line");
  std::vector<std::string> fields;
  std::string field;
  int line = 1, record_line = 1;
  bool in_quotes = false, any = false;
  auto end_record = [&]() -> Status {
    fields.push_back(std::move(field));
    field.clear();
    bool blank = fields.size() == 1 && fields[0].empty();
    if (!blank) {
      if (t.header.empty()) {
        t.header = std::move(fields);
      } else if (fields.size() != t.header.size()) {
        return Status::Corrupt("row has " + std::to_string(fields.size()) + " fields",
                               t.source + ":" + std::to_string(record_line),
                               std::to_string(t.header.size()) + " fields as in the header");
      } else {
        t.rows.push_back(std::move(fields));
        t.line_numbers.push_back(record_line);
      }
    }
    fields.clear();
    any = false;
    return Status::Ok();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"' && field.empty()) {
      in_quotes = true;
      any = true;
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
      any = true;
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      continue;
    } else if (c == '\n') {
      VISALIGN_RETURN_IF_ERROR(end_record());
      ++line;
      record_line = line;
    } else {
      field += c;
      any = true;
    }
  }
  if (in_quotes) return Status::Corrupt("unterminated quoted field", t.source + ":" + std::to_string(record_line));
  if (any || !field.empty()) VISALIGN_RETURN_IF_ERROR(end_record());
  if (t.header.empty()) return Status::Corrupt("empty file", t.source, "a CSV header line");
  return t;
}

Result<CsvTable> ReadCsv(const fs::path& path) {
  VISALIGN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseCsv(text, path.string());
}

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    pos = end + 1;
  }
  return lines;
}

std::string CsvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

Result<double> ParseDouble(std::string_view text, const std::string& where) {
  std::string s(text);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
  size_t b = s.find_first_not_of(" \t");
  s = b == std::string::npos ? "" : s.substr(b);
  if (!s.empty()) {
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str() + s.size() && errno != ERANGE && std::isfinite(v)) return v;
  }
  return Status::InvalidArgument("not a number: " + QuoteText(text), where, "a finite decimal number");
}

Result<int64_t> ParseInt(std::string_view text, const std::string& where) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size())
    return Status::InvalidArgument("not an integer: " + QuoteText(text), where, "a whole number");
  return v;
}

namespace {
fs::path ExecutableDir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}
}  // namespace

Result<fs::path> DataDir() {
  if (const char* env = std::getenv("VISALIGN_DATA"); env && *env) {
    if (fs::is_directory(env)) return fs::path(env);
    return Status::NotFound("VISALIGN_DATA points to a missing directory", env, "the visalign data/ folder");
  }
  fs::path exe_dir = ExecutableDir();
  for (const fs::path& candidate :
       {exe_dir / ".." / "data", exe_dir / ".." / ".." / "data", exe_dir / ".." / "share" / "visalign" / "data",
        fs::path(VISALIGN_INSTALL_DATA_DIR)}) {
    if (fs::is_directory(candidate / "color")) return fs::weakly_canonical(candidate);
  }
  return Status::NotFound("visalign data folder not found", exe_dir.string(),
                          "data/ beside the build folder, an installed share/visalign/data, or VISALIGN_DATA=DIR");
}

Result<fs::path> DataFile(const fs::path& relative) {
  VISALIGN_ASSIGN_OR_RETURN(fs::path dir, DataDir());
  fs::path p = dir / relative;
  if (!fs::exists(p))
    return Status::NotFound("shipped data file is missing", p.string(), "a complete visalign data/ folder");
  return p;
}

namespace {
struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
std::string ToHex(const unsigned char* d, unsigned n) {
  static const char* kHex = "0123456789abcdef";
  std::string s(2 * n, '0');
  for (unsigned i = 0; i < n; ++i) {
    s[2 * i] = kHex[d[i] >> 4];
    s[2 * i + 1] = kHex[d[i] & 15];
  }
  return s;
}
}  // namespace

std::string Sha256Hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &n, EVP_sha256(), nullptr);
  return ToHex(digest, n);
}

Result<std::string> Sha256File(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open file", path.string(), "an existing readable file");
  std::unique_ptr<EVP_MD_CTX, MdCtxDeleter> ctx(EVP_MD_CTX_new());
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<size_t>(in.gcount()));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &n);
  return ToHex(digest, n);
}

}  // namespace visalign
