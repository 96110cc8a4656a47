// The regionalization tool (docs/serve.md "Regionalization"): a participant paints the board into the
// 8 basic categories and saves the painting; the admin export is the consensus macro_regions.csv.
#include "server/routes.h"
#include "server/submission_id.h"
#include "visalign/core/untrusted.h"
#include "visalign/server/tool_exports.h"

namespace visalign::server {
namespace {

using backends::HttpServer;
using backends::HttpServerRequest;
using backends::HttpServerResponse;

Json CategoriesJson() {
  Json names = Json::array();
  for (int i = 0; i < hues::kMacroCategories; ++i) names.push_back(hues::MacroName(static_cast<hues::Macro>(i)));
  return names;
}

}  // namespace

Status AddRegionRoutes(App& app, HttpServer& server) {
  app.AddPage(server, "/regions", "regions", "Colour regions");

  // The categories to paint with, and the participant's latest painting (null before the first).
  server.Route("GET", "/api/regions", [&app](const HttpServerRequest& req, HttpServerResponse& res) {
    Result<store::Participant> who = app.RequireSession(req);
    if (!who.ok()) return App::Fail(res, 401, who.status());
    Result<std::vector<store::StudyRecord>> records = app.study_store().Records(kRegionsRecord);
    if (!records.ok()) return App::Fail(res, records.status());
    Json latest = nullptr;
    for (const store::StudyRecord& r : *records)
      if (auto cells = r.payload.find("cells"); r.participant == who->id && cells != r.payload.end()) latest = *cells;
    res.SetJson(200, {{"categories", CategoriesJson()}, {"painting", latest}});
  });

  // {"client_id", "cells": {"A1": "Red", ...}}: stored as given (validated); a replayed client id is
  // refused (409) and stores nothing.
  server.Route("POST", "/api/regions", [&app](const HttpServerRequest& req, HttpServerResponse& res) {
    Result<store::Participant> who = app.RequireSession(req);
    if (!who.ok()) return App::Fail(res, 401, who.status());
    Result<Json> body = App::JsonBody(req);
    if (!body.ok()) return App::Fail(res, 400, body.status());
    Result<std::string> client_id = SubmissionId(*body);
    if (!client_id.ok()) return App::Fail(res, 400, client_id.status());
    const Json cells = body->contains("cells") ? (*body)["cells"] : Json();
    Result<hues::RegionPainting> painting = hues::ParseRegionPainting(cells, "request body field cells");
    if (!painting.ok()) return App::Fail(res, 400, painting.status());
    Result<store::Insert> stored = app.study_store().AddRecord(kRegionsRecord, who->id, *client_id,
                                                               {{"cells", hues::RegionPaintingJson(*painting)}});
    if (!stored.ok()) return App::Fail(res, stored.status());
    if (*stored == store::Insert::kDuplicate)
      return App::Fail(res, 409,
                       Status::InvalidArgument("submission " + QuoteText(*client_id) + " already stored",
                                               "request body field client_id", "a new client id per painting"));
    res.SetJson(200, {{"stored", true}, {"painted", painting->painted()}});
  });

  // The consensus over every participant's latest painting, as macro_regions.csv (`--regions FILE`).
  server.Route("GET", "/api/admin/regions.csv", [&app](const HttpServerRequest& req, HttpServerResponse& res) {
    if (Status admin = app.RequireAdmin(req); !admin.ok()) return App::Fail(res, 403, admin);
    Result<hues::MacroMap> map = ExportRegions(app.study_store(), app.board());
    if (!map.ok() && map.status().code() == StatusCode::kInvalidArgument) return App::Fail(res, 409, map.status());
    if (!map.ok()) return App::Fail(res, map.status());
    res.Set(200, map->ToCsv(), "text/csv; charset=utf-8");
  });
  return Status::Ok();
}

}  // namespace visalign::server
