// VIOLIN's reference server: an OpenAI-compatible image server that answers VIOLIN prompts with their
// correct image, optionally degraded, failing or rate-limited on purpose, and accepting the request
// fields of a chosen real API (ApiFlavor). It is the test double for every backend test and the way
// users calibrate the pipeline (a known degradation must produce a known score). It serves on the
// backends::HttpServer scaffold (`visalign violin reference-server`). Endpoints:
//   POST /v1/images/generations  {"prompt", "size": "WxH", "n", ...} (fields per ApiFlavor)
//   GET  /images/<token>.png     images handed out as URLs (each served once)
//   GET  /health                 {"status": "ok"}
//   GET  /stats                  request counts overall, per status and per prompt
// With --api gemini, bfl, dashscope, ... it imitates that provider instead (provider_imitation.h):
//   POST /v1beta/models/<model>:generateContent                      (gemini)
//   POST /v1/<model>, GET /v1/get_result?id=                          (bfl)
//   POST /api/v1/services/aigc/text2image/image-synthesis, GET /api/v1/tasks/<id>  (dashscope)
//   POST /v1/models/<owner>/<name>/predictions, GET /v1/predictions/<id>  (replicate)
//   POST /<app>/<model...>, GET /<app>/requests/<id>/status, GET /<app>/requests/<id>  (fal)
//   POST /sdapi/v1/txt2img (a1111); POST /prompt, GET /history/<id>, GET /view (comfyui)
//   POST /api/v3/images/generations (seedream); POST /api/paas/v4/images/generations (glm-image)
//   GET  /results/<token>.png    the asynchronous providers' result downloads
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "visalign/backends/http_server.h"
#include "visalign/benchmarks/violin/manifest.h"
#include "visalign/core/json.h"
#include "visalign/core/status.h"
#include "visalign/imaging/image.h"

