// Static figures: the report page in export mode is opened by headless Chromium, whose vega code
// writes each figure's SVG and PNG (base64) into the DOM; --dump-dom hands the DOM back.
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>

#include "report/page.h"
#include "visalign/core/base64.h"

namespace visalign::report {
namespace {
namespace fs = std::filesystem;

// Long enough for a few hundred figures; Chromium stops earlier once the page is idle.
constexpr int kVirtualTimeBudgetMs = 600000;

std::string ShellQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The text of <pre data-figure="id" data-format="format">...</pre> in the dumped DOM.
std::optional<std::string> ExportedText(const std::string& dom, const std::string& id, std::string_view format) {
  const std::string open = fmt::format("<pre data-figure=\"{}\" data-format=\"{}\">", internal::EscapeHtml(id), format);
  const size_t begin = dom.find(open);
  if (begin == std::string::npos) return std::nullopt;
  const size_t end = dom.find("</pre>", begin);
  if (end == std::string::npos) return std::nullopt;
  return dom.substr(begin + open.size(), end - begin - open.size());
}

struct TempDir {
  fs::path path;
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

}  // namespace

Status ExportFigures(const Report& report, const fs::path& dir, FigureFormat format, const fs::path& chromium) {
  const std::string where = "chromium " + chromium.string();
  const std::string expected = "Debian's chromium package (scripts/setup.sh installs it)";
  std::error_code ec;
  if (!fs::exists(chromium, ec)) return Status::Unavailable("not installed", where, expected);
  VISALIGN_RETURN_IF_ERROR(EnsureDirectory(dir));
  std::string pattern = (fs::temp_directory_path() / "visalign-report-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) return Status::IoError("cannot create a temporary folder", pattern);
  TempDir temp{pattern};
  const fs::path page = temp.path / "figures.html";
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(page, internal::RenderPage(report, /*export_mode=*/true)));
  const std::string command = fmt::format(
      "{} --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update "
      "--disable-sync --disable-quic --no-first-run --hide-scrollbars --user-data-dir={} --virtual-time-budget={} "
      "--dump-dom {} 2>{}",
      ShellQuote(chromium.string()), ShellQuote((temp.path / "profile").string()), kVirtualTimeBudgetMs,
      ShellQuote("file://" + page.string()), ShellQuote((temp.path / "chromium.log").string()));
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return Status::Unavailable("cannot be started", where, expected);
  std::string dom;
  char buffer[65536];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) dom.append(buffer, n);
  const int status = pclose(pipe);
  if (status != 0 || dom.find("data-rendered=\"true\"") == std::string::npos) {
    Result<std::string> log = ReadFile(temp.path / "chromium.log");
    std::string last;
    if (log.ok())
      for (std::string_view line : SplitLines(*log))
        if (!line.empty()) last = line;
    return Status::Unavailable(status != 0
                                   ? fmt::format("exited with status {}: {}", WEXITSTATUS(status), last)
                                   : "the figures did not render" + (last.empty() ? std::string() : ": " + last),
                               where, expected);
  }
  for (const Figure& figure : report.figures) {
    for (const auto& [wanted, extension] :
         {std::pair{FigureFormat::kSvg, "svg"}, std::pair{FigureFormat::kPng, "png"}}) {
      if (format != wanted && format != FigureFormat::kBoth) continue;
      const std::optional<std::string> text = ExportedText(dom, figure.id, extension);
      const std::optional<std::string> bytes = text ? DecodeBase64(*text) : std::nullopt;
      if (!bytes) return Status::Internal(fmt::format("figure {} came back without its {}", figure.id, extension));
      VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(dir / (figure.id + "." + extension), *bytes));
    }
  }
  return Status::Ok();
}

}  // namespace visalign::report
