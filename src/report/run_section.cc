// A stored generation run's section: what the run is (identity, dataset, last connection), its row
// counts, the latency of its done images, the attempts its rows took, and its failures.
#include <fmt/format.h>

#include "report/page.h"
#include "visalign/core/format.h"

namespace visalign::report {
namespace {

std::string_view StatusName(store::RowStatus status) { return store::RowStatusName(status); }

}  // namespace

Result<StoredRun> ReadStoredRun(const std::string& location, const store::StoreOptions& options,
                                const std::string& run) {
  const std::string shown = store::DisplayLocation(location);
  if (!store::StoreExists(location))
    return Status::NotFound("no visalign store", "store location " + shown,
                            "a folder written by `visalign violin generate` or `visalign acva generate`");
  VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<store::RunStore> st, store::OpenStore(location, options));
  VISALIGN_ASSIGN_OR_RETURN(std::optional<store::RunInfo> info, st->FindRun(run));
  if (!info)
    return Status::NotFound(fmt::format("no run named \"{}\"", run), "run name " + run + " in store " + shown,
                            "one of the runs `visalign store show --store " + shown + "` lists");
  StoredRun out{shown, std::move(*info), {}};
  VISALIGN_ASSIGN_OR_RETURN(out.rows, st->Rows(run));
  return out;
}

namespace internal {

void BuildRunSection(const StoredRun& run, SectionBuilder& section) {
  const store::RunInfo& info = run.info;
  section.Html(fmt::format("<p class=\"provenance\">Store <code>{}</code> · {} run created {} · dataset {}</p>\n",
                           EscapeHtml(run.store), EscapeHtml(info.benchmark), EscapeHtml(info.created_at),
                           EscapeHtml(info.dataset_fingerprint)));
  section.Html(
      "<details class=\"inputs\" open><summary>Identity (what every image depends on) and last connection"
      "</summary><pre>" +
      EscapeHtml(Json{{"identity", info.identity}, {"connection", info.connection}}.dump(2)) + "</pre></details>\n");
  CsvTable counts;
  counts.header = {"model", "rows", "done", "failed", "pending", "attempts"};
  size_t done = 0, failed = 0, pending = 0, attempts = 0;
  CsvTable failures;
  failures.header = {"item", "k", "status", "attempts", "last_error"};
  Json rows = Json::array();
  for (const store::Row& r : run.rows) {
    done += r.status == store::RowStatus::kDone;
    failed += r.status == store::RowStatus::kFailed;
    pending += r.status == store::RowStatus::kPending;
    attempts += static_cast<size_t>(r.attempts);
    if (!r.last_error.empty() || r.status == store::RowStatus::kFailed)
      failures.rows.push_back({r.item_id, std::to_string(r.k), std::string(StatusName(r.status)),
                               std::to_string(r.attempts), r.last_error});
    rows.push_back({{"model", info.name},
                    {"item", r.item_id},
                    {"k", r.k},
                    {"status", StatusName(r.status)},
                    {"attempts", r.attempts},
                    {"latency_ms", r.status == store::RowStatus::kDone ? Json(r.latency_ms) : nullptr}});
  }
  if (failed + pending > 0)
    section.Note(fmt::format(
        "run {} has {} failed and {} pending of its {}, so an evaluation of it covers only its {} "
        "(`visalign {} generate --retry-failed` resumes it).",
        info.name, failed, pending, Counted(run.rows.size(), "row"), Counted(done, "done image"), info.benchmark));
  counts.rows.push_back({info.name, std::to_string(run.rows.size()), std::to_string(done), std::to_string(failed),
                         std::to_string(pending), std::to_string(attempts)});
  section.Html(SortableTable(counts, section.id() + "-counts", "Rows of the run"));

  Json latency = BaseSpec(rows);
  NeedNumbers(latency, {"latency_ms"});
  latency["transform"].push_back({{"filter", "isValid(datum.latency_ms)"}});
  latency["width"] = 480;
  latency["height"] = 200;
  latency["name"] = "bars";
  latency["mark"] = {{"type", "bar"}};
  latency["encoding"] = {{"x",
                          {{"field", "latency_ms"},
                           {"type", "quantitative"},
                           {"bin", {{"maxbins", 40}}},
                           {"title", "latency of the last attempt, ms"}}},
                         {"y", {{"aggregate", "count"}, {"type", "quantitative"}, {"title", "done images"}}},
                         {"tooltip",
                          {{{"field", "latency_ms"}, {"bin", {{"maxbins", 40}}}, {"title", "latency, ms"}},
                           {{"aggregate", "count"}, {"title", "images"}}}}};
  if (done > 0)
    section.AddFigure("latency", "Latency of the done images.", "The request time of each image's successful attempt.",
                      std::move(latency));
  Json tries = BaseSpec(std::move(rows));
  tries["width"] = {{"step", 40}};
  tries["height"] = 200;
  tries["name"] = "bars";
  tries["mark"] = {{"type", "bar"}};
  tries["encoding"] = {
      {"x", {{"field", "attempts"}, {"type", "ordinal"}, {"title", "attempts"}}},
      {"y", {{"aggregate", "count"}, {"type", "quantitative"}, {"title", "rows"}}},
      {"color", {{"field", "status"}, {"type", "nominal"}, {"scale", {{"domain", {"done", "failed", "pending"}}}}}},
      {"tooltip", {{{"field", "attempts"}}, {{"field", "status"}}, {{"aggregate", "count"}, {"title", "rows"}}}}};
  if (!run.rows.empty())
    section.AddFigure("attempts", "Attempts per row.",
                      "How many requests each (item, sample) took, across resumed sessions, by its status.",
                      std::move(tries));
  if (!failures.rows.empty())
    section.Html(SortableTable(failures, section.id() + "-failures", "Rows with an error (the last one each)"));
}

}  // namespace internal
}  // namespace visalign::report
