// `visalign store ls | show | export | rm | migrate`: what a run store holds and managing it without
// SQL; migrate creates a store or brings it to this visalign's schema.
// ls: one line per run with its row counts; show: a run's benchmark, dataset fingerprint, the
// identity every image was made with, the connection last used, row counts (done, failed,
// pending, leased by running workers), attempts and first/last update; export: a run's rows and
// done images into a folder; rm: a run, its rows and images (refused while workers hold its rows).
// ls, show and export only read: a folder without a store is an error, not a new store.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/cli.h"
#include "visalign/core/io.h"
#include "visalign/store.h"
#include "visalign/store/run_export.h"

namespace visalign::cli {
namespace {
namespace fs = std::filesystem;

struct StoreArgs {
  StoreFlags store;
  std::string run;  // show: empty = every run
  std::string out;  // export
};

Result<std::unique_ptr<store::RunStore>> OpenExisting(const StoreArgs& a) {
  if (!store::StoreExists(a.store.location))
    return Status::NotFound("no visalign store in " + a.store.Display(), "--store",
                            "a folder written by `visalign violin generate` (with visalign.db)");
  return OpenStore(a.store);
}

Result<store::RunInfo> FindExisting(store::RunStore& st, const StoreArgs& a) {
  VISALIGN_ASSIGN_OR_RETURN(std::optional<store::RunInfo> run, st.FindRun(a.run));
  if (!run)
    return Status::NotFound("no run named \"" + a.run + "\"", "store " + a.store.Display(),
                            "one of the runs `visalign store ls --store " + a.store.Display() + "` lists");
  return std::move(*run);
}

std::string CountsText(const Json& rows) {
  const size_t refused = rows["refused"].get<size_t>();
  return fmt::format("{} done, {}{} failed, {} pending ({} leased by running workers)", rows["done"].get<size_t>(),
                     refused > 0 ? fmt::format("{} refused, ", refused) : std::string(), rows["failed"].get<size_t>(),
                     rows["pending"].get<size_t>(), rows["leased"].get<size_t>());
}

Status RunLs(const Cli& cli, const StoreArgs& a) {
  VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<store::RunStore> st, OpenExisting(a));
  VISALIGN_ASSIGN_OR_RETURN(std::vector<store::RunInfo> runs, st->ListRuns());
  Json out = Json::array();
  for (const store::RunInfo& r : runs) {
    VISALIGN_ASSIGN_OR_RETURN(Json j, store::RunJson(*st, r));
    out.push_back(std::move(j));
  }
  if (cli.global().json) {
    PrintJson({{"store", a.store.ForJson()}, {"runs", out}});
    return Status::Ok();
  }
  for (const Json& r : out)
    std::printf("%s\t%s\t%s; last update %s\n", r["name"].get<std::string>().c_str(),
                r["benchmark"].get<std::string>().c_str(), CountsText(r["rows"]).c_str(),
                r["rows"]["last_update"].get<std::string>().c_str());
  std::fflush(stdout);
  return Status::Ok();
}

Status RunShow(const Cli& cli, const StoreArgs& a) {
  VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<store::RunStore> st, OpenExisting(a));
  std::vector<store::RunInfo> runs;
  if (a.run.empty()) {
    VISALIGN_ASSIGN_OR_RETURN(runs, st->ListRuns());
  } else {
    VISALIGN_ASSIGN_OR_RETURN(store::RunInfo run, FindExisting(*st, a));
    runs.push_back(std::move(run));
  }
  Json out = Json::array();
  for (const store::RunInfo& r : runs) {
    VISALIGN_ASSIGN_OR_RETURN(Json j, store::RunJson(*st, r));
    // The provider's reason for every refused prompt (a refusal is a result, not an error).
    VISALIGN_ASSIGN_OR_RETURN(std::vector<store::Row> rows, st->Rows(r.name));
    j["refusals"] = Json::array();
    for (const store::Row& row : rows)
      if (row.status == store::RowStatus::kRefused)
        j["refusals"].push_back({{"item_id", row.item_id}, {"k", row.k}, {"reason", row.last_error}});
    out.push_back(std::move(j));
  }
  if (cli.global().json) {
    PrintJson({{"store", a.store.ForJson()}, {"runs", out}});
    return Status::Ok();
  }
  std::printf("store %s: %zu %s\n", a.store.Display().c_str(), runs.size(), runs.size() == 1 ? "run" : "runs");
  for (const Json& r : out) {
    std::printf(
        "run %s (%s, created %s)\n  dataset:    %s\n  identity:   %s\n  connection: %s (last used)\n"
        "  rows:       %s\n  attempts:   %zu; first row %s, last update %s\n",
        r["name"].get<std::string>().c_str(), r["benchmark"].get<std::string>().c_str(),
        r["created_at"].get<std::string>().c_str(), r["dataset_fingerprint"].get<std::string>().c_str(),
        r["identity"].dump().c_str(), r["connection"].dump().c_str(), CountsText(r["rows"]).c_str(),
        r["rows"]["attempts"].get<size_t>(), r["rows"]["first_update"].get<std::string>().c_str(),
        r["rows"]["last_update"].get<std::string>().c_str());
    for (const Json& x : r["refusals"])
      std::printf("  refused:    %s #%d: %s\n", x["item_id"].get<std::string>().c_str(), x["k"].get<int>(),
                  x["reason"].get<std::string>().c_str());
  }
  std::fflush(stdout);
  return Status::Ok();
}

