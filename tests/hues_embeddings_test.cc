// `hues run` from embeddings made anywhere: a native SigLIP run saves its embeddings; the same
// embeddings read from that file (--embeddings) and served by a loopback OpenAI-compatible
// /v1/embeddings server (--embeddings-endpoint) give byte-identical predictions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <mutex>

#include "testing/cli_runner.h"
#include "visalign/backends/backends.h"
#include "visalign/backends/http_server.h"
#include "visalign/benchmarks/hues/hues.h"
#include "visalign/core/base64.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/imaging/image.h"

namespace visalign {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::RunVisalign;
using testing::SharedDir;
using testing::TempDir;

constexpr const char* kTemplate = "a photo of {}";

std::string Siglip() { return (SharedDir() / "fixtures/siglip-tiny").string(); }

// Serves saved embeddings as an embedding server would compute them: the k-th image input is board
// cell k (its PNG must have that cell's colour), a text is looked up by its prompt.
class SavedEmbeddingServer {
 public:
  explicit SavedEmbeddingServer(const hues::HuesEmbeddings& e, const hues::Board& board) : e_(e), board_(board) {
    server_.Route(
        "POST", "/v1/embeddings", [this](const backends::HttpServerRequest& req, backends::HttpServerResponse& res) {
          std::lock_guard<std::mutex> lock(mutex_);
          const Json body = Json::parse(req.body);
          models_.push_back(body.value("model", ""));
          Json data = Json::array();
          for (size_t i = 0; i < body["input"].size(); ++i) {
            const std::string input = body["input"][i];
            const float* row = Lookup(input);
            if (row == nullptr) {
              res.SetJson(400, {{"error", {{"message", "unexpected input " + input.substr(0, 40)}}}});
              return;
            }
            data.push_back(
                {{"object", "embedding"}, {"index", i}, {"embedding", std::vector<float>(row, row + e_.board.cols)}});
          }
          res.SetJson(200, {{"object", "list"}, {"data", data}});
        });
    EXPECT_TRUE(server_.Start().ok());
  }
  std::string url() const { return server_.url(); }
  std::vector<std::string> models() {
    std::lock_guard<std::mutex> lock(mutex_);
    return models_;
  }

 private:
  const float* Lookup(const std::string& input) {
    constexpr std::string_view kPrefix = "data:image/png;base64,";
    if (input.rfind(kPrefix, 0) == 0) {
      const auto png = DecodeBase64(std::string_view(input).substr(kPrefix.size()));
      if (!png || next_cell_ > hues::kCells) return nullptr;
      const auto image = imaging::DecodeImage(*png, "request");
      // The probe after the board: cell 0's colour at twice the size embeds as cell 0.
      if (next_cell_ == hues::kCells) {
        const hues::Cell& first = board_.cell(0);
        if (!image.ok() || image->width != 2 * hues::kEndpointPatchSize || image->rgb[0] != first.rgb.r ||
            image->rgb[1] != first.rgb.g || image->rgb[2] != first.rgb.b)
          return nullptr;
        ++next_cell_;
        return e_.board.row(0);
      }
      const hues::Cell& cell = board_.cell(next_cell_);
      if (!image.ok() || image->width != hues::kEndpointPatchSize || image->rgb[0] != cell.rgb.r ||
          image->rgb[1] != cell.rgb.g || image->rgb[2] != cell.rgb.b)
        return nullptr;
      return e_.board.row(next_cell_++);
    }
    for (size_t w = 0; w < e_.words.size(); ++w) {
      if (hues::ApplyTemplate(kTemplate, e_.words[w]).value() == input) return e_.texts.row(static_cast<int>(w));
    }
    return nullptr;
  }

  const hues::HuesEmbeddings& e_;
  const hues::Board& board_;
  backends::HttpServer server_{backends::HttpServerOptions{}};
  std::mutex mutex_;
  int next_cell_ = 0;
  std::vector<std::string> models_;
};

TEST(HuesEmbeddings, FileAndEndpointPredictExactlyAsTheNativeModel) {
  TempDir dir;
  const std::string saved = (dir / "siglip.safetensors").string();
  const auto native =
      RunVisalign({"hues", "run", "--clip-model", Siglip(), "--nonsense", "--template", kTemplate, "--no-cache",
                   "--save-embeddings", saved, "--out", (dir / "native.csv").string(), "--json"});
  ASSERT_EQ(native.exit_code, 0) << native.err;
  EXPECT_EQ(Json::parse(native.out)["source"], "clip-model");
  const std::string expected = ReadFile(dir / "native.csv").value();

  const auto from_file = RunVisalign({"hues", "run", "--embeddings", saved, "--name", "siglip-tiny", "--nonsense",
                                      "--template", kTemplate, "--out", (dir / "file.csv").string()});
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_EQ(ReadFile(dir / "file.csv").value(), expected);

  const hues::HuesEmbeddings e = hues::ReadEmbeddingsFile(saved).value();
  // The 100 study words plus every nonsense word `--nonsense` plays.
  EXPECT_EQ(e.words.size(),
            hues::Vocabulary::Default().value().words().size() + hues::AllNonsenseWords().value().size());
  const hues::Board board = hues::Board::Default(hues::Chromaticity::kDisplay).value();
  SavedEmbeddingServer server(e, board);
  const auto from_endpoint =
      RunVisalign({"hues", "run", "--embeddings-endpoint", server.url(), "--embeddings-model", "siglip-tiny",
                   "--nonsense", "--template", kTemplate, "--out", (dir / "endpoint.csv").string(), "--json"});
  ASSERT_EQ(from_endpoint.exit_code, 0) << from_endpoint.err;
  EXPECT_EQ(Json::parse(from_endpoint.out)["model"], "siglip-tiny");
  EXPECT_EQ(ReadFile(dir / "endpoint.csv").value(), expected);
  const std::vector<std::string> models = server.models();
  ASSERT_EQ(models.size(), (480u + 1u + 116u + 31u) / 32u);  // batches of 32 inputs (480 cells, the probe, words)
  EXPECT_EQ(models.front(), "siglip-tiny");

  // The server answers 400 for inputs it has no embedding of: a one-line error naming the flag.
  const auto refused = RunVisalign(
      {"hues", "run", "--embeddings-endpoint", server.url(), "--name", "x", "--out", (dir / "refused.csv").string()});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("--embeddings-endpoint"));
  EXPECT_THAT(refused.err, HasSubstr("unexpected input"));
}

