// The test fixture of tests/examples_test.cc and tests/help_examples_test.cc: the base sandbox set up
// once per program (examples_sandbox.h's kSetup, with the Hub and embedding-server imitations and the
// environment every example gets), and the runner of groups of examples, each group (one file or one
// --help) in order in its own copy of the base, two groups at a time (CI has 2 cores).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "examples_sandbox.h"
#include "examples_support.h"
#include "hub/fake_hub_testing.h"
#include "testing/dirs.h"
#include "testing/examples.h"
#include "testing/postgres_server.h"

namespace visalign::testing::examples {

struct GroupResult {
  std::string log;  // the group's progress lines
  std::string failures, synopses;
  int ran = 0;
};

// Runs the examples of one group in order in a fresh copy of what they name from `base`.
inline GroupResult RunGroup(const std::vector<Example>& examples, const fs::path& base,
                            const std::map<std::string, std::string>& env) {
  GroupResult out;
  const auto group_started = std::chrono::steady_clock::now();
  TempDir dir;
  Sandbox box(dir.path(), env);
  std::string group_text;  // every command of the group (and its exports) as it will run
  for (const Example& e : examples) {
    for (const std::string& x : e.exports) group_text += Substitute(x) + "\n";
    group_text += Substitute(e.command) + "\n";
  }
  CopyBase(base, dir.path(), group_text);
  std::set<std::string> servers;
  if (std::string why = Provide(box, group_text, servers); !why.empty()) {
    out.failures = examples.front().group + ": " + why + "\n";
    return out;
  }
  for (const Example& e : examples) {
    if (!e.synopsis.empty()) {
      out.synopses += "  " + e.where + ": " + e.command + "  (" + e.synopsis + ")\n";
      continue;
    }
    ++out.ran;
    auto started = std::chrono::steady_clock::now();
    std::string command = Substitute(e.command), prefix;
    for (const std::string& x : e.exports) prefix += Substitute(x) + "; ";
    const std::string why = RunCommand(box, prefix, command);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    char took[32];
    std::snprintf(took, sizeof took, " (%.1f s): ", seconds);
    out.log += e.where + took + (why.empty() ? "ok" : "FAILED: " + why) + "\n";
    if (!why.empty()) out.failures += e.where + ": " + e.command + "\n    ran: " + command + "\n    " + why + "\n";
  }
  char took[64];
  std::snprintf(took, sizeof took, " (%.1f s in all)\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - group_started).count());
  out.log = "group " + examples.front().group + took + out.log;
  return out;
}

class ExamplesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    base_ = new TempDir();
    hub_ = new hub::testing::FakeHub();
    AddHubRepositories(*hub_);
    ASSERT_TRUE(hub_->Start().ok());
    embeddings_ = new EmbeddingServer();
    ASSERT_TRUE(embeddings_->Start().ok());
    std::string bin = fs::path(VISALIGN_TEST_BINARY).parent_path().string();
    env_ = {{"PATH", (base_->path() / "bin").string() + ":" + bin + ":" + std::getenv("PATH")},
            {"VISALIGN_SOURCE_DATA", DataDir().string()},
            {"VISALIGN_SHARED", SharedDir().string()},
            {"VISALIGN_BASE", base_->path().string()},
            // API-key variables the examples name: dummies (the local imitations take any key, and the
            // providers' imitations check these).
            {"OPENAI_API_KEY", "sk-dummy"},
            {"GEMINI_API_KEY", "gemini-dummy"},
            {"BFL_API_KEY", "bfl-dummy"},
            {"DASHSCOPE_API_KEY", "dashscope-dummy"},
            {"STUDY_ADMIN_TOKEN", "dummy-admin-token-0123456789"},
            {"REPLICATE_API_TOKEN", "r8-dummy"},
            {"FAL_KEY", "fal-dummy"},
            {"ARK_API_KEY", "ark-dummy"},
            {"ZHIPUAI_API_KEY", "zhipu-dummy"},
            // The worker examples run scripts/workers/diffusers_worker.py over the test's fake pipeline
            // (its documented seam; diffusers is not installed here): mid-grey images.
            {"VISALIGN_PIPELINE_FACTORY",
             (DataDir().parent_path() / "tests/data/workers/fake_pipeline.py").string() + ":load"},
            // Never the real Hub: the local imitation with the fixture repositories.
            {"HF_ENDPOINT", hub_->url()},
            {"HF_TOKEN", ""},
            {"HF_HUB_OFFLINE", ""},
            {"EMBEDDINGS_ENDPOINT", embeddings_->url()}};
    auto started = std::chrono::steady_clock::now();
    {
      Sandbox setup(base_->path(), env_);
      std::set<std::string> servers;
      for (const char* line : kSetup) {
        const std::string command = Substitute(line);
        const std::string provided = Provide(setup, command, servers);
        ASSERT_EQ(provided, "") << "sandbox set-up `" << line << "`";
        const std::string why = RunCommand(setup, "", command);
        ASSERT_EQ(why, "") << "sandbox set-up `" << line << "` ran as `" << command << "`";
      }
    }
    std::cout << "sandbox set up in "
              << std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() << " s" << std::endl;
  }
  static void TearDownTestSuite() {
    delete base_;
    delete hub_;
    delete embeddings_;
  }
  // Runs `examples` (in collection order) group by group, two groups at a time, the largest
  // groups first so the workers end together; prints each group's log as it ends and what ran.
  // Returns every failure, one entry per failing example ("" when all ran).
  static std::string RunExamples(const std::vector<Example>& examples);
  // Fails unless the collector found more than kMinExamples in `source` (fewer: it broke) and every
  // one of them runs, listing the failing ones.
  static void ExpectEveryExampleRuns(const std::vector<Example>& examples, const std::string& source) {
    ASSERT_GT(examples.size(), kMinExamples) << "the collector found too few examples in " << source;
    const std::string failures = RunExamples(examples);
    EXPECT_EQ(failures, "") << "failing examples:\n" << failures;
  }
  static constexpr size_t kMinExamples = 100;

