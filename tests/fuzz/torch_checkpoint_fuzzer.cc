// PyTorch checkpoints as a downloaded .bin reaches the loader: a zip archive goes through
// ReadTorchCheckpoint (zip directory, restricted unpickler, state-dict interpretation); any other
// input is unpickled directly with the state-dict allow-list, so the fuzzer reaches every opcode
// without having to build a zip first. Every accepted tensor must convert to exactly its element count.
#include <string>

#include "clip/pickle.h"
#include "clip/torch_checkpoint.h"
#include "clip/zip_archive.h"
#include "fuzz/fuzz_support.h"
#include "fuzz/tensor_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!visalign::clip::LooksLikeZip(data, size)) {
    static const visalign::clip::GlobalAllowList kAllowed = {
        {"collections OrderedDict", visalign::clip::GlobalUse::kEmptyDict},
        {"torch._utils _rebuild_tensor_v2", visalign::clip::GlobalUse::kCall},
        {"torch FloatStorage", visalign::clip::GlobalUse::kValue}};
    const auto pickle = visalign::clip::Unpickle(visalign::fuzz::AsText(data, size), kAllowed, "fuzz.pkl");
    visalign::fuzz::CheckErrorLine(pickle.status());
    if (pickle.ok()) VISALIGN_FUZZ_CHECK(pickle->root < pickle->values.size());
    return 0;
  }
  const auto file = visalign::clip::ReadTorchCheckpoint(data, size, "fuzz.bin");
  visalign::fuzz::CheckErrorLine(file.status());
  if (!file.ok()) return 0;
  visalign::fuzz::CheckTensorsConvert(*file, "fuzz.bin");
  return 0;
}
