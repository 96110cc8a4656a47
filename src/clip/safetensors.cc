#include "clip/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <utility>

#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/core/untrusted.h"

namespace visalign::clip {
namespace {

constexpr size_t kHeaderLengthBytes = 8;
// The reference implementation refuses headers above 100 MB; so do we (a lying length would
// otherwise make us parse garbage).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct DTypeEntry {
  std::string_view name;
  DType dtype;
  size_t size;
};
constexpr std::array<DTypeEntry, 10> kDTypes{{
    {"F64", DType::kF64, 8},
    {"F32", DType::kF32, 4},
    {"F16", DType::kF16, 2},
    {"BF16", DType::kBF16, 2},
    {"I64", DType::kI64, 8},
    {"I32", DType::kI32, 4},
    {"I16", DType::kI16, 2},
    {"I8", DType::kI8, 1},
    {"U8", DType::kU8, 1},
    {"BOOL", DType::kBool, 1},
}};

const DTypeEntry& Entry(DType dtype) {
  for (const auto& e : kDTypes) {
    if (e.dtype == dtype) return e;
  }
  return kDTypes[1];
}

template <typename T>
T LoadLittleEndian(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));  // x86-64 and every platform we build for are little-endian
  return v;
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x3FFu;
  uint32_t bits;
  if (exponent == 0x1Fu) {
    bits = sign | 0x7F800000u | (mantissa << 13);  // inf / nan
  } else if (exponent != 0) {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;  // signed zero
  } else {
    // Subnormal half: normalise the mantissa.
    int e = -1;
    do {
      ++e;
      mantissa <<= 1;
    } while ((mantissa & 0x400u) == 0);
    bits = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mantissa & 0x3FFu) << 13);
  }
  return std::bit_cast<float>(bits);
}

Status Bad(const std::string& what, const std::filesystem::path& path, const std::string& expected) {
  return Status::Corrupt(what, path.string(), expected);
}

}  // namespace

std::string_view DTypeName(DType dtype) { return Entry(dtype).name; }
size_t DTypeSize(DType dtype) { return Entry(dtype).size; }

int64_t TensorInfo::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string TensorInfo::ShapeString() const {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

SafetensorsFile::SafetensorsFile(SafetensorsFile&& other) noexcept { *this = std::move(other); }

SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&& other) noexcept {
  if (this != &other) {
    Unmap();
    path_ = std::move(other.path_);
    map_ = std::exchange(other.map_, nullptr);
    map_size_ = std::exchange(other.map_size_, 0);
    tensors_ = std::move(other.tensors_);
    metadata_ = std::move(other.metadata_);
    owned_ = std::move(other.owned_);
  }
  return *this;
}

SafetensorsFile::~SafetensorsFile() { Unmap(); }

void SafetensorsFile::Unmap() {
  if (map_ != nullptr) munmap(map_, map_size_);
  map_ = nullptr;
  map_size_ = 0;
}

