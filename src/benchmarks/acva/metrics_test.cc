#include <gtest/gtest.h>

#include <cmath>

#include "visalign/benchmarks/acva/acva.h"

namespace visalign::acva {
namespace {

TEST(CosineDistance, IsZeroForIdenticalOneForOrthogonalTwoForOpposite) {
  EXPECT_EQ(CosineDistance({0.3f, 0.7f, 0.1f}, {0.3f, 0.7f, 0.1f}), 0.0);
  EXPECT_DOUBLE_EQ(CosineDistance({1, 0}, {0, 5}), 1.0);
  EXPECT_DOUBLE_EQ(CosineDistance({1, 1}, {-2, -2}), 2.0);
  EXPECT_DOUBLE_EQ(CosineDistance({0, 0}, {1, 0}), 1.0);
}

TEST(MeanPairwiseCosineDistance, ThreeIdenticalImagesHaveZeroDiversity) {
  const Embedding e = {0.12f, -0.5f, 0.33f, 0.9f};
  EXPECT_EQ(MeanPairwiseCosineDistance({e, e, e}), 0.0);
}

TEST(MeanPairwiseCosineDistance, AveragesTheThreePairs) {
  // Pairs: (x, y) orthogonal = 1, (x, -x) = 2, (y, -x) = 1 -> mean 4/3.
  EXPECT_DOUBLE_EQ(MeanPairwiseCosineDistance({{1, 0}, {0, 1}, {-1, 0}}), 4.0 / 3.0);
  EXPECT_TRUE(std::isnan(MeanPairwiseCosineDistance({{1, 0}})));
}

TEST(AverageLinkageClusters, IdenticalDescriptionsFormOneClusterWithZeroEntropy) {
  const Embedding e = {0.2f, 0.4f, 0.1f};
  const auto labels = AverageLinkageClusters({e, e, e}, 0.0);
  EXPECT_EQ(labels, (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(LabelEntropyBits(labels), 0.0);
}

TEST(AverageLinkageClusters, SeparatesTwoTightGroupsAndNumbersByFirstMember) {
  // Two groups near the x and y axes (within-group distances ~0.005, between ~1).
  const std::vector<Embedding> v = {{1, 0.1f}, {0, 1}, {1, 0}, {0.1f, 1}, {1, 0.05f}};
  const auto labels = AverageLinkageClusters(v, 0.2);
  EXPECT_EQ(labels, (std::vector<int>{0, 1, 0, 1, 0}));
  EXPECT_NEAR(LabelEntropyBits(labels), -(0.6 * std::log2(0.6) + 0.4 * std::log2(0.4)), 1e-12);
  // A threshold above the between-group average distance merges everything.
  EXPECT_EQ(AverageLinkageClusters(v, 1.5), (std::vector<int>{0, 0, 0, 0, 0}));
  // A zero threshold keeps distinct vectors apart.
  EXPECT_EQ(AverageLinkageClusters(v, 0.0), (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(AverageLinkageClusters, UsesTheAverageNotTheClosestMember) {
  // a = 0deg and b = 40deg merge first (d = 1 - cos 40 = 0.234). c = 85deg is 1 - cos 45 = 0.293 from b,
  // so single linkage would join it at threshold 0.3, but its average distance to {a, b} is
  // ((1 - cos 85) + 0.293) / 2 = 0.603.
  const double r = M_PI / 180.0;
  const std::vector<Embedding> v = {{1, 0},
                                    {static_cast<float>(std::cos(40 * r)), static_cast<float>(std::sin(40 * r))},
                                    {static_cast<float>(std::cos(85 * r)), static_cast<float>(std::sin(85 * r))}};
  EXPECT_EQ(AverageLinkageClusters(v, 0.3), (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(AverageLinkageClusters(v, 0.65), (std::vector<int>{0, 0, 0}));
}

TEST(LabelEntropyBits, ThreeDistinctLabelsGiveLog2Of3) {
  EXPECT_NEAR(LabelEntropyBits({0, 1, 2}), std::log2(3.0), 1e-12);
  EXPECT_EQ(LabelEntropyBits({}), 0.0);
}

TEST(LeaveOneOutCentroidAccuracy, WellSeparatedClustersScoreOne) {
  const std::vector<Embedding> a = {{1, 0.1f, 0}, {1, -0.1f, 0}, {0.9f, 0, 0.1f}};
  const std::vector<Embedding> b = {{0, 1, 0.1f}, {0.1f, 1, 0}, {0, 0.9f, -0.1f}};
  EXPECT_EQ(LeaveOneOutCentroidAccuracy(a, b), 1.0);
}

TEST(LeaveOneOutCentroidAccuracy, IdenticalClassesAreTiesWorthOneHalf) {
  const Embedding e = {1, 2, 3};
  EXPECT_EQ(LeaveOneOutCentroidAccuracy({e, e}, {e, e}), 0.5);
  EXPECT_TRUE(std::isnan(LeaveOneOutCentroidAccuracy({e}, {e, e})));
}

TEST(LeaveOneOutCentroidAccuracy, SwappedMembersAreMisclassified) {
  // Each class has one member that sits in the other class's region: those two are wrong.
  const std::vector<Embedding> a = {{1, 0}, {1, 0.05f}, {0, 1}};
  const std::vector<Embedding> b = {{0, 1}, {0.05f, 1}, {1, 0}};
  EXPECT_DOUBLE_EQ(LeaveOneOutCentroidAccuracy(a, b), 4.0 / 6.0);
}

Concept TwoQuestionConcept() {
  Concept c;
  c.id = "c";
  c.rubric = {{"q1", "", "", 3.0, Framework::kComponential}, {"q2", "", "", 1.0, Framework::kFrame}};
  return c;
}

TEST(Adequacy, IsTheWeightedMeanOfRatings) {
  const Concept c = TwoQuestionConcept();
  const std::vector<RubricAnswer> answers = {{"q1", 1.0, "", ""}, {"q2", 0.0, "", ""}};
  EXPECT_DOUBLE_EQ(*Adequacy(c, answers, false), 0.75);
  EXPECT_DOUBLE_EQ(*Adequacy(c, answers, true), 0.5);
}

TEST(Adequacy, AnInvalidAnswerMakesItUndefinedNotZero) {
  const Concept c = TwoQuestionConcept();
  EXPECT_FALSE(Adequacy(c, {{"q1", 1.0, "", ""}, {"q2", std::nullopt, "", "unparseable"}}, false).has_value());
}

// MedianSplit: a value is high with weight 1 above the median, 1/2 at it, 0 below.
TEST(MedianSplit, ValuesStrictlyAboveOrBelowTheMediansFallInOneQuadrant) {
  const QuadrantShares q = MedianSplit({{0.0, 0.0}, {1.0, 1.0}, {1.0, 0.0}, {0.0, 1.0}}, 0.5, 0.5);
  EXPECT_EQ(q.genuine, 0.25);   // (1, 1)
  EXPECT_EQ(q.pseudo, 0.25);    // (1, 0): images differ, the metaphor does not
  EXPECT_EQ(q.metaphor, 0.25);  // (0, 1)
  EXPECT_EQ(q.low, 0.25);       // (0, 0)
}

TEST(MedianSplit, AValueAtTheMedianIsHalfHighAndHalfLow) {
  // D_img median 0.2, H median 1.  h_D: 0, 1/2, 1.  h_H: 0, 1/2, 1/2.
  const QuadrantShares q = MedianSplit({{0.1, 0.0}, {0.2, 1.0}, {0.3, 1.0}}, 0.2, 1.0);
  EXPECT_DOUBLE_EQ(q.genuine, (0 * 0 + 0.5 * 0.5 + 1 * 0.5) / 3);
  EXPECT_DOUBLE_EQ(q.pseudo, (0 * 1 + 0.5 * 0.5 + 1 * 0.5) / 3);
  EXPECT_DOUBLE_EQ(q.metaphor, (1 * 0 + 0.5 * 0.5 + 0 * 0.5) / 3);
  EXPECT_DOUBLE_EQ(q.low, (1 * 1 + 0.5 * 0.5 + 0 * 0.5) / 3);
  EXPECT_DOUBLE_EQ(q.genuine + q.pseudo + q.metaphor + q.low, 1.0);
}

TEST(MedianSplit, WhenEveryHTiesTheHSplitIsEvenNotAllLow) {
  // Three metaphors in every group (H = log2 3 everywhere): no group is above the median, none below.
  const double h = std::log2(3.0);
  const QuadrantShares q = MedianSplit({{0.1, h}, {0.2, h}, {0.3, h}, {0.4, h}}, 0.25, h);
  EXPECT_EQ(q.genuine, 0.25);
  EXPECT_EQ(q.pseudo, 0.25);
  EXPECT_EQ(q.metaphor, 0.25);
  EXPECT_EQ(q.low, 0.25);
  // Identical images and one metaphor everywhere: nothing to split on either axis.
  const QuadrantShares flat = MedianSplit({{0.0, 0.0}, {0.0, 0.0}}, 0.0, 0.0);
  EXPECT_EQ(flat.genuine, 0.25);
  EXPECT_EQ(flat.low, 0.25);
}

TEST(MedianSplit, NoGroupsGiveUndefinedShares) {
  const QuadrantShares q = MedianSplit({}, 0.0, 0.0);
  EXPECT_TRUE(std::isnan(q.genuine) && std::isnan(q.pseudo) && std::isnan(q.metaphor) && std::isnan(q.low));
}

TEST(ScoreBin, SplitsTheUnitIntervalIntoFiveBins) {
  EXPECT_EQ(ScoreBin(0.0), 0);
  EXPECT_EQ(ScoreBin(0.19), 0);
  EXPECT_EQ(ScoreBin(0.2), 1);
  EXPECT_EQ(ScoreBin(0.75), 3);
  EXPECT_EQ(ScoreBin(0.8), 4);
  EXPECT_EQ(ScoreBin(1.0), 4);
}

}  // namespace
}  // namespace visalign::acva