// <out>/run.json (as `store show --json` describes the run), <out>/rows.jsonl (every row) and
// <out>/images/ (the done images, named as in the store).
Status RunExport(const Cli& cli, const StoreArgs& a) {
  VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<store::RunStore> st, OpenExisting(a));
  VISALIGN_ASSIGN_OR_RETURN(store::RunInfo info, FindExisting(*st, a));
  const fs::path out = a.out;
  VISALIGN_ASSIGN_OR_RETURN(store::RunExportCounts counts, store::ExportRun(*st, info, out));
  if (cli.global().json)
    PrintJson({{"run", a.run}, {"out", fs::absolute(out).string()}, {"rows", counts.rows}, {"images", counts.images}});
  else
    std::printf("exported run %s: %zu rows, %zu images to %s\n", a.run.c_str(), counts.rows, counts.images,
                a.out.c_str());
  std::fflush(stdout);
  return Status::Ok();
}

Status RunRm(const Cli& cli, const StoreArgs& a) {
  VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<store::RunStore> st, OpenExisting(a));
  VISALIGN_ASSIGN_OR_RETURN(store::RunInfo info, FindExisting(*st, a));
  VISALIGN_ASSIGN_OR_RETURN(store::RunCounts counts, st->Counts(a.run));
  VISALIGN_RETURN_IF_ERROR(st->RemoveRun(info.name));
  if (cli.global().json)
    PrintJson({{"removed", a.run}, {"rows", counts.total()}, {"images", counts.done}});
  else
    std::printf("removed run %s: %zu rows, %zu images\n", a.run.c_str(), counts.total(), counts.done);
  std::fflush(stdout);
  return Status::Ok();
}

// Brings the store to this visalign's schema: an embedded store as opening it does, a PostgreSQL
// store only here (its workers may run different visalign versions).
Status RunMigrate(const Cli& cli, const StoreArgs& a) {
  VISALIGN_ASSIGN_OR_RETURN(store::SchemaMigration m, store::MigrateStore(a.store.location, a.store.options));
  if (cli.global().json) {
    PrintJson({{"store", a.store.ForJson()}, {"from_version", m.from}, {"to_version", m.to}});
  } else if (m.from == m.to) {
    std::printf("store %s: schema version %d, up to date\n", a.store.Display().c_str(), m.to);
  } else if (m.from == 0) {
    std::printf("store %s: created with schema version %d\n", a.store.Display().c_str(), m.to);
  } else {
    std::printf("store %s: schema version %d upgraded to %d\n", a.store.Display().c_str(), m.from, m.to);
  }
  std::fflush(stdout);
  return Status::Ok();
}

