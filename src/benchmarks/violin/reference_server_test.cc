// Reference server profiles: each degradation is the documented transformation of the GT; and
// its API flavors, served on 127.0.0.1 and asked by the real images client.
#include <gtest/gtest.h>
#include <httplib.h>

#include "testing/dirs.h"
#include "visalign/backends/backends.h"
#include "visalign/benchmarks/violin/dataset.h"
#include "visalign/benchmarks/violin/reference_server.h"
#include "visalign/core/io.h"

namespace visalign::violin {
namespace {

violin::ManifestItem Item(violin::Layout layout, std::vector<color::Srgb8> targets) {
  violin::ManifestItem it;
  it.id = "x";
  it.prompt = "p";
  it.layout = layout;
  it.targets = std::move(targets);
  return it;
}

std::array<uint8_t, 3> Px(const imaging::Image& img, int x, int y) {
  const uint8_t* p = img.pixel(x, y);
  return {p[0], p[1], p[2]};
}

TEST(ParseProfile, AcceptsTheDocumentedProfilesOnly) {
  EXPECT_EQ(ParseProfile("exact")->kind, Profile::Kind::kExact);
  EXPECT_EQ(ParseProfile("noise:8")->param, 8.0);
  EXPECT_EQ(ParseProfile("hue-shift:-30")->param, -30.0);
  EXPECT_EQ(ParseProfile("layout-5050")->kind, Profile::Kind::kLayout5050);
  EXPECT_FALSE(ParseProfile("noise").ok());
  EXPECT_FALSE(ParseProfile("noise:-1").ok());
  EXPECT_FALSE(ParseProfile("exact:3").ok());
  EXPECT_EQ(ParseProfile("blur").status().where(), "degradation profile");
}

TEST(RenderDegraded, ExactIsTheGroundTruth) {
  auto it = Item(violin::Layout::kQ4, {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {9, 9, 9}});
  EXPECT_EQ(RenderDegraded(it, 16, 16, *ParseProfile("exact"), 0).rgb, violin::RenderGroundTruth(it, 16, 16).rgb);
}

TEST(RenderDegraded, LayoutSwapsTheSplitOrientation) {
  auto h2 = Item(violin::Layout::kH2, {{200, 0, 0}, {0, 0, 200}});  // top red, bottom blue
  auto img = RenderDegraded(h2, 4, 4, *ParseProfile("layout-5050"), 0);
  EXPECT_EQ(Px(img, 0, 3), (std::array<uint8_t, 3>{200, 0, 0}));  // left half red, also at the bottom
  EXPECT_EQ(Px(img, 3, 0), (std::array<uint8_t, 3>{0, 0, 200}));  // right half blue, also at the top
}

TEST(RenderDegraded, GradientTextureAndObjectFollowTheirDefinitions) {
  auto it = Item(violin::Layout::kSingle, {{100, 100, 100}});
  auto g = RenderDegraded(it, 5, 1, *ParseProfile("gradient"), 0);
  EXPECT_EQ(Px(g, 0, 0), (std::array<uint8_t, 3>{68, 68, 68}));     // -32
  EXPECT_EQ(Px(g, 2, 0), (std::array<uint8_t, 3>{100, 100, 100}));  // centre unchanged
  EXPECT_EQ(Px(g, 4, 0), (std::array<uint8_t, 3>{132, 132, 132}));  // +32
  auto t = RenderDegraded(it, 16, 16, *ParseProfile("texture"), 0);
  EXPECT_EQ(Px(t, 0, 0)[0], 116);
  EXPECT_EQ(Px(t, 8, 0)[0], 84);
  auto o = RenderDegraded(it, 16, 16, *ParseProfile("object"), 0);
  EXPECT_EQ(Px(o, 8, 8), (std::array<uint8_t, 3>{155, 155, 155}));  // disc in the complement
  EXPECT_EQ(Px(o, 0, 0), (std::array<uint8_t, 3>{100, 100, 100}));
}

TEST(RenderDegraded, HueShiftRotatesTheLabHueAndNoiseIsRepeatable) {
  auto it = Item(violin::Layout::kSingle, {{180, 60, 60}});
  auto img = RenderDegraded(it, 2, 2, *ParseProfile("hue-shift:40"), 0);
  const auto p = Px(img, 0, 0);
  color::Lch before = color::LabToLch(color::Srgb8ToLab({180, 60, 60}));
  color::Lch after = color::LabToLch(color::Srgb8ToLab({p[0], p[1], p[2]}));
  EXPECT_NEAR(after.h - before.h, 40.0, 1.5);  // 8-bit rounding moves the hue slightly
  auto n1 = RenderDegraded(it, 8, 8, *ParseProfile("noise:10"), 3);
  auto n2 = RenderDegraded(it, 8, 8, *ParseProfile("noise:10"), 3);
  EXPECT_EQ(n1.rgb, n2.rgb);
  EXPECT_NE(n1.rgb, violin::RenderGroundTruth(it, 8, 8).rgb);
}

TEST(ParseApiFlavor, AcceptsTheThreeApis) {
  EXPECT_EQ(ParseApiFlavor("generic").value(), ApiFlavor::kGeneric);
  EXPECT_EQ(ParseApiFlavor("gpt-image-1").value(), ApiFlavor::kGptImage1);
  EXPECT_EQ(ParseApiFlavor("dall-e-3").value(), ApiFlavor::kDallE3);
  EXPECT_EQ(ParseApiFlavor("dalle3").status().where(), "API profile");
}

constexpr int kSide = 16;
const std::atomic<bool> kNoCancel{false};

// A reference server imitating one API on a small dataset, and the images client asking it.
class ApiFlavorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    violin::DatasetOptions o;
    o.variations = {1};
    o.scale = 0.01;
    o.write_images = false;
    o.show_progress = false;
    items_ = violin::BuildItems(o).value();
    std::string text;
    for (const auto& it : items_) text += violin::ManifestLine(it) + "\n";
    ASSERT_TRUE(WriteFileAtomic(dir_ / "manifest.jsonl", text).ok());
  }

