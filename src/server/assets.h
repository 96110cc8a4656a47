// The web app's files (web/serve/*.js, *.css, *.svg), compiled into the binary at build time by
// web/report/embed_assets.mjs (its --files mode; src/server/CMakeLists.txt), so `visalign serve`
// fetches nothing at run time. Served under /static/<name>.
#pragma once

#include <string_view>
#include <vector>

namespace visalign::server::internal {

struct Asset {
  std::string_view name;          // "game.js"
  std::string_view content_type;  // "text/javascript; charset=utf-8"
  std::string_view body;
};
const std::vector<Asset>& Assets();

}  // namespace visalign::server::internal
