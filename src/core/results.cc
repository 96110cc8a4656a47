#include "visalign/core/results.h"

#include "visalign/core/io.h"
#include "visalign/core/version.h"

namespace visalign {

std::string_view VisalignVersion() { return kVersion; }

nlohmann::ordered_json ResultsHeader(std::string_view benchmark) {
  nlohmann::ordered_json j;
  j["benchmark"] = std::string(benchmark);
  j["schema_version"] = kResultsSchemaVersion;
  j["visalign_version"] = std::string(VisalignVersion());
  return j;
}

std::string MarkdownWarning(std::string_view text) { return "**Warning:** " + std::string(text) + "\n\n"; }

Result<nlohmann::ordered_json> FileFingerprint(const std::filesystem::path& path) {
  VISALIGN_ASSIGN_OR_RETURN(std::string sha256, Sha256File(path));
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  nlohmann::ordered_json j;
  j["path"] = (ec ? path : absolute).lexically_normal().string();
  j["sha256"] = sha256;
  return j;
}

nlohmann::ordered_json InputFingerprint(const std::string& source) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(source, ec)) return {{"source", source}};
  Result<nlohmann::ordered_json> fingerprint = FileFingerprint(source);
  if (!fingerprint.ok()) return {{"path", source}, {"sha256", nullptr}};
  return *std::move(fingerprint);
}

}  // namespace visalign
