#include "visalign/core/status.h"

namespace visalign {

Status Status::WithContext(const std::string& outer) const {
  if (ok()) return *this;
  Status s = *this;
  s.where_ = where_.empty() ? outer : outer + " " + where_;
  return s;
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string out = what_;
  if (!where_.empty()) out += " (" + where_ + ")";
  if (!expected_.empty()) out += ": " + expected_;
  return out;
}

}  // namespace visalign
