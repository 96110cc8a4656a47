// Shared by the `visalign violin generate` integration tests: a small real VIOLIN dataset, the
// in-process reference server, and the generate command line against it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "visalign/benchmarks/violin/dataset.h"
#include "visalign/benchmarks/violin/reference_server.h"
#include "visalign/core/io.h"

namespace visalign::testing {

inline constexpr int kSide = 32;

// A small real VIOLIN dataset (variation 1 and 2 at scale 0.01, manifest only), optionally with
// one prompt replaced.
inline std::vector<violin::ManifestItem> WriteDataset(const std::filesystem::path& dir,
                                                      const std::string& first_prompt = "") {
  violin::DatasetOptions o;
  o.variations = {1, 2};
  o.scale = 0.01;
  o.write_images = false;
  o.show_progress = false;
  auto items = violin::BuildItems(o).value();
  if (!first_prompt.empty()) items[0].prompt = first_prompt;
  std::string text;
  for (const auto& it : items) text += violin::ManifestLine(it) + "\n";
  std::filesystem::create_directories(dir);
  EXPECT_TRUE(WriteFileAtomic(dir / "manifest.jsonl", text).ok());
  return items;
}

inline std::unique_ptr<violin::ReferenceServer> StartServer(const std::filesystem::path& dataset, double fail_rate = 0,
                                                            int latency_ms = 0, double rate_limit = 0,
                                                            const std::string& api = "generic") {
  violin::ReferenceServerOptions o;
  o.dataset = dataset;
  o.api = api;
  o.fail_rate = fail_rate;
  o.latency_ms = latency_ms;
  o.rate_limit = rate_limit;
  o.seed = 7;
  auto s = violin::ReferenceServer::Start(o);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

inline std::vector<std::string> GenerateArgs(const std::filesystem::path& dataset, const std::filesystem::path& store,
                                             const std::string& url, std::vector<std::string> extra = {},
                                             const std::string& model = "reference") {
  std::vector<std::string> args = {
      "violin",    "generate",     "--dataset",     dataset.string(),
      "--store",   store.string(), "--run",         "ref",
      "--backend", "openai",       "--endpoint",    url,
      "--model",   model,          "--size",        std::to_string(kSide) + "x" + std::to_string(kSide),
      "--backoff", "0.02",         "--max-backoff", "0.1"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// The reference server's per-prompt counter `field` (images_by_prompt, requests_by_prompt).
inline std::map<std::string, uint64_t> Counts(const violin::ReferenceServer& s, const char* field) {
  return s.Stats()[field].get<std::map<std::string, uint64_t>>();
}

}  // namespace visalign::testing
