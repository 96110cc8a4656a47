// The entries of a zip archive held in memory (a memory-mapped PyTorch checkpoint), read from its
// central directory (zip64 included, as torch.save writes files over 4 GiB). Only stored
// (uncompressed) entries are readable, which is what torch.save writes; an entry's bytes are a view
// into the buffer. Every offset and size is checked against the buffer, so a truncated or lying
// archive is a kCorrupt error, never an out-of-bounds read. Internal to the clip module.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "visalign/core/status.h"

namespace visalign::clip {

struct ZipEntry {
  std::string name;
  const uint8_t* data = nullptr;  // into the archive's buffer
  uint64_t size = 0;
};

class ZipArchive {
 public:
  // `where` names the archive in errors.
  static Result<ZipArchive> Read(const uint8_t* data, size_t size, const std::string& where);

  const std::vector<ZipEntry>& entries() const { return entries_; }
  // nullptr when absent.
  const ZipEntry* Find(std::string_view name) const;

 private:
  std::vector<ZipEntry> entries_;
};

// Whether `data` starts like a zip archive (a local file header).
bool LooksLikeZip(const uint8_t* data, size_t size);

}  // namespace visalign::clip
