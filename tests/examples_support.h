// What tests/examples_test.cc and help_examples_test.cc run their examples with, apart from the
// sandbox's tables (examples_sandbox.h): the local imitations of remote services (an OpenAI-compatible
// embeddings server, the Hub repositories, participants playing a `visalign serve` study) and the
// sandbox helpers (copying the base sandbox, free ports, the first error line of an output).
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <thread>

#include "clip/safetensors.h"
#include "clip/torch_checkpoint_testing.h"
#include "hub/fake_hub_testing.h"
#include "testing/cli_runner.h"
#include "testing/examples.h"
#include "testing/postgres_server.h"
#include "visalign/backends/backends.h"
#include "visalign/backends/http_server.h"
#include "visalign/core/base64.h"
#include "visalign/core/io.h"
#include "visalign/core/json.h"
#include "visalign/imaging/image.h"

namespace visalign::testing::examples {

namespace fs = std::filesystem;

// An OpenAI-compatible /v1/embeddings server for `hues run --embeddings-endpoint`: an image (a PNG
// data URL) embeds as its first pixel's colour, a text as a hash of it, so different colours and
// words get different directions (and an image is not embedded as text).
class EmbeddingServer {
 public:
  static constexpr int kDimensions = 8;
  EmbeddingServer() {
    server_.Route(
        "POST", "/v1/embeddings", [](const backends::HttpServerRequest& req, backends::HttpServerResponse& res) {
          const Json body = Json::parse(req.body, nullptr, false);
          if (!body.is_object() || !body.contains("input") || !body["input"].is_array())
            return res.SetJson(400, {{"error", {{"message", "expected {\"input\": [...]}"}}}});
          Json data = Json::array();
          for (size_t i = 0; i < body["input"].size(); ++i) {
            const std::string input = body["input"][i].is_string() ? body["input"][i].get<std::string>() : "";
            std::vector<float> v(kDimensions, 0.0f);
            constexpr std::string_view kPrefix = "data:image/png;base64,";
            if (input.rfind(kPrefix, 0) == 0) {
              const auto png = DecodeBase64(std::string_view(input).substr(kPrefix.size()));
              if (!png)
                return res.SetJson(400, {{"error", {{"message", "input " + std::to_string(i) + " is not base64"}}}});
              const auto image = imaging::DecodeImage(*png, "request");
              if (!image.ok())
                return res.SetJson(400, {{"error", {{"message", "input " + std::to_string(i) + " is not a PNG"}}}});
              for (int c = 0; c < 3; ++c) {
                v[c] = image->rgb[c] / 255.0f;
                v[c + 3] = 1.0f - image->rgb[c] / 255.0f;
              }
            } else {
              uint64_t h = std::hash<std::string>{}(input);
              for (int c = 0; c < kDimensions; ++c, h = h * 6364136223846793005ull + 1442695040888963407ull)
                v[c] = static_cast<float>((h >> 40) % 1000) / 1000.0f;
            }
            data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", v}});
          }
          res.SetJson(200, {{"object", "list"}, {"data", data}});
        });
  }
  Status Start() { return server_.Start(); }
  std::string url() const { return server_.url(); }

