// The route files of `visalign serve`, internal to the server module: each feature registers its
// routes on the App's HttpServer from its own file; App::Create calls them in turn.
#pragma once

#include "visalign/backends/http_server.h"
#include "visalign/server/app.h"

namespace visalign::server {

void AddCoreRoutes(App& app, backends::HttpServer& server);         // app.cc: board, study, session, admin
void AddGameRoutes(App& app, backends::HttpServer& server);         // game_routes.cc: the Hues and Cues game
void AddRegionRoutes(App& app, backends::HttpServer& server);       // regions_routes.cc: the regionalization tool
// The explorer and the rating page load their inputs (--results folders, the concept set) first;
// an input that cannot be read is App::Create's error, so `visalign serve` stops with it.
Status AddExplorerRoutes(App& app, backends::HttpServer& server);   // explorer_routes.cc: the result explorer
Status AddAcvaRatingRoutes(App& app, backends::HttpServer& server); // acva_rating_routes.cc: the ACVA rating page

}  // namespace visalign::server
