// The reference server's probe profiles, end to end: a probe dataset, the server on 127.0.0.1 with a
// set distortion, its images fetched by the real images client and scored by `Evaluate`; the probe
// summary must recover the parameter that was set.
#include <gtest/gtest.h>

#include "testing/dirs.h"
#include "visalign/backends/backends.h"
#include "visalign/benchmarks/violin/dataset.h"
#include "visalign/benchmarks/violin/evaluate.h"
#include "visalign/benchmarks/violin/probes.h"
#include "visalign/benchmarks/violin/reference_server.h"
#include "visalign/core/io.h"

namespace visalign::violin {
namespace {

constexpr int kSide = 128;
const std::atomic<bool> kNoCancel{false};

TEST(ProbeProfiles, ParseWithTheirRanges) {
  EXPECT_EQ(ParseProfile("split-bias:0.5")->kind, Profile::Kind::kSplitBias);
  EXPECT_EQ(ParseProfile("pull:0.3")->param, 0.3);
  EXPECT_EQ(ParseProfile("ripples:24")->kind, Profile::Kind::kRipples);
  EXPECT_EQ(ParseProfile("shape-offset:-4")->param, -4.0);
  EXPECT_FALSE(ParseProfile("split-bias").ok());
  EXPECT_EQ(ParseProfile("split-bias:1.5").status().where(), "degradation profile");
  EXPECT_FALSE(ParseProfile("ripples:300").ok());
  EXPECT_FALSE(ParseProfile("pull:x").ok());
}

TEST(ProbeProfiles, OtherItemsAreServedExact) {
  ManifestItem plain;
  plain.targets = {{10, 200, 30}};
  EXPECT_EQ(RenderDegraded(plain, 8, 8, *ParseProfile("pull:0.5"), 0).rgb, RenderGroundTruth(plain, 8, 8).rgb);
}

class ProbeRecovery : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    ProbeOptions o;
    o.scale = 0.5;
    o.image_size = kSide;
    o.data_dir = testing::DataDir();
    items_ = new std::vector<ManifestItem>(BuildProbeItems(o).value());
    std::string text;
    for (const ManifestItem& it : *items_) text += ManifestLine(it) + "\n";
    ASSERT_TRUE(WriteFileAtomic(dir_->path() / "manifest.jsonl", text).ok());
  }
  static void TearDownTestSuite() {
    delete items_;
    delete dir_;
  }

  // The probe summary of the images the server draws under `profile` for the items of `family`.
  std::vector<ProbeEstimate> Serve(const std::string& profile, ProbeFamily family) {
    ReferenceServerOptions so;
    so.dataset = dir_->path();
    so.profile = profile;
    auto server = ReferenceServer::Start(so).value();
    backends::OpenAiImagesOptions o;
    o.endpoint.base_url = server->url();
    o.model = "reference";
    o.size = std::to_string(kSide) + "x" + std::to_string(kSide);
    auto backend = backends::MakeOpenAiImagesBackend(o, backends::MakeCurlTransport()).value();
    const std::filesystem::path images = scratch_.path() / profile;
    std::filesystem::create_directories(images);
    std::vector<ManifestItem> selected;
    for (const ManifestItem& item : *items_)
      if (item.probe->family == family) selected.push_back(item);
    for (const ManifestItem& item : selected) {
      auto answer = backend->Generate({item.id, item.prompt, 0, 7}, kNoCancel);
      EXPECT_TRUE(answer.ok()) << answer.error.message;
      if (answer.ok())
        EXPECT_TRUE(WriteFileAtomic(images / (item.id + "." + answer.value->extension), answer.value->bytes).ok());
    }
    ModelImages model = CollectImageDirectory(images, "reference", selected).value();
    EvaluateOptions eo;
    eo.show_progress = false;
    eo.bootstrap.resamples = 400;
    auto summary = Evaluate(selected, {model}, eo);
    EXPECT_TRUE(summary.ok()) << summary.status().ToString();
    EXPECT_TRUE(summary->unreadable.empty());
    return summary->probes;
  }

