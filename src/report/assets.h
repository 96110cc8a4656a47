// The page's scripts, styles and font, compiled into the binary by web/report/embed_assets.mjs from
// the npm packages of web/report/package-lock.json, web/report/{report.js,report.css,export.js} and
// Debian's DejaVu Sans.
#pragma once

#include <string_view>

namespace visalign::report::internal {

extern const std::string_view kLibraryScripts;  // vega, vega-lite, vega-embed (minified, URL-free)
extern const std::string_view kLibraryNotice;   // their names, versions and BSD-3 licence texts, and the font's
extern const std::string_view kPageScript;      // web/report/report.js
extern const std::string_view kPageStyle;       // web/report/report.css
// {"family": "visalign-dejavu-sans", "faces": {"normal": base64 TTF, "bold": base64 TTF}}: DejaVu Sans,
// subset; the page loads it (FontFace) for its text and figures, and the static export draws its glyphs.
extern const std::string_view kFonts;
// Only in the page ExportFigures renders: opentype.js (minified, URL-free), its MIT notice, and
// web/report/export.js (text to glyph outlines, SVG and PNG of every figure).
extern const std::string_view kExportScripts;
extern const std::string_view kExportNotice;
extern const std::string_view kExportScript;

}  // namespace visalign::report::internal
