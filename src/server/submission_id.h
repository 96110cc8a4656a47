// The page's id of a submission (a painting, a rating), internal to the server module: the study
// store keeps it unique per (kind, participant), so a replayed request is recognised and refused.
#pragma once

#include <string>

#include "visalign/core/json.h"
#include "visalign/core/status.h"

namespace visalign::server {

// body["client_id"]: 8-64 of [A-Za-z0-9_-]; else InvalidArgument at "request body field client_id".
Result<std::string> SubmissionId(const Json& body);

}  // namespace visalign::server
