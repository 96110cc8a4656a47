// `visalign store show`: what a run store holds, run by run: benchmark, dataset fingerprint, the
// identity every image of the run was made with, the connection last used and the row counts.
// It only reads: a folder without a store is an error, not a new store.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/cli.h"
#include "visalign/store.h"

namespace visalign::cli {
namespace {
namespace fs = std::filesystem;

struct ShowArgs {
  std::string store = "./visalign-store";
  std::string run;  // empty = every run
};

Status RunShow(const Cli& cli, const ShowArgs& a) {
  if (!store::StoreExists(a.store))
    return Status::NotFound("no visalign store in " + a.store, "--store",
                            "a folder written by `visalign generate` (with visalign.db)");
  VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<store::RunStore> st, store::OpenStore(a.store));
  std::vector<store::RunInfo> runs;
  if (a.run.empty()) {
    VISALIGN_ASSIGN_OR_RETURN(runs, st->ListRuns());
  } else {
    VISALIGN_ASSIGN_OR_RETURN(std::optional<store::RunInfo> run, st->FindRun(a.run));
    if (!run)
      return Status::NotFound("no run named \"" + a.run + "\"", "store " + a.store,
                              "one of the runs `visalign store show --store " + a.store + "` lists");
    runs.push_back(std::move(*run));
  }
  nlohmann::json out = nlohmann::json::array();
  for (const store::RunInfo& r : runs) {
    VISALIGN_ASSIGN_OR_RETURN(store::RunCounts c, st->Counts(r.name));
    out.push_back({{"name", r.name},
                   {"benchmark", r.benchmark},
                   {"dataset_fingerprint", r.dataset_fingerprint},
                   {"created_at", r.created_at},
                   {"identity", r.identity},
                   {"connection", r.connection},
                   {"rows", {{"done", c.done}, {"failed", c.failed}, {"pending", c.pending}}}});
  }
  if (cli.global().json) {
    PrintJson({{"store", fs::absolute(a.store).string()}, {"runs", out}});
    return Status::Ok();
  }
  std::printf("store %s: %zu runs\n", a.store.c_str(), runs.size());
  for (const nlohmann::json& r : out)
    std::printf("run %s (%s, created %s)\n  dataset:    %s\n  identity:   %s\n  connection: %s (last used)\n"
                "  rows:       %zu done, %zu failed, %zu pending\n",
                r["name"].get<std::string>().c_str(), r["benchmark"].get<std::string>().c_str(),
                r["created_at"].get<std::string>().c_str(), r["dataset_fingerprint"].get<std::string>().c_str(),
                r["identity"].dump().c_str(), r["connection"].dump().c_str(), r["rows"]["done"].get<size_t>(),
                r["rows"]["failed"].get<size_t>(), r["rows"]["pending"].get<size_t>());
  std::fflush(stdout);
  return Status::Ok();
}

const CommandGroup kStore(32, [](Cli& cli) {
  CLI::App* group = cli.Group("store", "Inspect a run store");
  CLI::App* show = group->add_subcommand("show", "List a store's runs: identity, last connection and row counts");
  auto a = std::make_shared<ShowArgs>();
  show->add_option("--store", a->store, "Run store folder")->capture_default_str();
  show->add_option("--run", a->run, "Only this run");
  show->footer(
      "identity: what every image of the run depends on (backend, model, size, parameters, command); a run\n"
      "resumes only with the same one. connection: where the model was reached the last time (endpoint, API\n"
      "key variable name, timeouts, concurrency, rate); it may change between invocations. Nothing is written\n"
      "(a store of an older visalign is upgraded in place, as every command that opens it does).\n"
      "Example:\n"
      "  visalign store show --store ./visalign-store --run gpt-image");
  cli.Bind(show, [&cli, a]() -> Status { return RunShow(cli, *a); });
});

}  // namespace
}  // namespace visalign::cli
