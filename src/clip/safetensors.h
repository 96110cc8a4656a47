// A validating, memory-mapped reader for the safetensors format:
//   8-byte little-endian header length N | N bytes of JSON header | raw little-endian tensor data.
// The header maps names to {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the
// data section) plus an optional "__metadata__" string map. Open() checks everything that can be
// checked without reading tensor values: JSON syntax, field types, known dtypes, byte sizes vs
// shapes, offsets inside the file, and that tensors tile the data section with no gaps or overlaps
// (as the reference implementation requires). Truncated or lying files are kCorrupt errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "visalign/core/status.h"

namespace visalign::clip {

// A read-only private mapping of a whole regular file; `kind` names the format in errors ("safetensors").
struct FileMapping {
  void* data = nullptr;
  size_t size = 0;
};
Result<FileMapping> MapFileReadOnly(const std::filesystem::path& path, std::string_view kind);

enum class DType { kF64, kF32, kF16, kBF16, kI64, kI32, kI16, kI8, kU8, kBool };

std::string_view DTypeName(DType dtype);
size_t DTypeSize(DType dtype);

struct TensorInfo {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;  // points into the mapping
  size_t nbytes = 0;

  int64_t NumElements() const;
  std::string ShapeString() const;  // "[3, 64, 64]"
};

class SafetensorsFile {
 public:
  static Result<SafetensorsFile> Open(const std::filesystem::path& path);
  // A tensor file of another format (a PyTorch checkpoint, clip/torch_checkpoint.h) presented as this
  // class: owns `mapping` (unmapped on destruction) and `owned`; every tensor's data points into one.
  static SafetensorsFile Adopt(std::filesystem::path path, FileMapping mapping, std::vector<TensorInfo> tensors,
                               std::vector<std::vector<uint8_t>> owned);

  SafetensorsFile() = default;  // an empty file with no tensors
  SafetensorsFile(SafetensorsFile&&) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&&) noexcept;
  ~SafetensorsFile();

  const std::filesystem::path& path() const { return path_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // nullptr when absent.
  const TensorInfo* Find(std::string_view name) const;

  // Values of a floating-point tensor (F32/F16/BF16/F64) as f32; kUnsupported for other dtypes.
  static Result<std::vector<float>> ToFloat(const TensorInfo& tensor, const std::string& where);
  // Values of an integer tensor (I64/I32/I16/I8/U8) as int64.
  static Result<std::vector<int64_t>> ToInt64(const TensorInfo& tensor, const std::string& where);
  // The tensor's f32 values in place (no copy) when it is F32 and 4-byte aligned, else nullptr.
  static const float* DirectF32(const TensorInfo& tensor);
  // Drops the resident pages that lie wholly inside [data, data + bytes) of the mapping (they are
  // read back from the file if touched again): for tensors whose values were converted at load.
  void ReleasePages(const void* data, size_t bytes) const;

 private:
  void Unmap();

  std::filesystem::path path_;
  void* map_ = nullptr;
  size_t map_size_ = 0;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
  std::vector<std::vector<uint8_t>> owned_;  // Adopt: tensors copied out of the mapping
};

// One F32 tensor to write.
struct NamedTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> values;
};

// Writes F32 tensors as a safetensors file (sorted by name, header padded to 8 bytes), atomically.
// Used to generate test and benchmark models.
Status WriteSafetensors(const std::filesystem::path& path, std::vector<NamedTensor> tensors,
                        const std::map<std::string, std::string>& metadata = {});

// The name and shape of one F32 tensor to write.
struct TensorShape {
  std::string name;
  std::vector<int64_t> shape;

  int64_t NumElements() const;
};
// Writes the NumElements() values of `tensor` to `values`.
using TensorFill = std::function<void(const TensorShape& tensor, float* values)>;

// The same with values produced by `fill`, one tensor at a time in name order (memory: the file
// plus one tensor, never a second copy of all values). Names must be unique. The bytes depend only on
// the names, shapes, values and metadata.
Status WriteSafetensors(const std::filesystem::path& path, std::vector<TensorShape> tensors, const TensorFill& fill,
                        const std::map<std::string, std::string>& metadata = {});

}  // namespace visalign::clip