  static ProbeEstimate Find(const std::vector<ProbeEstimate>& probes, const std::string& condition,
                            const std::string& measure) {
    for (const ProbeEstimate& e : probes)
      if (e.condition == condition && e.measure == measure) return e;
    ADD_FAILURE() << "no estimate " << condition << " " << measure;
    return {};
  }

  static inline testing::TempDir* dir_ = nullptr;
  static inline std::vector<ManifestItem>* items_ = nullptr;
  testing::TempDir scratch_;
};

TEST_F(ProbeRecovery, ExactSplitsAreObeyedAndAHalfwayBiasGivesSlopeOneHalf) {
  const auto exact = Serve("exact", ProbeFamily::kInertia);
  EXPECT_NEAR(Find(exact, "all", "slope").value, 1.0, 0.005);
  EXPECT_NEAR(Find(exact, "all", "intercept").value, 0.0, 0.3);
  EXPECT_DOUBLE_EQ(Find(exact, "all", "within_2pp").value, 1.0);
  const auto biased = Serve("split-bias:0.5", ProbeFamily::kInertia);
  const ProbeEstimate slope = Find(biased, "all", "slope"), intercept = Find(biased, "all", "intercept");
  EXPECT_NEAR(slope.value, 0.5, 0.005);
  EXPECT_LE(slope.ci.lo, slope.value);
  EXPECT_GE(slope.ci.hi, slope.value);
  EXPECT_NEAR(intercept.value, 25.0, 0.3);
  EXPECT_LT(Find(biased, "all", "within_2pp").value, 0.5);
  EXPECT_EQ(slope.n, 44u);
}

TEST_F(ProbeRecovery, AThirtyPercentPullIsMeasuredAsThirtyPercent) {
  const auto none = Serve("exact", ProbeFamily::kGravity);
  EXPECT_NEAR(Find(none, "consistent", "pull").value, 0.0, 0.01);
  const auto pulled = Serve("pull:0.3", ProbeFamily::kGravity);
  for (const std::string condition : {"consistent", "conflicting"}) {
    const ProbeEstimate pull = Find(pulled, condition, "pull");
    EXPECT_NEAR(pull.value, 0.3, 0.03) << condition;
    EXPECT_LE(pull.ci.lo, 0.3 + 0.01) << condition;
    EXPECT_GE(pull.ci.hi, 0.3 - 0.01) << condition;
    EXPECT_EQ(pull.n, 12u);
  }
  // The drift costs precision against the uncontextualised colour, paired by colour.
  const ProbeEstimate diff = Find(pulled, "conflicting", "diff_de00");
  EXPECT_EQ(diff.reference, "none");
  EXPECT_GT(diff.ci.lo, 0.0);
  EXPECT_DOUBLE_EQ(Find(pulled, "neutral", "diff_de00").value, 0.0);
}

TEST_F(ProbeRecovery, RipplesUnderNoRipplesRaiseHighFrequencyEnergyAndEdges) {
  const auto rippled = Serve("ripples:48", ProbeFamily::kNegation);
  for (const std::string measure : {"diff_hf", "diff_ced"}) {
    const ProbeEstimate entity = Find(rippled, "entity", measure);
    EXPECT_GT(entity.ci.lo, 0.0) << measure;
    EXPECT_LT(entity.p_value, 0.05) << measure;
    EXPECT_DOUBLE_EQ(Find(rippled, "negated", measure).value, 0.0) << measure;
  }
}

TEST_F(ProbeRecovery, AShapeOffsetIsMeasuredAsPositionError) {
  const auto shifted = Serve("shape-offset:10", ProbeFamily::kGeometry);
  EXPECT_NEAR(Find(shifted, "pixels", "position_error_px").value, 10 * std::sqrt(2.0), 0.05);
  EXPECT_NEAR(Find(shifted, "pair", "distance_error_px").value, 0.0, 1e-9);
  EXPECT_DOUBLE_EQ(Find(shifted, "pixels", "failure_rate").value, 0.0);
  EXPECT_LT(Find(shifted, "pixels", "iou").value, 0.9);
}

}  // namespace
}  // namespace visalign::violin
