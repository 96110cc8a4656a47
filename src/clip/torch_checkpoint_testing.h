// Byte-level writers of torch.save-like files for tests: a stored zip archive and the pickle opcodes
// of a state dict, so a test can make the variants the fixtures do not cover (float16, strided views,
// parameters, damaged files) without PyTorch. Used by the clip module's tests and the examples' fake Hub.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace visalign::clip::testing {

inline std::string LittleEndian(uint64_t v, int bytes) {
  std::string s;
  for (int i = 0; i < bytes; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  return s;
}

// A zip archive of stored entries (no compression, no alignment padding), as zipfile would write.
inline std::string StoredZip(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string out;
  std::string directory;
  for (const auto& [name, data] : entries) {
    const uint64_t offset = out.size();
    const std::string sizes = LittleEndian(0, 4) + LittleEndian(data.size(), 4) + LittleEndian(data.size(), 4);
    out += LittleEndian(0x04034b50, 4) + LittleEndian(20, 2) + LittleEndian(0, 2) + LittleEndian(0, 2) +
           LittleEndian(0, 4) + sizes + LittleEndian(name.size(), 2) + LittleEndian(0, 2) + name + data;
    directory += LittleEndian(0x02014b50, 4) + LittleEndian(20, 2) + LittleEndian(20, 2) + LittleEndian(0, 2) +
                 LittleEndian(0, 2) + LittleEndian(0, 4) + sizes + LittleEndian(name.size(), 2) + LittleEndian(0, 2) +
                 LittleEndian(0, 2) + LittleEndian(0, 2) + LittleEndian(0, 2) + LittleEndian(0, 4) +
                 LittleEndian(offset, 4) + name;
  }
  const uint64_t directory_at = out.size();
  out += directory;
  out += LittleEndian(0x06054b50, 4) + LittleEndian(0, 2) + LittleEndian(0, 2) + LittleEndian(entries.size(), 2) +
         LittleEndian(entries.size(), 2) + LittleEndian(directory.size(), 4) + LittleEndian(directory_at, 4) +
         LittleEndian(0, 2);
  return out;
}

// Pickle protocol 2 pieces, spelled as torch.save emits them.
inline std::string PickleString(const std::string& s) { return "X" + LittleEndian(s.size(), 4) + s; }
inline std::string PickleInt(int64_t i) { return "J" + LittleEndian(static_cast<uint64_t>(i), 4); }
inline std::string PickleIntTuple(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (int64_t i : v) s += PickleInt(i);
  return s + "t";
}
inline const std::string kPickleOrderedDict = "ccollections\nOrderedDict\n)R";

// torch._utils._rebuild_tensor_v2(storage data/<key> of `storage_type` with `numel` elements,
// offset, shape, stride, False, OrderedDict()).
inline std::string PickleTensor(const std::string& storage_type, const std::string& key, int64_t numel, int64_t offset,
                                const std::vector<int64_t>& shape, const std::vector<int64_t>& stride) {
  return "ctorch._utils\n_rebuild_tensor_v2\n((" + PickleString("storage") + "ctorch\n" + storage_type + "\n" +
         PickleString(key) + PickleString("cpu") + PickleInt(numel) + "tQ" + PickleInt(offset) + PickleIntTuple(shape) +
         PickleIntTuple(stride) + "\x89" + kPickleOrderedDict + "tR";
}

// A state dict pickle: OrderedDict with the given (name, pickled tensor) items.
inline std::string PickleStateDict(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string s = "\x80\x02" + kPickleOrderedDict + "(";
  for (const auto& [name, tensor] : items) s += PickleString(name) + tensor;
  return s + "u.";
}

inline std::string FloatBytes(const std::vector<float>& v) {
  std::string s(v.size() * sizeof(float), '\0');
  std::memcpy(s.data(), v.data(), s.size());
  return s;
}

}  // namespace visalign::clip::testing