// A text embedding model (OpenAI's, TEI) takes the image data URLs as text. One that truncates its
// input gives every board colour the same embedding; one that reads it all gives the same colour at
// two sizes different embeddings. Both are refused in one line instead of ranking noise.
class TextEmbeddingServer {
 public:
  explicit TextEmbeddingServer(size_t truncate_at) : truncate_at_(truncate_at) {
    server_.Route("POST", "/v1/embeddings",
                  [this](const backends::HttpServerRequest& req, backends::HttpServerResponse& res) {
                    const Json body = Json::parse(req.body);
                    Json data = Json::array();
                    for (size_t i = 0; i < body["input"].size(); ++i) {
                      const std::string text = body["input"][i].get<std::string>().substr(0, truncate_at_);
                      std::vector<float> v(16);
                      uint64_t h = std::hash<std::string>{}(text);
                      for (float& x : v) {
                        h = h * 6364136223846793005ull + 1442695040888963407ull;
                        x = static_cast<float>(static_cast<int64_t>(h >> 33) % 1000) / 1000.0f;
                      }
                      data.push_back({{"index", i}, {"embedding", v}});
                    }
                    res.SetJson(200, {{"data", data}});
                  });
    EXPECT_TRUE(server_.Start().ok());
  }
  std::string url() const { return server_.url(); }

 private:
  size_t truncate_at_;
  backends::HttpServer server_{backends::HttpServerOptions{}};
};

TEST(HuesEmbeddings, AServerThatEmbedsImagesAsTextIsRefused) {
  TempDir dir;
  for (size_t truncate_at : {size_t{40}, std::string::npos}) {
    TextEmbeddingServer server(truncate_at);
    const auto r = RunVisalign(
        {"hues", "run", "--embeddings-endpoint", server.url(), "--name", "text", "--out", (dir / "text.csv").string()});
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_THAT(r.err, HasSubstr("error: the server embeds images as text: "));
    EXPECT_THAT(r.err, HasSubstr(truncate_at == 40 ? "all 480 board colours got the same embedding"
                                                   : "one solid colour sent at two sizes got different embeddings"));
    EXPECT_EQ(r.err.find("error: "), r.err.rfind("error: ")) << "one error line: " << r.err;
    EXPECT_THAT(r.err, HasSubstr("(--embeddings-endpoint " + server.url() + "): "));
    EXPECT_FALSE(fs::exists(dir / "text.csv"));
  }
}

TEST(HuesEmbeddings, BadSourcesAreOneLineErrors) {
  TempDir dir;
  const std::string out = (dir / "x.csv").string();
  const auto none = RunVisalign({"hues", "run", "--out", out});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err,
              HasSubstr("one of --clip-model DIR, --models DIR, --embeddings FILE or --embeddings-endpoint URL"));

  const auto both =
      RunVisalign({"hues", "run", "--clip-model", Siglip(), "--embeddings", "e.safetensors", "--out", out});
  EXPECT_EQ(both.exit_code, 2);

  const auto missing = RunVisalign({"hues", "run", "--embeddings", (dir / "nope.safetensors").string(), "--out", out});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("--embeddings"));

  const std::string saved = (dir / "e.safetensors").string();
  ASSERT_EQ(RunVisalign({"hues", "run", "--clip-model", Siglip(), "--words", (dir / "w.txt").string(), "--no-cache",
                         "--save-embeddings", saved, "--out", out},
                        {})
                .exit_code,
            2);  // no word file yet
  dir.Write("w.txt", "red\n");
  ASSERT_EQ(RunVisalign({"hues", "run", "--clip-model", Siglip(), "--words", (dir / "w.txt").string(), "--no-cache",
                         "--save-embeddings", saved, "--out", out})
                .exit_code,
            0);
  const auto other_template = RunVisalign({"hues", "run", "--embeddings", saved, "--words", (dir / "w.txt").string(),
                                           "--template", "the color {}", "--out", out});
  EXPECT_EQ(other_template.exit_code, 2);
  EXPECT_THAT(other_template.err, HasSubstr("made with template \"{}\""));
  const auto other_words = RunVisalign({"hues", "run", "--embeddings", saved, "--out", out});
  EXPECT_EQ(other_words.exit_code, 2);
  EXPECT_THAT(other_words.err, HasSubstr("no embedding of the word"));
}

}  // namespace
}  // namespace visalign