const TensorInfo* SafetensorsFile::Find(std::string_view name) const {
  for (const auto& t : tensors_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

void SafetensorsFile::ReleasePages(const void* data, size_t bytes) const {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const auto map_begin = reinterpret_cast<uintptr_t>(map_);
  if (map_ == nullptr || begin < map_begin || begin + bytes > map_begin + map_size_) return;
  const uintptr_t first = (begin + page - 1) / page * page;
  const uintptr_t last = (begin + bytes) / page * page;
  // Advice only: a failure leaves the pages resident, which is harmless.
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

Result<FileMapping> MapFileReadOnly(const std::filesystem::path& path, std::string_view kind) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Status::NotFound(fmt::format("cannot open {} file: {}", kind, std::strerror(errno)), path.string(),
                            fmt::format("an existing readable {} file", kind));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::IoError("not a regular file", path.string(), fmt::format("a {} file", kind));
  }
  FileMapping mapping;
  mapping.size = static_cast<size_t>(st.st_size);
  if (mapping.size == 0) {
    ::close(fd);
    return Status::Corrupt("file is 0 bytes, too short", path.string(), fmt::format("a {} file", kind));
  }
  mapping.data = mmap(nullptr, mapping.size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (mapping.data == MAP_FAILED) {
    return Status::IoError("cannot memory-map file: " + std::string(std::strerror(errno)), path.string(),
                           "a readable regular file");
  }
  return mapping;
}

SafetensorsFile SafetensorsFile::Adopt(std::filesystem::path path, FileMapping mapping, std::vector<TensorInfo> tensors,
                                       std::vector<std::vector<uint8_t>> owned) {
  SafetensorsFile file;
  file.path_ = std::move(path);
  file.map_ = mapping.data;
  file.map_size_ = mapping.size;
  file.tensors_ = std::move(tensors);
  file.owned_ = std::move(owned);
  return file;
}

Result<SafetensorsFile> SafetensorsFile::Open(const std::filesystem::path& path) {
  VISALIGN_ASSIGN_OR_RETURN(FileMapping mapping, MapFileReadOnly(path, "safetensors"));
  const uint64_t file_size = mapping.size;
  SafetensorsFile file;
  file.path_ = path;
  file.map_ = mapping.data;
  file.map_size_ = mapping.size;
  if (file_size < kHeaderLengthBytes) {
    return Bad("file is " + std::to_string(file_size) + " bytes, too short for a safetensors header", path,
               "8-byte header length + JSON header + data");
  }
  const auto* base = static_cast<const uint8_t*>(mapping.data);

  const uint64_t header_len = LoadLittleEndian<uint64_t>(base);
  if (header_len > kMaxHeaderBytes || header_len > file_size - kHeaderLengthBytes) {
    return Bad(
        "header length " + std::to_string(header_len) + " exceeds the file (" + std::to_string(file_size) + " bytes)",
        path, "a complete safetensors file (truncated or not safetensors?)");
  }
  const std::string_view header_text(reinterpret_cast<const char*>(base + kHeaderLengthBytes), header_len);
  auto parsed = ParseJson(header_text);
  if (!parsed.ok() || !parsed->is_object()) {
    return Bad("header is not a JSON object" + (parsed.ok() ? std::string() : " (" + parsed.status().what() + ")"),
               path, "a JSON object mapping tensor names to {dtype, shape, data_offsets}");
  }
  const Json& header = *parsed;
  const uint64_t data_start = kHeaderLengthBytes + header_len;
  const uint64_t data_size = file_size - data_start;

  for (const auto& [name, entry] : header.items()) {
    const std::string where_field = "header entry " + QuoteText(name);
    if (name == "__metadata__") {
      if (!entry.is_object()) return Bad(where_field + " is not an object", path, "a map of strings");
      for (const auto& [k, v] : entry.items()) {
        if (!v.is_string())
          return Bad(where_field + " key " + QuoteText(k) + " is not a string", path, "string values");
        file.metadata_[k] = v.get<std::string>();
      }
      continue;
    }
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") || !entry.contains("data_offsets")) {
      return Bad(where_field + " lacks dtype/shape/data_offsets", path, "{\"dtype\", \"shape\", \"data_offsets\"}");
    }
    const auto& dtype_json = entry["dtype"];
    const auto& shape_json = entry["shape"];
    const auto& offsets_json = entry["data_offsets"];
    TensorInfo info;
    info.name = name;
    bool known = false;
    if (dtype_json.is_string()) {
      for (const auto& e : kDTypes) {
        if (e.name == dtype_json.get<std::string>()) {
          info.dtype = e.dtype;
          known = true;
        }
      }
    }
    if (!known) {
      return Status::Unsupported(where_field + " has dtype " + QuoteJson(dtype_json), path.string(),
                                 "one of F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL");
    }
    if (!shape_json.is_array()) return Bad(where_field + " shape is not an array", path, "a list of sizes");
    uint64_t numel = 1;
    for (const auto& d : shape_json) {
      if (!d.is_number_unsigned())
        return Bad(where_field + " has shape " + QuoteJson(shape_json), path, "non-negative integer sizes");
      const uint64_t dim = d.get<uint64_t>();
      if (dim != 0 && numel > std::numeric_limits<uint64_t>::max() / 16 / dim) {
        return Bad(where_field + " has an absurd shape " + QuoteJson(shape_json), path,
                   "a shape that fits in the file");
      }
      numel *= dim;
      info.shape.push_back(static_cast<int64_t>(dim));
    }
    if (!offsets_json.is_array() || offsets_json.size() != 2 || !offsets_json[0].is_number_unsigned() ||
        !offsets_json[1].is_number_unsigned()) {
      return Bad(where_field + " has data_offsets " + QuoteJson(offsets_json), path, "[begin, end] byte offsets");
    }
    const uint64_t begin = offsets_json[0].get<uint64_t>();
    const uint64_t end = offsets_json[1].get<uint64_t>();
    if (begin > end || end > data_size) {
      return Bad(where_field + " data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                     "] lie outside the data section (" + std::to_string(data_size) + " bytes)",
                 path, "offsets within the file (truncated file?)");
    }
    const uint64_t expected_bytes = numel * DTypeSize(info.dtype);
    if (end - begin != expected_bytes) {
      return Bad(where_field + " has " + std::to_string(end - begin) + " bytes of data but shape " +
                     QuoteJson(shape_json) + " " + std::string(DTypeName(info.dtype)) + " needs " +
                     std::to_string(expected_bytes),
                 path, "data_offsets matching dtype and shape");
    }
    info.data = base + data_start + begin;
    info.nbytes = static_cast<size_t>(end - begin);
    file.tensors_.push_back(std::move(info));
  }

  // Tensors must tile the data section exactly: sorted by offset, each starts where the last ended.
  std::vector<const TensorInfo*> by_offset;
  for (const auto& t : file.tensors_) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](const TensorInfo* a, const TensorInfo* b) {
    return a->data < b->data || (a->data == b->data && a->nbytes < b->nbytes);
  });
  const uint8_t* expected_next = base + data_start;
  for (const TensorInfo* t : by_offset) {
    if (t->data != expected_next) {
      return Bad("tensor " + QuoteText(t->name) + " starts at data offset " +
                     std::to_string(t->data - (base + data_start)) + " but the previous tensor ends at " +
                     std::to_string(expected_next - (base + data_start)),
                 path, "tensors stored contiguously without gaps or overlaps");
    }
    expected_next = t->data + t->nbytes;
  }
  if (expected_next != base + file_size) {
    return Bad("tensors cover " + std::to_string(expected_next - (base + data_start)) + " of " +
                   std::to_string(data_size) + " data bytes",
               path, "a data section exactly as long as the tensors in the header");
  }
  return file;
}

