// The route files of `visalign serve`, internal to the server module: each feature registers its
// routes on the App's HttpServer from its own file; App::Create adds those of RouteFiles() in turn.
#pragma once

#include <span>
#include <string_view>

#include "visalign/backends/http_server.h"
#include "visalign/server/app.h"

namespace visalign::server {

Status AddCoreRoutes(App& app, backends::HttpServer& server);    // app.cc: board, study, session, admin
Status AddGameRoutes(App& app, backends::HttpServer& server);    // game_routes.cc: the Hues and Cues game
Status AddRegionRoutes(App& app, backends::HttpServer& server);  // regions_routes.cc: the regionalization tool
// The explorer and the rating page load their inputs (--results folders, the concept set) first;
// an input that cannot be read is App::Create's error, so `visalign serve` stops with it.
Status AddExplorerRoutes(App& app, backends::HttpServer& server);    // explorer_routes.cc: the result explorer
Status AddAcvaRatingRoutes(App& app, backends::HttpServer& server);  // acva_rating_routes.cc: the ACVA rating page

// The route files App::Create adds, in order (route_files.cc; one row per feature, so a new page
// is its <feature>_routes.cc and a row). A table rather than a registrar in each file: the module
// is a static library, whose unreferenced object files the linker leaves out.
struct RouteFile {
  std::string_view name;  // the feature, as docs/serve.md names it
  Status (*add)(App& app, backends::HttpServer& server);
};
std::span<const RouteFile> RouteFiles();

}  // namespace visalign::server
