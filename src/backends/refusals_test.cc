// Refusal rates of generation runs: refused of finished rows (done + refused) with the Wilson 95 %
// interval; failed and pending rows are no answers and count nowhere.
#include "visalign/backends/refusals.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace visalign::backends {
namespace {

store::RunCounts Counts(size_t done, size_t refused, size_t failed, size_t pending) {
  store::RunCounts c;
  c.done = done;
  c.refused = refused;
  c.failed = failed;
  c.pending = pending;
  return c;
}

TEST(RefusalRate, IsRefusedOfFinishedRowsWithTheWilsonInterval) {
  const RefusalRate r = RefusalRateOf("gpt", Counts(37, 3, 5, 7));
  EXPECT_EQ(r.finished, 40u);
  EXPECT_EQ(r.refused, 3u);
  EXPECT_DOUBLE_EQ(r.rate.rate, 0.075);
  const nlohmann::json j = RefusalJson(r);
  EXPECT_EQ(j["run"], "gpt");
  EXPECT_EQ(j["finished"], 40);
  EXPECT_DOUBLE_EQ(j["ci95"][0].get<double>(), r.rate.lo);
  EXPECT_LT(r.rate.lo, 0.075);
  EXPECT_GT(r.rate.hi, 0.075);
  EXPECT_EQ(RefusalText({r}), fmt::format("refusals (content filters; refused of finished rows, Wilson 95 %):\n"
                                          "  gpt: 3 of 40 (7.5 %, {:.1f}-{:.1f} %)\n",
                                          100 * r.rate.lo, 100 * r.rate.hi));
}

TEST(RefusalRate, NothingFinishedIsNullAndNoRefusalIsNoText) {
  const RefusalRate none = RefusalRateOf("new", Counts(0, 0, 2, 3));
  const nlohmann::json j = RefusalJson(none);
  EXPECT_TRUE(j["rate"].is_null());
  EXPECT_TRUE(j["ci95"].is_null());
  EXPECT_EQ(RefusalText({none, RefusalRateOf("clean", Counts(10, 0, 0, 0))}), "");
  // Once some run has a refusal, every run is listed, one without a finished row as such.
  EXPECT_EQ(RefusalText({none, RefusalRateOf("some", Counts(1, 1, 0, 0))}),
            "refusals (content filters; refused of finished rows, Wilson 95 %):\n  new: no finished row\n"
            "  some: 1 of 2 (50.0 %, 9.5-90.5 %)\n");
}

}  // namespace
}  // namespace visalign::backends
