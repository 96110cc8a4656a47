#include "visalign/core/status.h"

#include "visalign/core/untrusted.h"

#include <cstdio>
#include <cstdlib>

namespace visalign {
namespace {
// Input bytes of what, where and expected ToString prints; messages are a few dozen bytes, a longer
// part carries an untrusted value nobody quoted through QuoteText. With the cut markers they fit
// kMaxLineBytes unless escaping widened them (a control byte prints as four), which the final cut
// catches.
constexpr size_t kMaxWhatBytes = 1000, kMaxWhereBytes = 400, kMaxExpectedBytes = 400;
constexpr size_t kCutMarkerRoom = 32;
// The longest line ToString returns (the CLI adds "error: ").
constexpr size_t kMaxLineBytes = 2000;
}  // namespace

namespace internal {
Status OkStatusWithoutValue() {
  return Status::Internal("a Result was built from an OK Status, so it holds neither a value nor an error");
}

void DieOnValueOfError(const Status& status) {
  std::fprintf(stderr, "visalign: Result::value() on an error: %s\n", status.ToString().c_str());
  std::abort();
}
}  // namespace internal

Status Status::WithContext(const std::string& outer) const {
  if (ok()) return *this;
  Status s = *this;
  s.where_ = where_.empty() ? outer : outer + " " + where_;
  return s;
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string out = EscapeControlBytes(what_, kMaxWhatBytes);
  if (!where_.empty()) out += " (" + EscapeControlBytes(where_, kMaxWhereBytes) + ")";
  if (!expected_.empty()) out += ": " + EscapeControlBytes(expected_, kMaxExpectedBytes);
  if (out.size() > kMaxLineBytes) out = EscapeControlBytes(out, kMaxLineBytes - kCutMarkerRoom);
  return out;
}

}  // namespace visalign