Result<std::vector<float>> SafetensorsFile::ToFloat(const TensorInfo& t, const std::string& where) {
  const auto n = static_cast<size_t>(t.NumElements());
  std::vector<float> out(n);
  switch (t.dtype) {
    case DType::kF32:
      if (n > 0) std::memcpy(out.data(), t.data, n * sizeof(float));  // an empty vector's data() may be null
      break;
    case DType::kF16:
      for (size_t i = 0; i < n; ++i) out[i] = HalfToFloat(LoadLittleEndian<uint16_t>(t.data + 2 * i));
      break;
    case DType::kBF16:
      for (size_t i = 0; i < n; ++i) {
        out[i] = std::bit_cast<float>(static_cast<uint32_t>(LoadLittleEndian<uint16_t>(t.data + 2 * i)) << 16);
      }
      break;
    case DType::kF64:
      for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(LoadLittleEndian<double>(t.data + 8 * i));
      break;
    default:
      return Status::Unsupported("tensor " + QuoteText(t.name) + " has dtype " + std::string(DTypeName(t.dtype)), where,
                                 "a floating-point tensor (F32, F16, BF16, F64)");
  }
  return out;
}

Result<std::vector<int64_t>> SafetensorsFile::ToInt64(const TensorInfo& t, const std::string& where) {
  const auto n = static_cast<size_t>(t.NumElements());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    switch (t.dtype) {
      case DType::kI64:
        out[i] = LoadLittleEndian<int64_t>(t.data + 8 * i);
        break;
      case DType::kI32:
        out[i] = LoadLittleEndian<int32_t>(t.data + 4 * i);
        break;
      case DType::kI16:
        out[i] = LoadLittleEndian<int16_t>(t.data + 2 * i);
        break;
      case DType::kI8:
        out[i] = static_cast<int8_t>(t.data[i]);
        break;
      case DType::kU8:
        out[i] = t.data[i];
        break;
      default:
        return Status::Unsupported("tensor " + QuoteText(t.name) + " has dtype " + std::string(DTypeName(t.dtype)),
                                   where, "an integer tensor (I64, I32, I16, I8, U8)");
    }
  }
  return out;
}

