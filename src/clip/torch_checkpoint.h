// PyTorch checkpoints read natively and safely: the zip format torch.save writes (since torch 1.6):
// `<stem>/data.pkl` (the pickled object), `<stem>/data/<key>` (each storage's raw little-endian bytes),
// `<stem>/version`. The pickle goes through the restricted unpickler (clip/pickle.h) with only the
// globals a state dict needs, so a hostile file is refused naming its global and nothing runs. The
// object is a state dict ({name: tensor}) or a training checkpoint ({"state_dict": {...}, ...},
// whose DistributedDataParallel "module." prefixes are stripped; its other keys are ignored).
// Tensors are views into the mapped file when contiguous, copies otherwise (F32/F16/BF16/F64 and
// the integer dtypes, as safetensors). The legacy pre-zip format (torch < 1.6) is refused in one line.
// Internal to the clip module.
#pragma once

#include <filesystem>

#include "clip/safetensors.h"

namespace visalign::clip {

// Reads a PyTorch zip checkpoint. kInvalidArgument for a forbidden global or opcode, kCorrupt for a
// damaged archive or pickle, kUnsupported for something a state dict never holds (a compressed
// entry, the legacy format, a tensor subclass).
Result<SafetensorsFile> OpenTorchCheckpoint(const std::filesystem::path& path);

// The same from bytes already in memory (the fuzz harness); tensors point into `bytes`.
Result<SafetensorsFile> ReadTorchCheckpoint(const uint8_t* bytes, size_t size, const std::string& where);

// A weights file of either format, by its first bytes: a zip archive is a PyTorch checkpoint, a pickle
// the legacy PyTorch format (refused), anything else safetensors.
Result<SafetensorsFile> OpenWeightsFile(const std::filesystem::path& path);

}  // namespace visalign::clip
