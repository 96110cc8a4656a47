// visalign's one JSON type. Every header, result file and reply uses `Json`, nlohmann's
// insertion-ordered document: an object keeps its keys in the order the code (or the parsed text)
// put them, so summary.json reads in the documented order (benchmark, schema_version,
// visalign_version first; docs/architecture.md, "Results contract") and `--json` prints what the
// library built, unsorted.
//
// Insertion order has two consequences the helpers below handle:
//   - `==` on objects compares key order too. Where two documents are the same whatever their key
//     order (a run's identity read back from a store that wrote it sorted, or from PostgreSQL's jsonb,
//     which reorders keys), compare with SameJson.
//   - dump() follows insertion order. A hash or cache key must not change when code reorders a
//     literal, and hashes written before this type was ordered were of key-sorted text: hash
//     CanonicalJsonText.
// Lookups in an object are linear in its size; ParseJson (core/untrusted.h) builds objects in
// linear time, so a document with many keys (a tokenizer's vocabulary) parses as fast as before.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace visalign {

using Json = nlohmann::ordered_json;

// Compact JSON text with every object's keys sorted bytewise, at every depth: the same text for
// documents that differ only in key order (what nlohmann::json's dump() printed).
std::string CanonicalJsonText(const Json& value);

// True when `a` and `b` hold the same values, objects compared as sets of keys (order ignored).
bool SameJson(const Json& a, const Json& b);

}  // namespace visalign