namespace visalign::violin {

// How the correct image is degraded (docs/backends.md):
//   exact          the ground truth
//   noise:SIGMA    + Gaussian noise of SIGMA 8-bit levels per channel and pixel
//   gradient       a horizontal ramp from -32 to +32 levels added to every channel
//   hue-shift:DEG  each target rotated by DEG degrees of CIELAB hue (LCh, clamped to sRGB)
//   texture        an 8-pixel checkerboard of -16/+16 levels
//   layout-5050    two equal halves in the other orientation (h2 <-> v2; q4 -> left/right of
//                  TL, TR; single colors unchanged): the requested split is ignored
//   object         a centered disc (radius min(W, H)/4) in the RGB complement of the background
// and, for probe items only (other items are served exact; probes.h ProbeDistortion):
//   split-bias:F   inertia splits drawn at r + F (50 - r) (F in [0, 1]: 1 = always 50/50)
//   pull:F         gravity colours moved F of the way to the context object's colour (CIELAB)
//   ripples:A      negation "no <entity>" items get concentric ripples of +-A levels (0..127)
//   shape-offset:D geometry shapes drawn D canvas pixels right of and below the request
struct Profile {
  enum class Kind {
    kExact,
    kNoise,
    kGradient,
    kHueShift,
    kTexture,
    kLayout5050,
    kObject,
    kSplitBias,
    kPull,
    kRipples,
    kShapeOffset
  };
  Kind kind = Kind::kExact;
  double param = 0;  // SIGMA, DEG, F, A or D
};
Result<Profile> ParseProfile(std::string_view text);

// The degraded image for `item`; noise is seeded by the prompt (and `seed`), so it is repeatable.
imaging::Image RenderDegraded(const ManifestItem& item, int width, int height, const Profile& profile, uint64_t seed);

// Which real images API the server imitates (docs/backends.md). Sizes are not restricted to the
// real API's list, so tests can ask for small images.
//   kGeneric    any field accepted; response_format b64_json (default) or url
//   kGptImage1  gpt-image-1's fields only: model prompt n size quality background output_format
//               output_compression moderation user. Any other field (response_format included) is
//               HTTP 400 {"error": {"message": "Unknown parameter: 'F'.", "type":
//               "invalid_request_error", "param": "F", "code": "unknown_parameter"}}, a value outside
//               the documented ones is "Invalid value" (code invalid_value). Answers are always
//               b64_json, in output_format png (default), jpeg or webp
//   kDallE3     dall-e-3's fields only: model prompt n (must be 1) size quality style response_format
//               user, the same errors otherwise; url answers unless response_format is b64_json
//   kGemini, kBfl, kDashScope  those providers' own APIs (docs/backends.md): their request fields,
//               status values, error bodies, 429s with Retry-After, jobs pending for job_ms
//   kReplicate, kFal, kA1111, kComfyUi  likewise (ComfyUI: a workflow of the stock nodes, its
//               checkpoint one of a list, the prompt the CLIPTextEncode text feeding KSampler)
//   kSeedream, kGlmImage  the OpenAI-shaped images APIs of BytePlus ModelArk and Zhipu: their
//               routes, fields (others refused), error codes, URL answers and a visible watermark
//               unless `watermark` / `watermark_enabled` is false
enum class ApiFlavor {
  kGeneric,
  kGptImage1,
  kDallE3,
  kGemini,
  kBfl,
  kDashScope,
  kReplicate,
  kFal,
  kA1111,
  kComfyUi,
  kSeedream,
  kGlmImage
};
// Whether `api` is imitated by a ProviderImitation (not the OpenAI images route).
bool IsProviderFlavor(ApiFlavor api);
Result<ApiFlavor> ParseApiFlavor(std::string_view text);

struct ReferenceServerOptions {
  std::filesystem::path dataset;  // folder with manifest.jsonl
  std::string host = "127.0.0.1";
  int port = 0;                     // 0: any free port (see port())
  std::filesystem::path port_file;  // if set, the bound port is written here once listening
  std::string profile = "exact";
  std::string api = "generic";  // ParseApiFlavor: generic, gpt-image-1 or dall-e-3
  double fail_rate = 0;         // share of requests answered 500
  int latency_ms = 0;           // added before answering
  double rate_limit = 0;        // requests/s accepted (token bucket, burst = 1 s); 0 = none
  uint64_t seed = 0;            // for failures and noise
  int default_size = 256;       // when a request has no size
  int threads = 64;             // server worker threads (one per open connection)
  // Prompts containing this text are refused by the imitated content filter (OpenAI flavors:
  // HTTP 400 code moderation_blocked; the providers: their own refusals). Empty: none.
  std::string moderate;
  std::string api_key;          // providers: requests without this key are refused (401/403); empty: any
  int job_ms = 50;              // providers' asynchronous jobs stay pending this long
  bool fail_first_job = false;  // providers: each prompt's first job ends in the provider's error state
  bool malformed = false;       // providers: submissions answered 200 with a body that is not the API's
  // Providers' result URLs: "ok"; "expire-first": each prompt's first URL answers 403 (expired);
  // "file": file:// URLs (a client must refuse them).
  std::string result_urls = "ok";
};

class ProviderImitation;

class ReferenceServer {
 public:
  // Loads the manifest, binds the port (writing the port file) and serves on a background thread.
  static Result<std::unique_ptr<ReferenceServer>> Start(const ReferenceServerOptions& options);
  ~ReferenceServer();
  int port() const { return http_->port(); }
  std::string url() const { return http_->url(); }
  // {"requests": N, "by_status": {"200": n, ...}, "requests_by_prompt": {prompt: n},
  //  "images_by_prompt": {prompt: n}, "handler_ms": total time spent answering}
  Json Stats() const;
  void Stop();
  // Serves until `stop` is set, then stops (the loop of `visalign violin reference-server`).
  void ServeUntil(const std::atomic<bool>& stop) { http_->ServeUntil(stop); }

 private:
  ReferenceServer() = default;
  void Install();
  void Generate(const backends::HttpServerRequest& req, backends::HttpServerResponse& res);
  // Counts a request and takes a rate-limit token: the Retry-After seconds when over the limit;
  // *fail when this request is to fail (--fail-rate).
  std::optional<double> Admit(bool* fail);
  void Count(int status, std::chrono::steady_clock::time_point t0);  // an answered request
  void CountPrompt(const std::string& prompt, bool image);           // a request (or image) for a prompt
  Result<std::string> RenderPng(const std::string& prompt, int width, int height) const;

  ReferenceServerOptions options_;
  Profile profile_;
  ApiFlavor api_ = ApiFlavor::kGeneric;
  std::map<std::string, ManifestItem> by_prompt_;
  std::unique_ptr<backends::HttpServer> http_;
  std::unique_ptr<ProviderImitation> imitation_;

  mutable std::mutex mu_;
  uint64_t requests_ = 0;
  std::map<int, uint64_t> by_status_;
  std::map<std::string, uint64_t> requests_by_prompt_, images_by_prompt_;
  std::map<std::string, std::string> url_images_;
  uint64_t next_token_ = 0, rng_state_ = 0;
  double tokens_ = 0;
  std::chrono::steady_clock::time_point last_refill_;
  double handler_ms_ = 0;
};

}  // namespace visalign::violin