  void Start(const std::string& api) {
    ReferenceServerOptions o;
    o.dataset = dir_;
    o.api = api;
    server_ = ReferenceServer::Start(o).value();
  }
  backends::Attempt<backends::GeneratedImage> Ask(const std::string& model, Json params = {}) {
    backends::OpenAiImagesOptions o;
    o.endpoint.base_url = server_->url();
    o.model = model;
    o.size = std::to_string(kSide) + "x" + std::to_string(kSide);
    o.params = params.is_null() ? Json::object() : std::move(params);
    auto backend = backends::MakeOpenAiImagesBackend(o, backends::MakeCurlTransport()).value();
    return backend->Generate({items_[0].id, items_[0].prompt, 0, 7}, kNoCancel);
  }
  // The ground truth of the first item, as the exact profile serves it.
  std::string GroundTruthRgb() const {
    auto img = violin::RenderGroundTruth(items_[0], kSide, kSide);
    return std::string(img.rgb.begin(), img.rgb.end());
  }
  static std::string Rgb(const backends::GeneratedImage& image) {
    auto img = imaging::DecodeImage(image.bytes, "answer").value();
    return std::string(img.rgb.begin(), img.rgb.end());
  }

  visalign::testing::TempDir scratch_;
  const std::filesystem::path dir_ = scratch_.path();
  std::vector<violin::ManifestItem> items_;
  std::unique_ptr<ReferenceServer> server_;
};

