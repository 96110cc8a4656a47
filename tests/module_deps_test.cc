// The module rules of docs/architecture.md ("Modules are folders"), checked on the source tree:
//   - a module's public headers (include/visalign/<module>{.h,/}) include only its own headers and
//     those of the modules its CMake DEPS name (what its users are linked with);
//   - its sources include only its own, DEPS and PRIVATE_DEPS headers, and its tests (*_test.cc) only
//     what the test program links (those, TEST_DEPS and everything they bring);
//   - every module in DEPS and PRIVATE_DEPS is included somewhere (the list is exact, not a superset);
//   - a private (src/) header is included only by its own module, except backends/curl_library.h,
//     which the target visalign_curl_headers publishes; tests also include tests/testing/.
// The build enforces the last rule too (each module's include path holds only its own folder of
// src/, cmake/VisalignHelpers.cmake); this test names the file and the DEPS entry to fix.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "testing/dirs.h"

namespace visalign {
namespace {

namespace fs = std::filesystem;

struct Module {
  fs::path dir;                        // src/<name>
  std::set<std::string> deps;          // modules named by DEPS
  std::set<std::string> private_deps;  // modules named by PRIVATE_DEPS
  std::set<std::string> test_links;    // modules a test program links besides those (TEST_DEPS)
  bool curl_headers = false;           // links visalign_curl_headers (backends/curl_library.h)
};

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The module a CMake target names: visalign_benchmarks_hues -> benchmarks/hues; the test-support
// libraries (tests/CMakeLists.txt) -> the modules they link; "" for a third-party target.
std::set<std::string> ModulesOfTarget(const std::string& target, const std::map<std::string, Module>& modules) {
  static const std::map<std::string, std::set<std::string>> kTesting = {
      {"visalign_testing", {"core"}},
      {"visalign_testing_store", {"core", "store"}},
      {"visalign_testing_postgres", {"core"}},
      {"visalign_testing_backends", {"core", "backends"}},
      {"visalign_testing_serve", {"core"}}};
  if (auto it = kTesting.find(target); it != kTesting.end()) return it->second;
  for (const auto& [name, m] : modules) {
    std::string t = "visalign_" + name;
    std::replace(t.begin(), t.end(), '/', '_');
    if (t == target) return {name};
  }
  return {};
}

// Every visalign_module(...) call under src/.
std::map<std::string, Module> ReadModules(const fs::path& root) {
  std::map<std::string, Module> modules;
  std::map<std::string, std::map<std::string, std::vector<std::string>>> lists;  // module -> keyword -> targets
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(root / "src")) {
    if (e.path().filename() != "CMakeLists.txt") continue;
    const std::string text = Slurp(e.path());
    const size_t call = text.find("visalign_module(");
    if (call == std::string::npos) continue;
    std::istringstream args(text.substr(call + 16, text.find(')', call) - call - 16));
    std::string name, word, keyword;
    args >> name;
    while (args >> word) {
      if (word == "DEPS" || word == "PRIVATE_DEPS" || word == "TEST_DEPS")
        keyword = word;
      else
        lists[name][keyword].push_back(word);
    }
    modules[name].dir = e.path().parent_path();
  }
  for (auto& [name, m] : modules) {
    for (const std::string& t : lists[name]["DEPS"])
      for (const std::string& d : ModulesOfTarget(t, modules)) m.deps.insert(d);
    for (const std::string& t : lists[name]["PRIVATE_DEPS"]) {
      for (const std::string& d : ModulesOfTarget(t, modules)) m.private_deps.insert(d);
      if (t == "visalign_curl_headers") m.curl_headers = true;
    }
    for (const std::string& t : lists[name]["TEST_DEPS"])
      for (const std::string& d : ModulesOfTarget(t, modules)) m.test_links.insert(d);
  }
  return modules;
}

// The module whose public header `include` ("visalign/...") is, or "" when no module has it.
std::string ModuleOfHeader(const std::string& include, const std::map<std::string, Module>& modules) {
  const std::string path = include.substr(std::string("visalign/").size());
  std::string best;
  for (const auto& [name, m] : modules)
    if ((path == name + ".h" || path.rfind(name + "/", 0) == 0) && name.size() > best.size()) best = name;
  return best;
}

// Modules reachable from `start` through DEPS (what linking them brings).
std::set<std::string> Closure(std::set<std::string> start, const std::map<std::string, Module>& modules) {
  std::vector<std::string> todo(start.begin(), start.end());
  while (!todo.empty()) {
    const std::string m = todo.back();
    todo.pop_back();
    for (const std::string& d : modules.at(m).deps)
      if (start.insert(d).second) todo.push_back(d);
  }
  return start;
}

// The quoted includes of `file` ("..." of each `#include "..."` line).
std::vector<std::string> Includes(const fs::path& file) {
  std::vector<std::string> out;
  std::istringstream in(Slurp(file));
  for (std::string line; std::getline(in, line);) {
    const size_t hash = line.find_first_not_of(" \t");
    if (hash == std::string::npos || line.compare(hash, 10, "#include \"") != 0) continue;
    const size_t close = line.find('"', hash + 10);
    if (close != std::string::npos) out.push_back(line.substr(hash + 10, close - hash - 10));
  }
  return out;
}

bool IsTestFile(const fs::path& f) { return f.filename().string().ends_with("_test.cc"); }

// The module's tests and the private headers only they include (test_support.h, store_contract.h,
// *_testing.h): what a test program compiles, held to the test program's links.
std::set<fs::path> TestFiles(const std::vector<fs::path>& files) {
  std::set<fs::path> tests;
  for (const fs::path& f : files)
    if (IsTestFile(f)) tests.insert(f);
  for (const fs::path& header : files) {
    if (header.extension() != ".h") continue;
    bool by_test = false, by_product = false;
    for (const fs::path& f : files) {
      if (f == header) continue;
      for (const std::string& inc : Includes(f))
        if (fs::path(inc).filename() == header.filename()) (IsTestFile(f) ? by_test : by_product) = true;
    }
    if (by_test && !by_product) tests.insert(header);
  }
  return tests;
}

// Every broken rule, one line each: "<file>: includes <header> ...".
std::vector<std::string> ModuleDependencyProblems(const fs::path& root) {
  const std::map<std::string, Module> modules = ReadModules(root);
  std::vector<std::string> problems;
  const auto rel = [&](const fs::path& f) { return f.lexically_relative(root).generic_string(); };
  for (const auto& [name, m] : modules) {
    std::vector<fs::path> files;
    for (const fs::path& pub : {root / "include/visalign" / (name + ".h"), root / "include/visalign" / name}) {
      if (fs::is_regular_file(pub)) files.push_back(pub);
      if (fs::is_directory(pub))
        for (const fs::directory_entry& e : fs::recursive_directory_iterator(pub)) files.push_back(e.path());
    }
    const size_t n_public = files.size();
    for (const fs::directory_entry& e : fs::directory_iterator(m.dir))
      if (e.path().extension() == ".cc" || e.path().extension() == ".h" || e.path().extension() == ".inc")
        files.push_back(e.path());
    std::set<std::string> used;
    std::set<std::string> test_allowed = m.deps;
    test_allowed.insert(m.private_deps.begin(), m.private_deps.end());
    test_allowed.insert(m.test_links.begin(), m.test_links.end());
    test_allowed = Closure(test_allowed, modules);
    std::sort(files.begin() + static_cast<std::ptrdiff_t>(n_public), files.end());
    const std::set<fs::path> tests = TestFiles({files.begin() + static_cast<std::ptrdiff_t>(n_public), files.end()});
    for (size_t i = 0; i < files.size(); ++i) {
      const fs::path& f = files[i];
      const bool is_public = i<n_public, is_test = tests.count(f)> 0;
      for (const std::string& inc : Includes(f)) {
        if (inc.rfind("visalign/", 0) == 0) {
          const std::string target = ModuleOfHeader(inc, modules);
          if (target.empty()) {
            if (!fs::exists(root / "include" / inc) && inc != "visalign/core/version.h")
              problems.push_back(rel(f) + ": includes " + inc + ", which no module has");
            continue;
          }
          if (target == name) continue;
          const bool allowed = is_public ? m.deps.count(target) > 0
                               : is_test ? test_allowed.count(target) > 0
                                         : m.deps.count(target) > 0 || m.private_deps.count(target) > 0;
          if (!allowed)
            problems.push_back(rel(f) + ": includes " + inc + " of module " + target + ", which " +
                               (is_public ? "DEPS"
                                : is_test ? "the test program's links"
                                          : "DEPS and PRIVATE_DEPS") +
                               " of " + name + " omit");
          if (!is_test) used.insert(target);
          continue;
        }
        if (fs::exists(f.parent_path() / inc)) continue;  // beside the including file
        if (inc.rfind(name + "/", 0) == 0) continue;      // the module's own folder of src/
        if (is_test && inc.rfind("testing/", 0) == 0) continue;
        if (inc == "backends/curl_library.h" && m.curl_headers) {
          if (!is_test) used.insert("backends");  // the loader's code is in backends
          continue;
        }
        problems.push_back(rel(f) + ": includes " + inc + ", a private header of another module");
      }
    }
    std::set<std::string> listed = m.deps;
    listed.insert(m.private_deps.begin(), m.private_deps.end());
    for (const std::string& d : listed)
      if (!used.count(d))
        problems.push_back(rel(m.dir / "CMakeLists.txt") + ": " + name + " lists " + d +
                           " in DEPS or PRIVATE_DEPS but none of its headers or sources include it");
  }
  return problems;
}

std::string Lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

TEST(ModuleDeps, EveryIncludeOfEveryModuleMatchesItsCmakeDeps) {
  const fs::path root = testing::DataDir().parent_path();
  ASSERT_TRUE(fs::is_regular_file(root / "src/core/CMakeLists.txt")) << root;
  EXPECT_GE(ReadModules(root).size(),
            13u);  // core color imaging stats clip store backends hub 3 benchmarks report server
  const std::vector<std::string> problems = ModuleDependencyProblems(root);
  EXPECT_TRUE(problems.empty()) << Lines(problems);
}

// A small tree with one of each mistake: the check names each, and accepts what is allowed.
TEST(ModuleDeps, NamesEachBrokenRule) {
  testing::TempDir dir;
  const fs::path root = dir.path();
  const auto write = [&](const std::string& rel, const std::string& text) {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text;
  };
  write("src/core/CMakeLists.txt", "visalign_module(core DEPS fmt::fmt)\n");
  write("src/core/io.cc", "#include \"visalign/core/io.h\"\n#include \"core/internal.h\"\n");
  write("src/core/internal.h", "\n");
  write("include/visalign/core/io.h", "#include <string>\n");
  write("src/color/CMakeLists.txt", "visalign_module(color DEPS visalign_core)\n");
  write("src/color/parse.cc", "#include \"visalign/color.h\"\n#include \"visalign/clip.h\"\n");
  write("src/color/parse_test.cc", "#include \"testing/dirs.h\"\n#include \"visalign/core/io.h\"\n");
  write("include/visalign/color.h", "#include \"visalign/core/io.h\"\n");
  write("src/clip/CMakeLists.txt", "visalign_module(clip DEPS visalign_core visalign_color)\n");
  write("src/clip/model.cc", "#include \"core/internal.h\"\n#include \"visalign/core/io.h\"\n");
  write("include/visalign/clip.h", "\n");
  const std::vector<std::string> problems = ModuleDependencyProblems(root);
  EXPECT_EQ(
      problems,
      (std::vector<std::string>{
          "src/clip/model.cc: includes core/internal.h, a private header of another module",
          "src/clip/CMakeLists.txt: clip lists color in DEPS or PRIVATE_DEPS but none of its headers or sources "
          "include it",
          "src/color/parse.cc: includes visalign/clip.h of module clip, which DEPS and PRIVATE_DEPS of color omit",
      }))
      << Lines(problems);
}

}  // namespace
}  // namespace visalign
