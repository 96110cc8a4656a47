// The page's scripts and styles, compiled into the binary by web/report/embed_assets.mjs from the
// npm packages of web/report/package-lock.json and web/report/report.{js,css}.
#pragma once

#include <string_view>

namespace visalign::report::internal {

extern const std::string_view kLibraryScripts;  // vega, vega-lite, vega-embed (minified, URL-free)
extern const std::string_view kLibraryNotice;   // their names, versions and BSD-3 licence texts
extern const std::string_view kPageScript;      // web/report/report.js
extern const std::string_view kPageStyle;       // web/report/report.css

}  // namespace visalign::report::internal
