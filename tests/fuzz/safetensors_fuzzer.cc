// The safetensors reader, as a model file downloaded from a hub reaches it: Open() validates the
// header and layout; every tensor it accepts must then convert without reading past its bytes.
#include <string>

#include "clip/safetensors.h"
#include "fuzz/fuzz_support.h"
#include "fuzz/tensor_checks.h"

using visalign::clip::SafetensorsFile;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = visalign::fuzz::WriteScratchFile("model.safetensors", visalign::fuzz::AsText(data, size));
  const auto file = SafetensorsFile::Open(path);
  visalign::fuzz::CheckErrorLine(file.status());
  if (!file.ok()) return 0;
  visalign::fuzz::CheckTensorsConvert(*file, path.string());
  return 0;
}
