#include "visalign/core/status.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace visalign {
namespace {

TEST(Status, OkHasNoMessage) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "ok");
}

TEST(Status, FormatsWhatWhereExpected) {
  Status s = Status::InvalidArgument("invalid color \"#GGHHII\"", "argument COLOR", "#RRGGBB or #RGB");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.ToString(), "invalid color \"#GGHHII\" (argument COLOR): #RRGGBB or #RGB");
}

TEST(Status, OmitsEmptyParts) {
  EXPECT_EQ(Status::IoError("disk full").ToString(), "disk full");
  EXPECT_EQ(Status::IoError("disk full", "out.png").ToString(), "disk full (out.png)");
}

TEST(Status, WithContextPrefixesWhere) {
  Status s = Status::InvalidArgument("bad hex", "field targets").WithContext("manifest.jsonl:3");
  EXPECT_EQ(s.where(), "manifest.jsonl:3 field targets");
}

Result<int> Half(int x) {
  if (x % 2) return Status::InvalidArgument("odd number " + std::to_string(x));
  return x / 2;
}

Status Quarter(int x, int* out) {
  VISALIGN_ASSIGN_OR_RETURN(int h, Half(x));
  VISALIGN_ASSIGN_OR_RETURN(*out, Half(h));
  return Status::Ok();
}

TEST(Result, PropagatesErrorsThroughMacros) {
  int out = 0;
  EXPECT_TRUE(Quarter(8, &out).ok());
  EXPECT_EQ(out, 2);
  Status st = Quarter(6, &out);
  EXPECT_EQ(st.what(), "odd number 3");
}

Result<std::vector<std::string>> Words() { return std::vector<std::string>{"red", "green", std::string(64, 'b')}; }

// A temporary Result gives its value away: a range-for over Words().value() iterates a vector
// that lives as long as the loop, not one inside a Result destroyed before the first iteration
// (ASan builds see the difference; the types say it everywhere).
TEST(Result, ATemporaryGivesItsValueAwaySoNothingDangles) {
  static_assert(std::is_same_v<decltype(Words().value()), std::vector<std::string>>);
  static_assert(std::is_same_v<decltype(*Words()), std::vector<std::string>>);
  Result<std::vector<std::string>> kept = Words();
  static_assert(std::is_same_v<decltype(kept.value()), std::vector<std::string>&>);
  static_assert(std::is_same_v<decltype(*std::as_const(kept)), const std::vector<std::string>&>);
  size_t letters = 0;
  for (const std::string& w : Words().value()) letters += w.size();
  for (const std::string& w : *Words()) letters += w.size();
  EXPECT_EQ(letters, 2 * (3 + 5 + 64));
  std::vector<std::string> moved = std::move(kept).value();
  EXPECT_EQ(moved.size(), 3u);
}

Result<int> ForgotTheValue() { return Status::Ok(); }

// A Result cannot claim success without a value: an OK Status becomes kInternal (release builds;
// debug builds stop at an assert), so ok() and status().ok() agree and the macro propagates failure.
TEST(Result, AnOkStatusWithoutAValueIsAnInternalError) {
#ifdef NDEBUG
  Result<int> r = ForgotTheValue();
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.status().ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
  auto twice = [](int* out) -> Status {
    VISALIGN_ASSIGN_OR_RETURN(*out, ForgotTheValue());
    return Status::Ok();
  };
  int out = 7;
  EXPECT_EQ(twice(&out).code(), StatusCode::kInternal);
  EXPECT_EQ(out, 7);
#else
  EXPECT_DEATH((void)ForgotTheValue(), "Result built from an OK Status");
#endif
}

// value() of an error is a caller's bug: it aborts naming the error, never throws
// std::bad_variant_access across a module boundary.
TEST(ResultDeathTest, ValueOfAnErrorAbortsWithTheStatus) {
  EXPECT_DEATH((void)Half(3).value(), "Result::value\\(\\) on an error: odd number 3");
  const Result<int> kept = Half(5);
  EXPECT_DEATH((void)*kept, "odd number 5");
}

}  // namespace
}  // namespace visalign
