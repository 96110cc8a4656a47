// Reading named tensors of a CLIP checkpoint with shape checks, converting to f32 (zero copy for
// aligned F32), and refusing files with tensors no tower asked for. Shared by the loaders of every
// tower (weights.cc, resnet.cc, convnext.cc). Internal to the clip module.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "clip/safetensors.h"
#include "clip/towers.h"

namespace visalign::clip {

// Tensors that may be present in a checkpoint but are not parameters of the forward pass.
inline const std::set<std::string>& IgnorableTensors() {
  static const std::set<std::string> kNames = {"text_model.embeddings.position_ids",
                                               "vision_model.embeddings.position_ids", "input_resolution",
                                               "context_length", "vocab_size"};
  return kNames;
}

class WeightLoader {
 public:
  explicit WeightLoader(const SafetensorsFile& file) : file_(file) {}

  // The tensor `name` with exactly `shape` as f32.
  Result<Tensor> Get(const std::string& name, const std::vector<int64_t>& shape) {
    const TensorInfo* t = file_.Find(name);
    if (t == nullptr) {
      return Status::InvalidArgument("missing tensor \"" + name + "\"", file_.path().string(),
                                     "all parameters of this config's towers (wrong layout or model?)");
    }
    used_.insert(name);
    if (t->shape != shape) {
      TensorInfo expected;
      expected.shape = shape;
      return Status::InvalidArgument("tensor \"" + name + "\" has shape " + t->ShapeString(), file_.path().string(),
                                     "shape " + expected.ShapeString() + " from the model config");
    }
    Tensor out;
    out.shape = shape;
    if (const float* direct = SafetensorsFile::DirectF32(*t)) {
      out.data = direct;
    } else {
      VISALIGN_ASSIGN_OR_RETURN(out.owned, SafetensorsFile::ToFloat(*t, file_.path().string()));
      out.data = out.owned.data();
    }
    return out;
  }

  // A linear layer `name`.weight [out, in] (kNK) and, with `bias`, `name`.bias [out].
  Result<LinearWeights> Linear(const std::string& name, int64_t out, int64_t in, bool bias = true) {
    LinearWeights lin;
    VISALIGN_ASSIGN_OR_RETURN(lin.weight, Get(name + ".weight", {out, in}));
    if (bias) {
      VISALIGN_ASSIGN_OR_RETURN(lin.bias, Get(name + ".bias", {out}));
    }
    lin.layout = BLayout::kNK;
    return lin;
  }

  // name.weight and name.bias [width]: a LayerNorm's gain and bias.
  Status Norm(const std::string& name, int64_t width, Tensor& gain, Tensor& bias) {
    VISALIGN_ASSIGN_OR_RETURN(gain, Get(name + ".weight", {width}));
    VISALIGN_ASSIGN_OR_RETURN(bias, Get(name + ".bias", {width}));
    return Status::Ok();
  }

  // Rows of several [n_i, ...] tensors stacked into one (HF q/k/v -> fused in_proj).
  Result<Tensor> Stack(const std::vector<std::string>& names, const std::vector<int64_t>& part_shape) {
    Tensor out;
    out.shape = part_shape;
    out.shape[0] *= static_cast<int64_t>(names.size());
    for (const auto& n : names) {
      VISALIGN_ASSIGN_OR_RETURN(Tensor part, Get(n, part_shape));
      out.owned.insert(out.owned.end(), part.data, part.data + Count(part_shape));
    }
    out.data = out.owned.data();
    return out;
  }

  // Rows [begin, begin + rows) of the tensor `name` of `shape` (HF's fused in_proj of SigLIP's
  // pooling head -> timm's separate q and kv): a view for zero-copy tensors, else a copy.
  Result<Tensor> Rows(const std::string& name, const std::vector<int64_t>& shape, int64_t begin, int64_t rows) {
    VISALIGN_ASSIGN_OR_RETURN(Tensor full, Get(name, shape));
    const size_t row_values = Count(shape) / static_cast<size_t>(shape[0]);
    Tensor out;
    out.shape = shape;
    out.shape[0] = rows;
    const float* first = full.data + static_cast<size_t>(begin) * row_values;
    if (full.owned.empty()) {
      out.data = first;
    } else {
      out.owned.assign(first, first + static_cast<size_t>(rows) * row_values);
      out.data = out.owned.data();
    }
    return out;
  }

  bool Has(const std::string& name) const { return file_.Find(name) != nullptr; }

  // Accepts `name` without reading it (a tensor the forward pass does not use, e.g. BatchNorm's
  // num_batches_tracked); it need not be present.
  void Skip(const std::string& name) { used_.insert(name); }
  // Skip() for every tensor whose name starts with `prefix` (a module the forward pass does not run,
  // e.g. CoCa's text_decoder.).
  void SkipPrefix(const std::string& prefix) {
    for (const auto& t : file_.tensors()) {
      if (t.name.rfind(prefix, 0) == 0) used_.insert(t.name);
    }
  }

  Status CheckAllUsed() const {
    std::vector<std::string> unexpected;
    for (const auto& t : file_.tensors()) {
      if (!used_.count(t.name) && !IgnorableTensors().count(t.name)) unexpected.push_back(t.name);
    }
    if (unexpected.empty()) return Status::Ok();
    return Status::Unsupported(
        fmt::format("unexpected tensor \"{}\" ({} unexpected in total)", unexpected.front(), unexpected.size()),
        file_.path().string(),
        "only the parameters of the towers this config describes (other architectures are not supported)");
  }

  static size_t Count(const std::vector<int64_t>& shape) {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    return n;
  }

 private:
  const SafetensorsFile& file_;
  std::set<std::string> used_;
};

}  // namespace visalign::clip
