// The safetensors reader, as a model file downloaded from a hub reaches it: Open() validates the
// header and layout; every tensor it accepts must then convert without reading past its bytes.
#include <string>

#include "clip/safetensors.h"
#include "fuzz/fuzz_support.h"

using visalign::clip::DType;
using visalign::clip::SafetensorsFile;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = visalign::fuzz::WriteScratchFile("model.safetensors", visalign::fuzz::AsText(data, size));
  const auto file = SafetensorsFile::Open(path);
  visalign::fuzz::CheckErrorLine(file.status());
  if (!file.ok()) return 0;
  for (const auto& tensor : file->tensors()) {
    VISALIGN_FUZZ_CHECK(tensor.NumElements() >= 0);
    const bool floating = tensor.dtype == DType::kF64 || tensor.dtype == DType::kF32 || tensor.dtype == DType::kF16 ||
                          tensor.dtype == DType::kBF16;
    if (floating) {
      const auto values = SafetensorsFile::ToFloat(tensor, path.string());
      VISALIGN_FUZZ_CHECK(values.ok() && values->size() == static_cast<size_t>(tensor.NumElements()));
    } else {
      const auto values = SafetensorsFile::ToInt64(tensor, path.string());
      visalign::fuzz::CheckErrorLine(values.status());
      if (values.ok()) VISALIGN_FUZZ_CHECK(values->size() == static_cast<size_t>(tensor.NumElements()));
    }
    VISALIGN_FUZZ_CHECK(tensor.nbytes == static_cast<size_t>(tensor.NumElements()) * visalign::clip::DTypeSize(tensor.dtype));
  }
  return 0;
}