 private:
  backends::HttpServer server_{backends::HttpServerOptions{}};
};

// clip-tiny's weights as the torch.save pytorch_model.bin some Hub repositories ship instead of
// safetensors (ViTamin's), written by the byte-level writers of clip/torch_checkpoint_testing.h.
inline std::string ClipTinyTorchCheckpoint() {
  namespace t = clip::testing;
  const clip::SafetensorsFile file =
      clip::SafetensorsFile::Open(SharedDir() / "fixtures/clip-tiny/model.safetensors").value();
  std::vector<std::pair<std::string, std::string>> items, storages;
  for (const clip::TensorInfo& tensor : file.tensors()) {
    std::vector<int64_t> stride(tensor.shape.size(), 1);
    for (size_t i = stride.size(); i-- > 1;) stride[i - 1] = stride[i] * tensor.shape[i];
    const std::string key = std::to_string(storages.size());
    items.emplace_back(tensor.name,
                       t::PickleTensor("FloatStorage", key, tensor.NumElements(), 0, tensor.shape, stride));
    storages.emplace_back("archive/data/" + key, t::FloatBytes(clip::SafetensorsFile::ToFloat(tensor, "").value()));
  }
  std::vector<std::pair<std::string, std::string>> entries = {{"archive/data.pkl", t::PickleStateDict(items)}};
  entries.insert(entries.end(), storages.begin(), storages.end());
  entries.emplace_back("archive/version", "3\n");
  return t::StoredZip(entries);
}

// The Hub repositories the examples name: the tiny fixtures in their layout; any other repository
// (open_clip's pretrained table, which `hues run --published` sweeps) answers with the tiny CLIP, as
// safetensors or as the .bin a table entry may name.
inline void AddHubRepositories(hub::testing::FakeHub& hub) {
  constexpr char kCommit[] = "89abcdef0123456789abcdef0123456789abcdef";
  const auto bytes = [](const std::string& path) { return ReadFile(SharedDir() / "fixtures" / path).value(); };
  hub.AddRepo("timm/ViT-B-16-SigLIP", hub::testing::SiglipTinyRepo(SharedDir() / "fixtures", kCommit));
  hub::testing::FakeRepo clip;
  clip.commit = kCommit;
  clip.files = {{"open_clip_config.json", bytes("clip-tiny/config.json")},
                {"*.safetensors", bytes("clip-tiny/model.safetensors")},
                {"*.bin", ClipTinyTorchCheckpoint()}};
  hub.SetFallback(clip);
}

// Plays a study on a `visalign serve` at `url` over its HTTP API, as participants would: kPlayers
// sessions with Prolific parameters, each onboarded, half of them taking the colour-vision screen
// (reading no plate: flagged colour-blind in the export; the others skip it), playing all its
// words (the attention check answered right), the first also painting a regions map; with `acva`,
// each also rates kRatings images (fewest ratings first). A 429 (the study's rate limits) is waited
// out. "" or what went wrong.
inline std::string PlayStudy(const std::string& url, bool acva) {
  static std::atomic<int> plays{0};
  const std::string play =
      "play" + std::to_string(getpid()) + "-" + std::to_string(plays++) + "-";  // unique client ids
  constexpr int kPlayers = 12;
  constexpr int kRatings = 8;
  httplib::Client raw(url);
  raw.set_read_timeout(30);
  struct Client {
    httplib::Client& c;
    static httplib::Result Retry(const std::function<httplib::Result()>& call) {
      for (int i = 0;; ++i) {
        httplib::Result r = call();
        if (!r || r->status != 429 || i == 100) return r;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    }
    httplib::Result Post(const std::string& path, const std::string& body, const char* type) {
      return Retry([&] { return c.Post(path, body, type); });
    }
    httplib::Result Post(const std::string& path, const httplib::Headers& h, const std::string& body,
                         const char* type) {
      return Retry([&] { return c.Post(path, h, body, type); });
    }
    httplib::Result Get(const std::string& path, const httplib::Headers& h) {
      return Retry([&] { return c.Get(path, h); });
    }
  } client{raw};
  const auto fail = [](const std::string& what, const httplib::Result& r) {
    return "playing the study: " + what + ": " +
           (r ? std::to_string(r->status) + " " + r->body.substr(0, 200) : "no answer");
  };
  for (int p = 0; p < kPlayers; ++p) {
    const Json session = {{"consent", true},
                          {"params",
                           {{"PROLIFIC_PID", "pid" + std::to_string(p)},
                            {"STUDY_ID", "study"},
                            {"SESSION_ID", "s" + std::to_string(p)}}}};
    auto started = client.Post("/api/session", session.dump(), "application/json");
    if (!started || started->status != 201) return fail("POST /api/session", started);
    const std::string set_cookie = started->get_header_value("Set-Cookie");
    const httplib::Headers cookie = {{"Cookie", set_cookie.substr(0, set_cookie.find(';'))}};
    const Json profile = {{"language", "en"},
                          {"gender", p % 2 ? "female" : "male"},
                          {"age_range", "30-39"},
                          {"colorblind", "no"},
                          {"metadata", {{"user_agent", "examples_test"}, {"viewport", "1280x800"}}}};
    auto onboarded = client.Post("/api/profile", cookie, profile.dump(), "application/json");
    if (!onboarded || onboarded->status != 200) return fail("POST /api/profile", onboarded);
    if (Json::parse(onboarded->body).value("cvd_screen", false) && p % 2 == 1) {
      auto plates = client.Get("/api/screen", cookie);
      if (!plates || plates->status != 200) return fail("GET /api/screen", plates);
      const Json answers = {{"answers", Json::array_t(Json::parse(plates->body)["plates"].size(), nullptr)}};
      auto screened = client.Post("/api/screen", cookie, answers.dump(), "application/json");
      if (!screened || screened->status != 200) return fail("POST /api/screen", screened);
    }
    auto next = client.Get("/api/next", cookie);
    if (!next || next->status != 200) return fail("GET /api/next", next);
    Json item = Json::parse(next->body);
    for (int n = 0; !item.value("done", true); ++n) {
      // A cell spread over the board by player and word: rows A..P, columns 1..30.
      const int k = (p * 7 + n * 13) % 480;
      const std::string cell = item.value("kind", "") == "attention"
                                   ? item["cell"].get<std::string>()
                                   : std::string(1, static_cast<char>('A' + k % 16)) + std::to_string(1 + k / 16);
      const Json answer = {{"index", item["index"]},
                           {"coordinate", cell},
                           {"client_id", play + "answer-" + std::to_string(p) + "-" + std::to_string(n)}};
      auto answered = client.Post("/api/answer", cookie, answer.dump(), "application/json");
      if (!answered || answered->status != 201) return fail("POST /api/answer", answered);
      item = Json::parse(answered->body);
    }
    if (p == 0) {
      // Every cell (a consensus needs each painted): the 8 categories in bands of columns.
      const char* const categories[] = {"Red", "Orange", "Yellow", "Green", "Blue", "Purple", "Pink", "Brown"};
      Json cells = Json::object();
      for (int row = 0; row < 16; ++row)
        for (int column = 1; column <= 30; ++column)
          cells[std::string(1, static_cast<char>('A' + row)) + std::to_string(column)] =
              categories[(column - 1) * 8 / 30];
      const Json painting = {{"client_id", play + "painting"}, {"cells", cells}};
      auto painted = client.Post("/api/regions", cookie, painting.dump(), "application/json");
      if (!painted || painted->status != 200) return fail("POST /api/regions", painted);
    }
    for (int n = 0; acva && n < kRatings; ++n) {
      auto image = client.Get("/api/acva/next?language=en", cookie);
      if (!image || image->status != 200) return fail("GET /api/acva/next", image);
      const Json form = Json::parse(image->body);
      if (form.value("done", true)) break;
      Json answers = Json::object();
      for (const Json& q : form["form"]["questions"]) answers[q["id"].get<std::string>()] = (n % 3) * 0.5;
      const std::string id = form["image_url"].get<std::string>().substr(std::string("/api/acva/image?id=").size());
      const Json rating = {{"client_id", play + "rating-" + std::to_string(p) + "-" + std::to_string(n)},
                           {"image", id},
                           {"language", "en"},
                           {"answers", answers}};
      auto rated = client.Post("/api/acva/rating", cookie, rating.dump(), "application/json");
      if (!rated || rated->status != 200) return fail("POST /api/acva/rating", rated);
    }
  }
  return "";
}

// A copy of `from` at `to`, image files hard-linked (the stores and datasets hold thousands; visalign
// writes files anew, through a temporary and a rename, never into an existing one), the rest copied.
inline void CopyTree(const fs::path& from, const fs::path& to) {
  if (fs::is_symlink(from) || !fs::is_directory(from)) {
    fs::copy(from, to, fs::copy_options::copy_symlinks);
    return;
  }
  fs::create_directory(to);
  for (const auto& entry : fs::directory_iterator(from)) {
    const fs::path target = to / entry.path().filename();
    const std::string ext = entry.path().extension().string();
    if (!entry.is_symlink() && entry.is_regular_file() && (ext == ".png" || ext == ".jpg" || ext == ".webp"))
      fs::create_hard_link(entry.path(), target);
    else
      CopyTree(entry.path(), target);
  }
}

// A group's sandbox gets a copy of the base's entries its commands name (copying all of it for each
// group is slow), except a folder the group makes itself: the first time it names it is as
// `--out NAME` (README's `violin dataset --out violin-demo`; an existing non-empty --out is refused).
// The default run store ./visalign-store goes to a group that makes no runs (generate, acva run)
// and names it or a run (`store rm --run old-attempt`, `acva judge --run my-model`); a group making
// runs makes its store itself.
inline void CopyBase(const fs::path& base, const fs::path& dir, const std::string& group_text) {
  const bool makes_runs =
      std::regex_search(group_text, std::regex(R"((^|\n)visalign (violin generate|acva generate|acva run) )"));
  for (const auto& entry : fs::directory_iterator(base)) {
    std::string name = entry.path().filename().string();
    if (name == "bin" || name.starts_with(".")) continue;  // on PATH from the base; the base's own files
    std::smatch m;
    const bool named =
        std::regex_search(group_text, m, std::regex("(^|[\\s=/'\"])(--out )?" + name + "([\\s/'\".]|$)"));
    if (name == "visalign-store") {
      if (!makes_runs && (named || group_text.find(" --run ") != std::string::npos)) CopyTree(entry.path(), dir / name);
      continue;
    }
    if (!named) continue;
    // `--out NAME` or `--out NAME/` makes NAME; `--out NAME/file` writes into it.
    const std::string after = m.suffix().str();
    const bool makes =
        m[2].matched && !(m[3] == "/" && !after.empty() && !std::isspace(static_cast<unsigned char>(after[0])));
    if (entry.is_directory() && makes) continue;
    CopyTree(entry.path(), dir / name);
  }
}

inline int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t n = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
  close(fd);
  return ntohs(a.sin_port);
}

inline bool PortOpen(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

inline std::string ReadText(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The first line containing "error:", or "".
inline std::string ErrorLine(const std::string& text) {
  size_t at = text.find("error:");
  if (at == std::string::npos) return "";
  size_t b = text.rfind('\n', at), e = text.find('\n', at);
  return text.substr(b == std::string::npos ? 0 : b + 1, e == std::string::npos ? std::string::npos : e - b - 1);
}

}  // namespace visalign::testing::examples