  inline static TempDir* base_ = nullptr;
  inline static hub::testing::FakeHub* hub_ = nullptr;
  inline static EmbeddingServer* embeddings_ = nullptr;
  inline static std::map<std::string, std::string> env_;
};

inline std::string ExamplesTest::RunExamples(const std::vector<Example>& examples) {
  const char* only = std::getenv("VISALIGN_EXAMPLES_ONLY");  // a regex over `group`, to rerun some
  std::vector<std::vector<Example>> groups;
  for (const Example& e : examples) {
    if (only && !std::regex_search(e.group, std::regex(only))) continue;
    if (groups.empty() || groups.back().front().group != e.group) groups.emplace_back();
    groups.back().push_back(e);
  }
  // The PostgreSQL server is started here: it is tied to the thread starting it (and stopped with it).
  Result<PostgresServer*> pg = PostgresServer::Shared();
  if (!pg.ok()) return "PostgreSQL: " + pg.status().ToString() + "\n";
  // Two at a time (CI has 2 cores), the groups with the most examples first so the workers end together.
  constexpr int kWorkers = 2;
  std::vector<size_t> order(groups.size());
  for (size_t g = 0; g < order.size(); ++g) order[g] = g;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return groups[a].size() > groups[b].size(); });
  std::vector<GroupResult> results(groups.size());
  std::atomic<size_t> next{0};
  std::mutex print;
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&] {
      for (size_t k; (k = next++) < groups.size();) {
        const size_t g = order[k];
        try {
          results[g] = RunGroup(groups[g], base_->path(), env_);
        } catch (const std::exception& e) {  // e.g. a study server answering what is not JSON
          results[g].failures = groups[g].front().group + ": " + e.what() + "\n";
        }
        std::lock_guard<std::mutex> lock(print);
        std::cout << results[g].log << std::flush;
      }
    });
  }
  for (std::thread& t : workers) t.join();
  std::string failures, synopses;
  int ran = 0;
  for (const GroupResult& r : results) {
    failures += r.failures;
    synopses += r.synopses;
    ran += r.ran;
  }
  std::cout << "ran " << ran << " examples; synopses (listed, not run):\n" << synopses;
  return failures;
}

}  // namespace visalign::testing::examples