TEST_F(ApiFlavorTest, GptImage1TakesTheGptImageBodyAndRejectsResponseFormatAsOpenAiDoes) {
  Start("gpt-image-1");
  auto ok = Ask("gpt-image-1");
  ASSERT_TRUE(ok.ok()) << ok.error.message;
  EXPECT_EQ(ok.value->extension, "png");
  EXPECT_EQ(Rgb(*ok.value), GroundTruthRgb());
  // The generic body (with response_format) is refused like the real API refuses it, for good.
  auto generic = Ask("reference");
  ASSERT_FALSE(generic.ok());
  EXPECT_EQ(generic.error.kind, backends::ErrorKind::kClient);
  EXPECT_FALSE(generic.error.retryable());
  EXPECT_EQ(generic.error.message.rfind("HTTP 400: Unknown parameter: 'response_format'.", 0), 0u)
      << generic.error.message;
  // ... unless --param response_format=null removes the field.
  EXPECT_TRUE(Ask("reference", {{"response_format", nullptr}}).ok());
  auto seed = Ask("gpt-image-1", {{"seed", "{seed}"}});
  ASSERT_FALSE(seed.ok());
  EXPECT_EQ(seed.error.message.rfind("HTTP 400: Unknown parameter: 'seed'.", 0), 0u) << seed.error.message;
}

TEST_F(ApiFlavorTest, GptImage1FieldsPassThroughAndOutputFormatIsHonoured) {
  Start("gpt-image-1");
  auto webp = Ask("gpt-image-1", {{"output_format", "webp"}, {"background", "transparent"}, {"quality", "high"}});
  ASSERT_TRUE(webp.ok()) << webp.error.message;
  EXPECT_EQ(webp.value->extension, "webp");
  EXPECT_EQ(Rgb(*webp.value), GroundTruthRgb());  // lossless
  auto jpeg = Ask("gpt-image-1", {{"output_format", "jpeg"}});
  ASSERT_TRUE(jpeg.ok()) << jpeg.error.message;
  EXPECT_EQ(jpeg.value->extension, "jpg");
  auto bad = Ask("gpt-image-1", {{"quality", "ultra"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error.message.rfind("HTTP 400: Invalid value: 'ultra'. Supported values are: 'low', 'medium', "
                                    "'high', and 'auto'.",
                                    0),
            0u)
      << bad.error.message;
}

TEST_F(ApiFlavorTest, ErrorsHaveOpenAisShape) {
  Start("gpt-image-1");
  httplib::Client client(server_->url());
  auto res =
      client.Post("/v1/images/generations",
                  Json{{"model", "gpt-image-1"}, {"prompt", items_[0].prompt}, {"response_format", "b64_json"}}.dump(),
                  "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(Json::parse(res->body), Json::parse(R"({"error": {"message": "Unknown parameter: 'response_format'.",
                                                "type": "invalid_request_error", "param": "response_format",
                                                "code": "unknown_parameter"}})"));
}

TEST_F(ApiFlavorTest, DallE3AnswersUrlsWhichTheClientFetchesAndRefusesGptImageFields) {
  Start("dall-e-3");
  auto b64 = Ask("dall-e-3", {{"quality", "hd"}, {"style", "natural"}});
  ASSERT_TRUE(b64.ok()) << b64.error.message;
  EXPECT_EQ(Rgb(*b64.value), GroundTruthRgb());
  auto url = Ask("dall-e-3", {{"response_format", "url"}});
  ASSERT_TRUE(url.ok()) << url.error.message;
  EXPECT_EQ(Rgb(*url.value), GroundTruthRgb());
  // A body without response_format gets dall-e-3's default: a URL.
  auto by_default = Ask("dall-e-3", {{"response_format", nullptr}});
  ASSERT_TRUE(by_default.ok()) << by_default.error.message;
  auto webp = Ask("dall-e-3", {{"output_format", "webp"}});
  ASSERT_FALSE(webp.ok());
  EXPECT_EQ(webp.error.message.rfind("HTTP 400: Unknown parameter: 'output_format'.", 0), 0u) << webp.error.message;
  auto n = server_->Stats()["by_status"];
  EXPECT_EQ(n["200"], 3);
  EXPECT_EQ(n["400"], 1);
}

}  // namespace
}  // namespace visalign::violin
