// The one number formatter of every CSV and Markdown writer (summary.csv, summary.md, words.csv, ...).
//
// NaN rule: a value that is not a finite number (NaN, +inf, -inf) has no text: both functions return
// "" — an empty CSV cell, exactly where summary.json has null (JSON has no NaN or infinity).
// Markdown writers show the empty text as "–".
#pragma once

#include <string>

namespace visalign {

// The shortest decimal text that reads back as the same double: "0.1", "0.8888888888888888",
// "1e-07", "-2.5"; integral values without a fraction or exponent up to 1e16 ("3", "-1", "0").
std::string FormatNumber(double value);
// `decimals` digits after the point ("0.250" for 0.25 with 3), for tables meant for reading.
std::string FormatFixed(double value, int decimals);

}  // namespace visalign
