// MatrixFile: named 2-d matrices in safetensors, on top of the validating reader and the writer.
#include <fmt/format.h>

#include <limits>

#include "clip/safetensors.h"
#include "visalign/clip.h"
#include "visalign/core/untrusted.h"

namespace visalign::clip {

Result<MatrixFile> ReadMatrixFile(const std::filesystem::path& path) {
  VISALIGN_ASSIGN_OR_RETURN(SafetensorsFile file, SafetensorsFile::Open(path));
  MatrixFile out;
  out.metadata = file.metadata();
  for (const TensorInfo& t : file.tensors()) {
    if (t.shape.size() != 2) {
      return Status::InvalidArgument("tensor " + QuoteText(t.name) + " has shape " + t.ShapeString(), path.string(),
                                     "2-d tensors [rows, dims]");
    }
    // Matrix sizes are int; a dimension beside a 0 can be any size without any data bytes.
    if (t.shape[0] > std::numeric_limits<int>::max() || t.shape[1] > std::numeric_limits<int>::max()) {
      return Status::InvalidArgument("tensor " + QuoteText(t.name) + " has shape " + t.ShapeString(), path.string(),
                                     "at most 2147483647 rows and dims");
    }
    Matrix m(static_cast<int>(t.shape[0]), static_cast<int>(t.shape[1]));
    Result<std::vector<float>> values = SafetensorsFile::ToFloat(t, path.string() + " tensor " + t.name);
    if (!values.ok()) return values.status();
    m.data = std::move(values).value();
    out.matrices.emplace(t.name, std::move(m));
  }
  return out;
}

Status WriteMatrixFile(const std::filesystem::path& path, const MatrixFile& file) {
  std::vector<NamedTensor> tensors;
  for (const auto& [name, m] : file.matrices) tensors.push_back({name, {m.rows, m.cols}, m.data});
  return WriteSafetensors(path, std::move(tensors), file.metadata);
}

}  // namespace visalign::clip
