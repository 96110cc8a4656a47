// What a store location names (internal to the store module): a folder, or a server by its URI
// scheme. The run store (OpenStore) and the study store (StudyStore::Open) decide the same way.
#pragma once

#include <string>

#include "visalign/core/status.h"

namespace visalign::store {

// "postgres" for "postgres://user:secret@host/db"; empty for a folder.
std::string SchemeOf(const std::string& location);
bool IsPostgres(const std::string& scheme);
// Unsupported at "store location" for a scheme no store implements.
Status UnknownScheme(const std::string& scheme);

}  // namespace visalign::store
