#include "clip/zip_archive.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "visalign/core/untrusted.h"

namespace visalign::clip {
namespace {

constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kEndOfCentral = 0x06054b50;
constexpr uint32_t kZip64EndOfCentral = 0x06064b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint16_t kMethodStored = 0;
constexpr size_t kEndOfCentralBytes = 22;
constexpr size_t kMaxCommentBytes = 0xFFFF;
constexpr size_t kCentralHeaderBytes = 46;
constexpr size_t kLocalHeaderBytes = 30;
constexpr size_t kZip64LocatorBytes = 20;
constexpr size_t kZip64EndOfCentralBytes = 56;
constexpr uint32_t kFlagEncrypted = 0x1;

// Little-endian reads bounded by the buffer: every read goes through At(), which checks the range.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size, const std::string& where) : data_(data), size_(size), where_(where) {}

  bool Has(uint64_t offset, uint64_t bytes) const { return offset <= size_ && bytes <= size_ - offset; }
  template <typename T>
  T At(uint64_t offset) const {
    T v{};
    std::memcpy(&v, data_ + offset, sizeof(T));  // callers checked Has(offset, sizeof(T))
    return v;
  }
  Status Bad(const std::string& what) const {
    return Status::Corrupt(what, where_, "a complete zip archive as torch.save writes (truncated or damaged?)");
  }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  const std::string& where_;
};

struct Directory {
  uint64_t entries = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

Result<Directory> FindDirectory(const Reader& r) {
  if (r.size() < kEndOfCentralBytes) return r.Bad(fmt::format("{} bytes, too short for a zip archive", r.size()));
  const uint64_t lowest =
      r.size() > kEndOfCentralBytes + kMaxCommentBytes ? r.size() - kEndOfCentralBytes - kMaxCommentBytes : 0;
  for (uint64_t pos = r.size() - kEndOfCentralBytes + 1; pos-- > lowest;) {
    if (r.At<uint32_t>(pos) != kEndOfCentral) continue;
    Directory d{r.At<uint16_t>(pos + 10), r.At<uint32_t>(pos + 16), r.At<uint32_t>(pos + 12)};
    const bool zip64 = d.entries == 0xFFFF || d.offset == 0xFFFFFFFF || d.bytes == 0xFFFFFFFF;
    if (!zip64) return d;
    if (pos < kZip64LocatorBytes || r.At<uint32_t>(pos - kZip64LocatorBytes) != kZip64Locator) {
      return r.Bad("zip64 sizes without a zip64 end-of-directory locator");
    }
    const auto record = r.At<uint64_t>(pos - kZip64LocatorBytes + 8);
    if (!r.Has(record, kZip64EndOfCentralBytes) || r.At<uint32_t>(record) != kZip64EndOfCentral) {
      return r.Bad("the zip64 end-of-directory record lies outside the file");
    }
    return Directory{r.At<uint64_t>(record + 32), r.At<uint64_t>(record + 48), r.At<uint64_t>(record + 40)};
  }
  return r.Bad("no zip end-of-central-directory record");
}

// The zip64 extra field's values replace, in order, the 32-bit fields that read 0xFFFFFFFF.
Status ApplyZip64Extra(const Reader& r, uint64_t extra, uint16_t extra_bytes, uint64_t& size, uint64_t& compressed,
                       uint64_t& offset) {
  uint64_t pos = extra;
  const uint64_t end = extra + extra_bytes;
  while (pos + 4 <= end) {
    const auto id = r.At<uint16_t>(pos);
    const auto bytes = r.At<uint16_t>(pos + 2);
    pos += 4;
    if (pos + bytes > end) return r.Bad("a zip extra field runs past its entry");
    if (id == kZip64ExtraId) {
      uint64_t field = pos;
      for (uint64_t* value : {&size, &compressed, &offset}) {
        if (*value != 0xFFFFFFFF) continue;
        if (field + 8 > pos + bytes) return r.Bad("a zip64 extra field is shorter than its entry needs");
        *value = r.At<uint64_t>(field);
        field += 8;
      }
    }
    pos += bytes;
  }
  return Status::Ok();
}

}  // namespace

bool LooksLikeZip(const uint8_t* data, size_t size) {
  uint32_t magic = 0;
  if (size < sizeof(magic)) return false;
  std::memcpy(&magic, data, sizeof(magic));
  return magic == kLocalHeader;
}

const ZipEntry* ZipArchive::Find(std::string_view name) const {
  for (const ZipEntry& e : entries_) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

Result<ZipArchive> ZipArchive::Read(const uint8_t* data, size_t size, const std::string& where) {
  const Reader r(data, size, where);
  VISALIGN_ASSIGN_OR_RETURN(Directory dir, FindDirectory(r));
  if (!r.Has(dir.offset, dir.bytes)) return r.Bad("the central directory lies outside the file");
  if (dir.entries > dir.bytes / kCentralHeaderBytes) {
    return r.Bad(fmt::format("{} entries cannot fit a {}-byte central directory", dir.entries, dir.bytes));
  }
  ZipArchive archive;
  archive.entries_.reserve(dir.entries);
  std::unordered_map<std::string, size_t> seen;
  uint64_t pos = dir.offset;
  const uint64_t dir_end = dir.offset + dir.bytes;
  for (uint64_t i = 0; i < dir.entries; ++i) {
    if (pos + kCentralHeaderBytes > dir_end || r.At<uint32_t>(pos) != kCentralHeader) {
      return r.Bad(fmt::format("central directory entry {} is damaged", i + 1));
    }
    const auto flags = r.At<uint16_t>(pos + 8);
    const auto method = r.At<uint16_t>(pos + 10);
    uint64_t compressed = r.At<uint32_t>(pos + 20);
    uint64_t entry_size = r.At<uint32_t>(pos + 24);
    const auto name_bytes = r.At<uint16_t>(pos + 28);
    const auto extra_bytes = r.At<uint16_t>(pos + 30);
    const auto comment_bytes = r.At<uint16_t>(pos + 32);
    uint64_t local = r.At<uint32_t>(pos + 42);
    const uint64_t name_at = pos + kCentralHeaderBytes;
    const uint64_t next = name_at + name_bytes + extra_bytes + comment_bytes;
    if (next > dir_end) return r.Bad(fmt::format("central directory entry {} runs past the directory", i + 1));
    ZipEntry entry;
    entry.name.assign(reinterpret_cast<const char*>(data + name_at), name_bytes);
    VISALIGN_RETURN_IF_ERROR(ApplyZip64Extra(r, name_at + name_bytes, extra_bytes, entry_size, compressed, local));
    if ((flags & kFlagEncrypted) != 0 || method != kMethodStored || compressed != entry_size) {
      return Status::Unsupported(
          fmt::format("zip entry {} is compressed or encrypted (method {})", QuoteText(entry.name), method), where,
          "stored (uncompressed) entries, as torch.save writes them");
    }
    if (!r.Has(local, kLocalHeaderBytes) || r.At<uint32_t>(local) != kLocalHeader) {
      return r.Bad(fmt::format("the local header of zip entry {} lies outside the file", QuoteText(entry.name)));
    }
    const uint64_t start = local + kLocalHeaderBytes + r.At<uint16_t>(local + 26) + r.At<uint16_t>(local + 28);
    if (!r.Has(start, entry_size)) {
      return r.Bad(
          fmt::format("zip entry {} ({} bytes) runs past the end of the file", QuoteText(entry.name), entry_size));
    }
    if (!seen.emplace(entry.name, i).second)
      return r.Bad(fmt::format("zip entry {} appears twice", QuoteText(entry.name)));
    entry.data = data + start;
    entry.size = entry_size;
    archive.entries_.push_back(std::move(entry));
    pos = next;
  }
  return archive;
}

}  // namespace visalign::clip
