#include "visalign/core/status.h"

#include "visalign/core/untrusted.h"

namespace visalign {
namespace {
// Longest what, where or expected ToString prints; messages are a few dozen bytes, a longer part
// carries an untrusted value nobody quoted through QuoteText.
constexpr size_t kMaxPartBytes = 2000;
}  // namespace

Status Status::WithContext(const std::string& outer) const {
  if (ok()) return *this;
  Status s = *this;
  s.where_ = where_.empty() ? outer : outer + " " + where_;
  return s;
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string out = EscapeControlBytes(what_, kMaxPartBytes);
  if (!where_.empty()) out += " (" + EscapeControlBytes(where_, kMaxPartBytes) + ")";
  if (!expected_.empty()) out += ": " + EscapeControlBytes(expected_, kMaxPartBytes);
  return out;
}

}  // namespace visalign