const float* SafetensorsFile::DirectF32(const TensorInfo& t) {
  if (t.dtype != DType::kF32 || reinterpret_cast<uintptr_t>(t.data) % alignof(float) != 0) return nullptr;
  return reinterpret_cast<const float*>(t.data);
}

int64_t TensorShape::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Status WriteSafetensors(const std::filesystem::path& path, std::vector<TensorShape> tensors, const TensorFill& fill,
                        const std::map<std::string, std::string>& metadata) {
  constexpr size_t kHeaderAlignment = 8;
  std::sort(tensors.begin(), tensors.end(), [](const TensorShape& a, const TensorShape& b) { return a.name < b.name; });
  Json header = Json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorShape& t = tensors[i];
    if (i > 0 && tensors[i - 1].name == t.name) {
      return Status::InvalidArgument("tensor " + QuoteText(t.name) + " appears twice", path.string(),
                                     "unique tensor names");
    }
    const uint64_t bytes = static_cast<uint64_t>(t.NumElements()) * sizeof(float);
    header[t.name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  // __metadata__ first, tensors by name, each {dtype, shape, data_offsets} as Python's safetensors
  // writes them: the bytes of every file visalign wrote before (random-model pins their SHA-256).
  std::string header_text = header.dump();
  header_text.append((kHeaderAlignment - header_text.size() % kHeaderAlignment) % kHeaderAlignment, ' ');
  const uint64_t header_len = header_text.size();
  const size_t data_start = kHeaderLengthBytes + header_text.size();
  std::string out(data_start + offset, '\0');
  std::memcpy(out.data(), &header_len, sizeof(header_len));
  std::memcpy(out.data() + kHeaderLengthBytes, header_text.data(), header_text.size());
  char* data = out.data() + data_start;
  for (const TensorShape& t : tensors) {
    std::vector<float> values(static_cast<size_t>(t.NumElements()));
    fill(t, values.data());
    if (!values.empty()) std::memcpy(data, values.data(), values.size() * sizeof(float));
    data += values.size() * sizeof(float);
  }
  return WriteFileAtomic(path, out);
}

Status WriteSafetensors(const std::filesystem::path& path, std::vector<NamedTensor> tensors,
                        const std::map<std::string, std::string>& metadata) {
  std::vector<TensorShape> shapes;
  std::map<std::string, const std::vector<float>*> values;
  for (const NamedTensor& t : tensors) {
    TensorShape shape{t.name, t.shape};
    if (static_cast<uint64_t>(shape.NumElements()) != t.values.size()) {
      return Status::InvalidArgument(
          "tensor " + QuoteText(t.name) + " has " + std::to_string(t.values.size()) + " values", path.string(),
          "as many values as its shape holds");
    }
    values[t.name] = &t.values;
    shapes.push_back(std::move(shape));
  }
  return WriteSafetensors(
      path, std::move(shapes),
      [&](const TensorShape& t, float* out) { std::copy(values.at(t.name)->begin(), values.at(t.name)->end(), out); },
      metadata);
}

}  // namespace visalign::clip
