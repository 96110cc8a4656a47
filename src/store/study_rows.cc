#include "store/study_rows.h"

#include <random>

#include <fmt/format.h>

#include "visalign/core/untrusted.h"

namespace visalign::store {

std::string RandomUuid() {
  static thread_local std::mt19937_64 rng{std::random_device{}() ^
                                          (static_cast<uint64_t>(std::random_device{}()) << 32)};
  uint64_t hi = rng(), lo = rng();
  hi = (hi & ~0xF000ull) | 0x4000ull;                  // version 4
  lo = (lo & ~(0xC000ull << 48)) | (0x8000ull << 48);  // variant 10
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xFFFF, hi & 0xFFFF, lo >> 48,
                     lo & 0xFFFFFFFFFFFFull);
}

Json JsonColumn(const std::string& text) {
  auto parsed = ParseJson(text);
  return parsed.ok() ? *parsed : Json();
}

Status AssignmentAlreadySet() {
  return Status::InvalidArgument("the participant already has items", "assignment", "one assignment per participant");
}

Status NoParticipant(int64_t participant, const std::string& where) {
  return Status::NotFound("no participant " + std::to_string(participant), where);
}

}  // namespace visalign::store
