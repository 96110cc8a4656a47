#include "visalign/core/results.h"

#include "visalign/core/io.h"
#include "visalign/core/version.h"

namespace visalign {

std::string_view VisalignVersion() { return kVersion; }

Json ResultsHeader(std::string_view benchmark) {
  Json j;
  j["benchmark"] = std::string(benchmark);
  j["schema_version"] = kResultsSchemaVersion;
  j["visalign_version"] = std::string(VisalignVersion());
  return j;
}

std::string MarkdownWarning(std::string_view text) { return "**Warning:** " + std::string(text) + "\n\n"; }

Result<Json> FileFingerprint(const std::filesystem::path& path) {
  VISALIGN_ASSIGN_OR_RETURN(std::string sha256, Sha256File(path));
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  Json j;
  j["path"] = (ec ? path : absolute).lexically_normal().string();
  j["sha256"] = sha256;
  return j;
}

Json InputFingerprint(const std::string& source) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(source, ec)) return {{"source", source}};
  Result<Json> fingerprint = FileFingerprint(source);
  if (!fingerprint.ok()) return {{"path", source}, {"sha256", nullptr}};
  return *std::move(fingerprint);
}

}  // namespace visalign
