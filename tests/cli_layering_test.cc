// The command line stays thin (docs/architecture.md, "The CLI only parses, calls the library and
// prints"): every file of src/cli/ is scanned for what only a library module may do.
//  - Includes: src/cli/ includes its own headers ("cli/...") and public headers ("visalign/..."),
//    never a module's private header ("store/sqlite_store.h", "backends/provider.h", ...) nor the
//    third-party libraries the modules keep inside (SQLite, libpq, curl, cpp-httplib, OpenCV).
//  - Orchestration: the run store's coordination protocol (claims, leases, cache entries, row
//    completions), work selection and reuse rules, polling loops, the results contract's header and
//    inputs, and assembling summary.json's keys belong to the modules, where they are unit-tested
//    with the fault-injecting store; a command that needs them calls the library function that
//    does it (hues::RunModelsFolder, acva::RunPipeline, backends::PlanGeneration, ...).
// A line may name a forbidden word in a comment; only code is checked.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "testing/dirs.h"
#include "visalign/core/io.h"

namespace visalign {
namespace {
namespace fs = std::filesystem;

struct Rule {
  const char* pattern;
  const char* why;
};

const Rule kRules[] = {
    {R"(#include\s*"(?!cli/|visalign/)[^"]*")", "a private header of a module (only \"cli/...\" and \"visalign/...\")"},
    {R"(#include\s*<(sqlite3|libpq-fe|curl/curl|httplib|opencv2/[^>]*)\.h(pp)?>)", "a library a module keeps inside"},
    {R"(\b(ClaimCacheKeys|RenewCacheLeases|ReleaseCacheLeases|CacheLeaseRenewer|ClaimRows|RenewLeases|ReleaseLeases)\b)",
     "the store's lease protocol (a scheduler belongs in its module)"},
    {R"(\b(CacheGet|CachePut|MarkDone|MarkFailure|MarkRefused|AddItems)\s*\()",
     "writing rows or cache entries of the store"},
    {R"(\b(SelectWork|CheckRunReuse)\s*\()",
     "the generation runner's selection and reuse rules (backends::PlanGeneration)"},
    {R"(\bsleep_for\b|\bsleep_until\b)", "a polling loop"},
    {R"(\b(ResultsHeader|AnalysisInputsJson|JudgeSettingsJson|FileFingerprint|InputFingerprint)\s*\()",
     "results-contract content (the benchmark's summary builds it)"},
    {R"(\bCompareWithEarlierRun\s*\()", "the reuse rule of prediction folders (hues::DecidePredictionRun)"},
    {R"(\bDoneImages\s*\()", "reading a run's images (violin::CollectRunImages, store::ExportRun)"},
    {R"(\b(AnalyzeRuns|ReadGenerationStates)\s*\()", "chaining the ACVA stages (acva::RunPipeline)"},
    {R"(\bsummary\s*\[\s*"[^"]*"\s*\]\s*(=[^=]|\.update\b|\.push_back\b|\.emplace))", "assembling summary.json's keys"},
};

// Code of a line: without a // comment, and string and character literals emptied ("" and ''),
// so a help text or a comment may mention a forbidden word.
std::string CodeOf(const std::string& line) {
  std::string code;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '/' && i + 1 < line.size() && line[i + 1] == '/') break;
    if (c == '"' || c == '\'') {
      size_t j = i + 1;
      while (j < line.size() && line[j] != c) j += line[j] == '\\' ? 2 : 1;
      code += c;
      code += c;
      i = j;
      continue;
    }
    code += c;
  }
  return code;
}

// Every rule a source's lines break, as "file:line: why: line".
std::vector<std::string> Violations(const std::string& file, const std::string& text) {
  static const std::vector<std::regex> patterns = [] {
    std::vector<std::regex> compiled;
    for (const Rule& rule : kRules) compiled.emplace_back(rule.pattern, std::regex::optimize);
    return compiled;
  }();
  std::vector<std::string> found;
  size_t number = 0;
  for (std::string_view line_view : SplitLines(text)) {
    ++number;
    const std::string line(line_view);
    const std::string code = line.starts_with("#include") ? line : CodeOf(line);
    for (size_t r = 0; r < patterns.size(); ++r)
      if (std::regex_search(code, patterns[r]))
        found.push_back(file + ":" + std::to_string(number) + ": " + kRules[r].why + ": " + line);
  }
  return found;
}

TEST(CliLayering, TheRulesCatchWhatTheyForbid) {
  EXPECT_EQ(Violations("x.cc", "#include \"store/sqlite_store.h\"\n").size(), 1u);
  EXPECT_EQ(Violations("x.cc", "#include <libpq-fe.h>\n").size(), 1u);
  EXPECT_EQ(Violations("x.cc", "  auto c = shared->ClaimCacheKeys(ns, owner, {key}, ttl);\n").size(), 1u);
  EXPECT_EQ(Violations("x.cc", "  std::this_thread::sleep_for(kPoll);\n").size(), 1u);
  EXPECT_EQ(Violations("x.cc", "  result.summary[\"inputs\"] = Inputs();\n").size(), 1u);
  EXPECT_EQ(Violations("x.cc", "  auto todo = backends::SelectWork(rows, work, retry, where, plan);\n").size(), 1u);
  EXPECT_EQ(
      Violations("x.cc", "  auto result = acva::AnalyzeRuns(store, set, states, outcome, model, options);\n").size(),
      1u);
  // Allowed: public and own headers, reading a summary's key, a word in a comment or a help text.
  EXPECT_TRUE(
      Violations("x.cc", "#include \"visalign/store.h\"\n#include \"cli/cli.h\"\n#include <fmt/format.h>\n").empty());
  EXPECT_TRUE(
      Violations("x.cc", "  const auto& n = report.summary[\"counts\"];\n  if (summary[\"a\"] == 1) {}\n").empty());
  EXPECT_TRUE(Violations("x.cc", "  // the lead's ClaimCacheKeys loop lives in hues::RunModelsFolder\n").empty());
  EXPECT_TRUE(Violations("x.cc", "  cmd->footer(\"waits (sleep_for) between polls\");\n").empty());
}

TEST(CliLayering, NoCommandFileDoesWhatOnlyALibraryModuleMay) {
  const fs::path cli = testing::DataDir().parent_path() / "src" / "cli";
  size_t files = 0;
  std::vector<std::string> found;
  for (const fs::directory_entry& e : fs::directory_iterator(cli)) {
    const std::string ext = e.path().extension().string();
    if (ext != ".cc" && ext != ".h") continue;
    ++files;
    Result<std::string> text = ReadFile(e.path());
    ASSERT_TRUE(text.ok()) << text.status().ToString();
    for (std::string& v : Violations(e.path().filename().string(), *text)) found.push_back(std::move(v));
  }
  EXPECT_GT(files, 20u) << "src/cli/ was not found at " << cli;
  std::string list;
  for (const std::string& v : found) list += "\n  " + v;
  EXPECT_TRUE(found.empty()) << "move this logic into its module and call it from the command:" << list;
}

}  // namespace
}  // namespace visalign
