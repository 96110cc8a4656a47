// The run store contract, continued (instantiated for every store in store_test.cc): refused rows
// are final results with the provider's reason, and a row's provider job is kept for whoever
// works on it next, written only by its lease owner.
#include <gtest/gtest.h>

#include "store/store_contract.h"

namespace visalign::store {
namespace {
constexpr std::chrono::milliseconds kLong{60'000};

void AddTwoRows(RunStore& s) {
  ASSERT_TRUE(s.OpenRun(RunStoreContract::Info("r1")).ok());
  ASSERT_TRUE(s.AddItems("r1", {{"a", 0, "p", {}}, {"b", 0, "q", {}}}).ok());
}

TEST_P(RunStoreContract, ARefusedRowIsFinalWithItsReasonAndCountsAsAResult) {
  auto s = Open();
  AddTwoRows(*s);
  ASSERT_EQ(s->ClaimRows("r1", "w1", {{"a", 0}}, kLong, false).value().claimed.size(), 1u);
  EXPECT_EQ(s->MarkRefused("r1", "a", 0, "w2", "not mine", 3).value(), Completion::kLeaseLost);
  EXPECT_EQ(s->MarkRefused("r1", "a", 0, "w1", "Request Moderated", 3).value(), Completion::kRecorded);
  const Row a = s->Rows("r1").value()[0];
  EXPECT_EQ(a.status, RowStatus::kRefused);
  EXPECT_EQ(a.last_error, "Request Moderated");
  EXPECT_EQ(a.attempts, 1);
  EXPECT_EQ(a.lease_owner, "");
  EXPECT_STREQ(RowStatusName(a.status), "refused");
  // Never claimed again, not even when failed rows are retried; never completed again.
  EXPECT_TRUE(s->ClaimRows("r1", "w2", {{"a", 0}}, kLong, true).value().claimed.empty());
  EXPECT_EQ(s->MarkFailure("r1", "a", 0, "w1", "x", 1, true).value(), Completion::kLeaseLost);
  const RunCounts c = s->Counts("r1").value();
  EXPECT_EQ(c.refused, 1u);
  EXPECT_EQ(c.pending, 1u);
  EXPECT_EQ(c.total(), 2u);
  // A refusal is a result of the run's identity: another identity may not take the run over.
  RunInfo other = RunStoreContract::Info("r1");
  other.identity["model"] = "m2";
  EXPECT_FALSE(s->OpenRun(other).ok());
}

TEST_P(RunStoreContract, AJobIsKeptForTheNextClaimAndWrittenOnlyByTheLeaseOwner) {
  auto s = Open();
  AddTwoRows(*s);
  Claim first = s->ClaimRows("r1", "w1", {{"a", 0}, {"b", 0}}, kLong, false).value();
  EXPECT_EQ(first.jobs, (std::vector<std::string>{"", ""}));
  EXPECT_EQ(s->SetJob("r1", "a", 0, "w1", R"({"id":"j1"})").value(), Completion::kRecorded);
  EXPECT_EQ(s->SetJob("r1", "b", 0, "w2", "j2").value(), Completion::kLeaseLost);
  EXPECT_EQ(s->Rows("r1").value()[0].job, R"({"id":"j1"})");
  EXPECT_EQ(s->Rows("r1").value()[1].job, "");
  // The worker dies (its leases go): the next one gets the job with the row.
  ASSERT_TRUE(s->ReleaseLeases("r1", "w1").ok());
  Claim second = s->ClaimRows("r1", "w2", {{"b", 0}, {"a", 0}}, kLong, false).value();
  EXPECT_EQ(second.claimed, (std::vector<RowKey>{{"b", 0}, {"a", 0}}));
  EXPECT_EQ(second.jobs, (std::vector<std::string>{"", R"({"id":"j1"})"}));
  // A failed row taken over by a new identity starts without its old job.
  EXPECT_EQ(s->MarkFailure("r1", "a", 0, "w2", "HTTP 400", 1, true).value(), Completion::kRecorded);
  RunInfo other = RunStoreContract::Info("r1");
  other.identity["model"] = "m2";
  EXPECT_EQ(s->OpenRun(other).value(), RunOpening::kTakenOver);
  EXPECT_EQ(s->Rows("r1").value()[0].job, "");
  EXPECT_EQ(s->Rows("r1").value()[0].status, RowStatus::kPending);
}

}  // namespace
}  // namespace visalign::store