// A subcommand `name` of `group` with the store options into `a`, running `run` on them.
CLI::App* AddStoreSubcommand(Cli& cli, CLI::App* group, const char* name, const char* description,
                             const std::shared_ptr<StoreArgs>& a, Status (*run)(const Cli&, const StoreArgs&)) {
  CLI::App* sub = group->add_subcommand(name, description);
  AddStoreOptions(sub, &a->store, "Run store");
  cli.Bind(sub, [&cli, a, run]() -> Status { return run(cli, *a); });
  return sub;
}

const CommandGroup kStore(32, {"store"}, [](Cli& cli) {
  CLI::App* group = cli.Group("store", "Inspect and manage a run store");
  {
    auto a = std::make_shared<StoreArgs>();
    CLI::App* ls =
        AddStoreSubcommand(cli, group, "ls", "One line per run: benchmark, rows done/failed/pending/leased", a, RunLs);
    ls->footer("Example: visalign store ls --store ./visalign-store");
  }
  {
    auto a = std::make_shared<StoreArgs>();
    CLI::App* show = AddStoreSubcommand(
        cli, group, "show",
        "A store's runs: identity, last connection, row counts (leased too), attempts, first/last update", a, RunShow);
    show->add_option("--run", a->run, "Only this run");
    show->footer(
        "identity: what every image of the run depends on (backend, model, size, parameters, command); a run\n"
        "resumes only with the same one. connection: where the model was reached the last time (endpoint, API\n"
        "key variable name, timeouts, concurrency, rate); it may change between invocations. leased: pending rows\n"
        "running workers hold now (watch a shared run with `watch visalign store show --run NAME`). Nothing is\n"
        "written (an embedded store of an older visalign is upgraded in place, as every command that opens it does).\n"
        "Example:\n"
        "  visalign store show --store ./visalign-store --run gpt-image");
  }
  {
    auto a = std::make_shared<StoreArgs>();
    CLI::App* exp =
        AddStoreSubcommand(cli, group, "export", "Copy a run's rows and done images into a folder", a, RunExport);
    exp->add_option("--run", a->run, "The run to export")->required();
    exp->add_option("--out", a->out, "Folder to write run.json, rows.jsonl and images/ into")->required();
    exp->footer(
        "Each image is checked against its recorded SHA-256 before it is copied.\n"
        "Example: visalign store export --run gpt-image --out gpt-image-export");
  }
  {
    auto a = std::make_shared<StoreArgs>();
    CLI::App* rm = AddStoreSubcommand(cli, group, "rm", "Remove a run: its rows and its images", a, RunRm);
    rm->add_option("--run", a->run, "The run to remove")->required();
    rm->footer(
        "Refused while running workers hold rows of the run. Cached judge answers stay (they are keyed by image\n"
        "content and reused by any run with the same bytes).\n"
        "Example: visalign store rm --run old-attempt");
  }
  {
    auto a = std::make_shared<StoreArgs>();
    CLI::App* migrate = AddStoreSubcommand(
        cli, group, "migrate",
        "Create a store, or bring it to this visalign's schema version (a PostgreSQL store needs this)", a, RunMigrate);
    migrate->add_flag("--images-in-database", a->store.options.images_in_database,
                      "PostgreSQL store being created: keep images in the database (bytea), --image-root then being "
                      "only where each worker copies them for scoring");
    migrate->footer(
        "An embedded store (a folder) is upgraded by any command that opens it; this only says what was done.\n"
        "A PostgreSQL store is upgraded only here, once, by one process (every worker of it then needs this\n"
        "visalign or newer); a store written by a newer visalign is refused and left as it is. Creating a\n"
        "PostgreSQL store here fixes where it keeps images: files under --image-root, or the database.\n"
        "Examples:\n"
        "  visalign store migrate --store postgres://visalign@db.example:5432/visalign --image-root /shared/images\n"
        "  visalign store migrate --store postgres://visalign@db.example/visalign_blobs --images-in-database");
  }
});

}  // namespace
}  // namespace visalign::cli
