// The directory backend: imports images made elsewhere, validating each one.
#include <array>

#include <fmt/format.h>

#include "visalign/backends/backends.h"
#include "visalign/core/io.h"

namespace visalign::backends {
namespace {
namespace fs = std::filesystem;

constexpr std::array<const char*, 4> kExtensions = {"png", "jpg", "jpeg", "webp"};

class DirectoryBackend final : public GenerationBackend {
 public:
  explicit DirectoryBackend(fs::path dir) : dir_(std::move(dir)) {}

  // The folder stays in the identity: it is all there is to tell one imported model from another.
  nlohmann::json Identity() const override { return {{"backend", "directory"}, {"path", fs::absolute(dir_).string()}}; }
  nlohmann::json Connection() const override { return nlohmann::json::object(); }

  Attempt<GeneratedImage> Generate(const GenerationRequest& request, const std::atomic<bool>&) override {
    std::vector<std::string> stems = {request.item_id + "__" + std::to_string(request.k)};
    if (request.k == 0) stems.push_back(request.item_id);
    for (const std::string& stem : stems) {
      for (const char* ext : kExtensions) {
        fs::path p = dir_ / (stem + "." + ext);
        std::error_code ec;
        if (!fs::is_regular_file(p, ec)) continue;
        auto bytes = ReadFile(p);
        if (!bytes.ok()) return Attempt<GeneratedImage>::Fail({ErrorKind::kLocal, bytes.status().ToString(), {}});
        auto format = ValidateImageBytes(*bytes, p.string());
        if (!format.ok()) return Attempt<GeneratedImage>::Fail({ErrorKind::kLocal, format.error.message, {}});
        return Attempt<GeneratedImage>::Ok({std::move(*bytes), *format.value});
      }
    }
    return Attempt<GeneratedImage>::Fail(
        {ErrorKind::kLocal,
         fmt::format("no image for item {} sample {} in {} (looked for {}.png{})", request.item_id, request.k,
                     dir_.string(), stems[0], request.k == 0 ? " and " + request.item_id + ".png, .jpg, .webp" : ", .jpg, .webp"),
         {}});
  }

 private:
  fs::path dir_;
};

}  // namespace

Result<std::unique_ptr<GenerationBackend>> MakeDirectoryBackend(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return Status::NotFound("not a directory: " + dir.string(), "import folder", "a folder of <id>.png or <id>__<k>.png images");
  return std::unique_ptr<GenerationBackend>(std::make_unique<DirectoryBackend>(dir));
}

}  // namespace visalign::backends
