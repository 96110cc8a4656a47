// What every tensor a checkpoint reader accepts must satisfy (the safetensors and torch_checkpoint
// harnesses): its byte size matches its shape and dtype, and it converts to exactly its element count.
#pragma once

#include <string>

#include "clip/safetensors.h"
#include "fuzz/fuzz_support.h"

namespace visalign::fuzz {

inline void CheckTensorsConvert(const clip::SafetensorsFile& file, const std::string& where) {
  using clip::DType;
  for (const auto& tensor : file.tensors()) {
    VISALIGN_FUZZ_CHECK(tensor.NumElements() >= 0);
    VISALIGN_FUZZ_CHECK(tensor.nbytes == static_cast<size_t>(tensor.NumElements()) * clip::DTypeSize(tensor.dtype));
    const bool floating = tensor.dtype == DType::kF64 || tensor.dtype == DType::kF32 || tensor.dtype == DType::kF16 ||
                          tensor.dtype == DType::kBF16;
    if (floating) {
      const auto values = clip::SafetensorsFile::ToFloat(tensor, where);
      VISALIGN_FUZZ_CHECK(values.ok() && values->size() == static_cast<size_t>(tensor.NumElements()));
    } else {
      const auto values = clip::SafetensorsFile::ToInt64(tensor, where);
      CheckErrorLine(values.status());
      if (values.ok()) VISALIGN_FUZZ_CHECK(values->size() == static_cast<size_t>(tensor.NumElements()));
    }
  }
}

}  // namespace visalign::fuzz
