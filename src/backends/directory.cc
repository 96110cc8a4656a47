// The directory backend: imports images made elsewhere, validating each one.
#include <map>

#include <fmt/format.h>

#include "visalign/backends/backends.h"
#include "visalign/core/io.h"
#include "visalign/imaging/image.h"

namespace visalign::backends {
namespace {
namespace fs = std::filesystem;

// The folder's image files by stem (the name without its extension, case kept): for each stem the
// file of the best-ranked extension (imaging::ImageFileExtensionRank: png, jpg, jpeg, webp, any case).
using ImageIndex = std::map<std::string, std::pair<int, fs::path>>;

Result<ImageIndex> IndexFolder(const fs::path& dir) {
  ImageIndex index;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    const int rank = imaging::ImageFileExtensionRank(p.extension().string());
    if (rank < 0 || !it->is_regular_file(ec)) continue;
    auto [slot, inserted] = index.try_emplace(p.stem().string(), rank, p);
    if (!inserted && (rank < slot->second.first || (rank == slot->second.first && p < slot->second.second)))
      slot->second = {rank, p};
  }
  if (ec)
    return Status::IoError("cannot list " + dir.string() + ": " + ec.message(), "import folder", "a readable folder");
  return index;
}

class DirectoryBackend final : public GenerationBackend {
 public:
  DirectoryBackend(fs::path dir, ImageIndex index) : dir_(std::move(dir)), index_(std::move(index)) {}

  // The folder stays in the identity: it is all there is to tell one imported model from another.
  Json Identity() const override { return {{"backend", "directory"}, {"path", fs::absolute(dir_).string()}}; }
  Json Connection() const override { return Json::object(); }

  Attempt<GeneratedImage> Generate(const GenerationRequest& request, const std::atomic<bool>&) override {
    std::vector<std::string> stems = {request.item_id + "__" + std::to_string(request.k)};
    if (request.k == 0) stems.push_back(request.item_id);
    for (const std::string& stem : stems) {
      auto found = index_.find(stem);
      if (found == index_.end()) continue;
      const fs::path& p = found->second.second;
      auto bytes = ReadFile(p);
      if (!bytes.ok()) return Attempt<GeneratedImage>::Fail({ErrorKind::kLocal, bytes.status().ToString(), {}});
      auto format = ValidateImageBytes(*bytes, p.string());
      if (!format.ok()) return Attempt<GeneratedImage>::Fail({ErrorKind::kLocal, format.error.message, {}});
      return Attempt<GeneratedImage>::Ok({std::move(*bytes), *format.value});
    }
    return Attempt<GeneratedImage>::Fail(
        {ErrorKind::kLocal,
         fmt::format("no image for item {} sample {} in {} (looked for {}{}.png, .jpg, .jpeg or .webp in any case)",
                     request.item_id, request.k, dir_.string(), stems[0],
                     request.k == 0 ? " or " + request.item_id : std::string()),
         {}});
  }

 private:
  fs::path dir_;
  ImageIndex index_;
};

}  // namespace

Result<std::unique_ptr<GenerationBackend>> MakeDirectoryBackend(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return Status::NotFound("not a directory: " + dir.string(), "import folder",
                            "a folder of <id>.png or <id>__<k>.png images");
  VISALIGN_ASSIGN_OR_RETURN(ImageIndex index, IndexFolder(dir));
  if (index.empty())
    return Status::NotFound("no .png, .jpg, .jpeg or .webp file in " + dir.string(), "import folder",
                            "a folder of <id>.png or <id>__<k>.png images (any case of the extension)");
  return std::unique_ptr<GenerationBackend>(std::make_unique<DirectoryBackend>(dir, std::move(index)));
}

}  // namespace visalign::backends
