// Reading bytes visalign does not control (images and replies from remote servers, model files and
// configs from hubs, CSV/JSONL from collaborators, requests from the public) under one policy:
//   - JSON documents are parsed by ParseJson, which refuses nesting deeper than kMaxJsonDepth while
//     parsing, before any value is used, so nothing downstream (serialising, comparing) recurses deeply;
//   - error messages quote untrusted values only through QuoteText / QuoteJson: at most kQuoteLimit
//     bytes, control bytes escaped (so a message stays one line and writes no terminal escapes), never
//     recursing into the value.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "visalign/core/json.h"
#include "visalign/core/status.h"

namespace visalign {

// Deepest nesting of arrays/objects ParseJson accepts. Every document visalign reads (configs,
// safetensors headers, API replies, manifests) nests fewer than 10 levels.
inline constexpr int kMaxJsonDepth = 64;
// Bytes of an untrusted value an error message quotes.
inline constexpr size_t kQuoteLimit = 120;

// Parses one JSON document (RFC 8259; no comments). Invalid JSON is kCorrupt "invalid JSON (syntax
// error at byte N)" (N counted from 1); nesting deeper than `max_depth` is kCorrupt "JSON nested
// deeper than N levels", reported as soon as the parser reaches that depth. Callers add the where.
Result<Json> ParseJson(std::string_view text, int max_depth = kMaxJsonDepth);

// The JSON document in file `path` (ReadFile, then ParseJson): an error names the file as its where.
Result<Json> ReadJsonFile(const std::filesystem::path& path);

// obj[key] when `obj` is an object and that member is a string, else `fallback`. For reading
// untrusted documents: json::value() throws when the member holds another type.
std::string StringMember(const Json& obj, const std::string& key, const std::string& fallback = "");

// `bytes` as a double-quoted excerpt for an error message: the first `limit` bytes (not splitting a
// UTF-8 character), then "..." and the full size when cut; control bytes, DEL, C1 controls and bytes
// that are not UTF-8 appear as \n, \r, \t or \xHH, and '"' and '\' are backslash-escaped.
std::string QuoteText(std::string_view bytes, size_t limit = kQuoteLimit);

// A JSON value as compact JSON text for an error message, at most `limit` bytes then "...". Walks
// the value with an explicit stack (never recursing, whatever its depth) and stops at the limit, so
// its cost is bounded by `limit`, not by the value's size. Control bytes escaped as in QuoteText.
std::string QuoteJson(const Json& value, size_t limit = kQuoteLimit);

// `text` made safe to print as one line: escapes as QuoteText does (without adding quotes or
// escaping '"' and '\'), and cuts after `limit` bytes with "..." and the full size. Status::ToString
// applies it to every part, so no error line can be split, colour a terminal or grow without bound.
std::string EscapeControlBytes(std::string_view text, size_t limit);

}  // namespace visalign
