// PlanGeneration, the dry run of a generation: a run that does not exist, one to resume, one to
// take over, one that cannot be reused, and a store that fails a read (FaultInjectionStore).
#include "visalign/backends/generation_plan.h"

#include <gtest/gtest.h>

#include "backends/test_util.h"
#include "testing/dirs.h"
#include "testing/fault_injection_store.h"

namespace visalign::backends {
namespace {
using std::chrono::milliseconds;

const nlohmann::json kIdentity = {{"backend", "openai"}, {"model", "m1"}};

store::RunInfo Wanted(nlohmann::json identity = kIdentity) { return {"r", "violin", "abc", std::move(identity), ""}; }

std::vector<WorkItem> FourItems() {
  return {{"a", "red", 0, 1}, {"b", "green", 0, 2}, {"c", "blue", 0, 3}, {"d", "grey", 0, 4}};
}

GenerationPlanOptions Options() {
  GenerationPlanOptions o;
  o.max_attempts = 3;
  o.price_per_image = 0.5;
  o.store_display = "./s";
  return o;
}

// A store with run "r" (identity kIdentity) whose item a is done and b failed; c and d have no row.
class PlanGenerationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::make_unique<visalign::testing::FaultInjectionStore>(store::OpenStore(dir_.path()).value());
    store::RunStore& s = store_->base();
    ASSERT_TRUE(s.OpenRun(Wanted()).ok());
    ASSERT_TRUE(s.AddItems("r", {{"a", 0, "red", 1}, {"b", 0, "green", 2}}).ok());
    ASSERT_TRUE(s.ClaimRows("r", "me", {{"a", 0}, {"b", 0}}, milliseconds(60000), false).ok());
    Result<store::StoredImage> image = s.WriteImage("r", "a", 0, testing::TinyPng(), "png");
    ASSERT_TRUE(image.ok()) << image.status().ToString();
    ASSERT_TRUE(s.MarkDone("r", "a", 0, "me", *image, 1).ok());
    ASSERT_TRUE(s.MarkFailure("r", "b", 0, "me", "HTTP 400", 1, /*final=*/true).ok());
  }
  visalign::testing::TempDir dir_;
  std::unique_ptr<visalign::testing::FaultInjectionStore> store_;
};

TEST(PlanGeneration, WithoutAStoreEveryItemIsNewAndRequested) {
  const std::vector<WorkItem> work = FourItems();
  Result<GenerationPlan> plan = PlanGeneration(nullptr, Wanted(), work, Options());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->run, PlannedRun::kNew);
  EXPECT_EQ(PlannedRunName(plan->run), "new");
  EXPECT_EQ(plan->counts.total(), 0u);
  EXPECT_EQ(plan->selection.selected, 4u);
  ASSERT_EQ(plan->to_request.size(), 4u);
  EXPECT_EQ(plan->to_request.front(), &work[0]);  // pointers into the work given, in its order
  EXPECT_EQ(plan->max_requests, 12u);             // 4 images x 3 attempts
  ASSERT_TRUE(plan->cost.has_value());
  EXPECT_DOUBLE_EQ(*plan->cost, 2.0);
  GenerationPlanOptions free = Options();
  free.price_per_image.reset();
  EXPECT_FALSE(PlanGeneration(nullptr, Wanted(), work, free)->cost.has_value());
}

TEST_F(PlanGenerationTest, ResumingSkipsDoneRowsAndFailedOnesUnlessRetried) {
  const std::vector<WorkItem> work = FourItems();
  Result<GenerationPlan> plan = PlanGeneration(store_.get(), Wanted(), work, Options());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->run, PlannedRun::kResume);
  EXPECT_EQ(plan->counts.done, 1u);
  EXPECT_EQ(plan->counts.failed, 1u);
  EXPECT_EQ(plan->selection.already_done, 1u);
  EXPECT_EQ(plan->selection.skipped_failed, 1u);
  ASSERT_EQ(plan->to_request.size(), 2u);
  EXPECT_EQ(plan->to_request[0]->id, "c");
  EXPECT_DOUBLE_EQ(*plan->cost, 1.0);
  GenerationPlanOptions retry = Options();
  retry.retry_failed = true;
  EXPECT_EQ(PlanGeneration(store_.get(), Wanted(), work, retry)->to_request.size(), 3u);
  EXPECT_EQ(store_->calls(visalign::testing::StoreOperation::kOpenRun), 0);  // nothing written
}

TEST_F(PlanGenerationTest, AnotherIdentityWithADoneImageCannotReuseTheRun) {
  Result<GenerationPlan> plan =
      PlanGeneration(store_.get(), Wanted({{"backend", "openai"}, {"model", "m2"}}), FourItems(), Options());
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().where(), "store ./s");
}

TEST_F(PlanGenerationTest, AnotherIdentityBeforeAnyDoneImageTakesTheRunOverAndRetriesItsFailures) {
  ASSERT_TRUE(store_->base().DeleteRun("r").ok());
  store::RunStore& s = store_->base();
  ASSERT_TRUE(s.OpenRun(Wanted()).ok());
  ASSERT_TRUE(s.AddItems("r", {{"b", 0, "green", 2}}).ok());
  ASSERT_TRUE(s.ClaimRows("r", "me", {{"b", 0}}, milliseconds(60000), false).ok());
  ASSERT_TRUE(s.MarkFailure("r", "b", 0, "me", "HTTP 400", 1, /*final=*/true).ok());
  Result<GenerationPlan> plan =
      PlanGeneration(store_.get(), Wanted({{"backend", "openai"}, {"model", "m2"}}), FourItems(), Options());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->run, PlannedRun::kTakeOver);
  EXPECT_EQ(PlannedRunName(plan->run), "take_over");
  EXPECT_EQ(plan->to_request.size(), 4u);  // b's failure is asked again
}

TEST_F(PlanGenerationTest, ARowMadeForAnotherPromptIsAnError) {
  std::vector<WorkItem> work = FourItems();
  work[0].prompt = "crimson";
  Result<GenerationPlan> plan = PlanGeneration(store_.get(), Wanted(), work, Options());
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().where(), "run r in ./s");
}

TEST_F(PlanGenerationTest, AStoreThatCannotBeReadIsTheError) {
  store_->FailOperation(visalign::testing::StoreOperation::kRows, Status::Unavailable("disk gone", "store", "a disk"));
  Result<GenerationPlan> plan = PlanGeneration(store_.get(), Wanted(), FourItems(), Options());
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().what(), "disk gone");
  store_->FailOperation(visalign::testing::StoreOperation::kFindRun,
                        Status::Unavailable("no server", "store", "a server"));
  EXPECT_EQ(PlanGeneration(store_.get(), Wanted(), FourItems(), Options()).status().what(), "no server");
}

}  // namespace
}  // namespace visalign::backends
