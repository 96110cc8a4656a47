// Submission ids of the tools' POST bodies.
#include "server/submission_id.h"

#include <regex>

#include "visalign/core/untrusted.h"

namespace visalign::server {

Result<std::string> SubmissionId(const Json& body) {
  static const std::regex kClientId("[A-Za-z0-9_-]{8,64}");
  std::string id = StringMember(body, "client_id");
  if (!std::regex_match(id, kClientId))
    return Status::InvalidArgument("client id " + QuoteText(id), "request body field client_id",
                                   "8-64 letters, digits, _ or -, new for each submission");
  return id;
}

}  // namespace visalign::server
