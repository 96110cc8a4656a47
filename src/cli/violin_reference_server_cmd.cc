// `visalign violin reference-server` (formerly `visalign reference-generator`, still accepted with a
// warning): a local OpenAI-compatible image server that answers VIOLIN prompts with their (optionally
// degraded) correct images, for tests, demos and calibration.
#include <cstdio>
#include <memory>

#include "cli/cli.h"
#include "visalign/backends/runner.h"
#include "visalign/benchmarks/violin/reference_server.h"

namespace visalign::cli {
namespace {

constexpr char kDescription[] = "Serve VIOLIN's correct images (optionally degraded) as an OpenAI-compatible image API";

void AddReferenceServer(Cli& cli, CLI::App* g) {
  auto o = std::make_shared<violin::ReferenceServerOptions>();
  auto dataset = std::make_shared<std::string>();
  auto port_file = std::make_shared<std::string>();
  g->add_option("--dataset", *dataset, "VIOLIN dataset folder (with manifest.jsonl)")->required();
  g->add_option("--host", o->host, "Address to listen on")->capture_default_str();
  g->add_option("--port", o->port, "Port (0 = any free port; see --port-file)")->capture_default_str();
  g->add_option("--port-file", *port_file, "Write the port number to this file once listening");
  g->add_option("--profile", o->profile,
                "exact, noise:SIGMA, gradient, hue-shift:DEG, texture, layout-5050, object; probe items: "
                "split-bias:F, pull:F, ripples:A, shape-offset:D")
      ->capture_default_str();
  g->add_option("--api", o->api,
                "API imitated: generic (any field), gpt-image-1 or dall-e-3 (those APIs' fields), or a provider's own "
                "API: gemini, bfl, dashscope, replicate, fal, a1111, comfyui, seedream, glm-image")
      ->capture_default_str();
  g->add_option("--moderate", o->moderate, "Refuse prompts containing this text as the API's content filter does");
  auto key_env = std::make_shared<std::string>();
  g->add_option("--api-key-env", *key_env, "Providers: refuse requests without the key in this environment variable");
  g->add_option("--job-ms", o->job_ms, "Providers: how long asynchronous jobs stay pending, ms")->capture_default_str();
  g->add_flag("--fail-first-job", o->fail_first_job,
              "Providers: each prompt's first job ends in the API's error state");
  g->add_option("--result-urls", o->result_urls,
                "Providers' result URLs: ok, expire-first (each prompt's first answers 403 expired) or file (file://)")
      ->capture_default_str();
  g->add_flag("--malformed", o->malformed, "Providers: answer submissions with JSON that is not the API's");
  g->add_option("--fail-rate", o->fail_rate, "Share of requests answered with HTTP 500")->capture_default_str();
  g->add_option("--latency-ms", o->latency_ms, "Delay before each answer, ms")->capture_default_str();
  g->add_option("--rate-limit", o->rate_limit, "Requests/s accepted; above it HTTP 429 with Retry-After (0 = none)")
      ->capture_default_str();
  g->add_option("--seed", o->seed, "Seed for injected failures and noise")->capture_default_str();
  g->add_option("--default-size", o->default_size, "Image side when a request has no size")->capture_default_str();
  g->footer(
      "POST /v1/images/generations {\"prompt\", \"size\": \"WxH\", \"n\", \"response_format\": \"b64_json\"|\"url\"}\n"
      "answers prompts of the dataset's manifest (others get HTTP 400). GET /health, GET /stats (request counts\n"
      "per prompt and status). APIs: generic accepts any field; gpt-image-1 accepts only that API's fields\n"
      "(quality, background, output_format png|jpeg|webp, ...; response_format is HTTP 400 \"Unknown parameter\")\n"
      "and answers base64; dall-e-3 accepts only its fields (quality, style, response_format) and answers URLs\n"
      "unless asked for b64_json. Profiles: exact = the ground truth; noise:SIGMA = Gaussian noise (8-bit levels);\n"
      "gradient = horizontal ramp -32..+32; hue-shift:DEG = targets rotated in CIELAB hue; texture = 8-px\n"
      "checkerboard +-16; layout-5050 = halves in the wrong orientation; object = a disc on the background.\n"
      "Probe profiles (items of `violin probes`; other items exact): split-bias:F = inertia splits drawn at\n"
      "r + F(50 - r); pull:F = gravity colours moved F of the way to the context object's colour (CIELAB);\n"
      "ripples:A = ripples of +-A levels under \"no <entity>\"; shape-offset:D = shapes moved (D, D) pixels.\n"
      "Providers (--api gemini|bfl|dashscope; docs/backends.md): POST /v1beta/models/M:generateContent (gemini);\n"
      "POST /v1/M, GET /v1/get_result?id= (bfl); POST /api/v1/services/aigc/text2image/image-synthesis,\n"
      "GET /api/v1/tasks/ID (dashscope); POST /v1/models/O/N/predictions, GET /v1/predictions/ID (replicate);\n"
      "POST /APP/MODEL, GET /APP/requests/ID[/status] (fal); POST /sdapi/v1/txt2img (a1111); POST /prompt,\n"
      "GET /history/ID, GET /view (comfyui); POST /api/v3/images/generations (seedream), POST\n"
      "/api/paas/v4/images/generations (glm-image; both watermark unless asked not to); results at GET\n"
      "/results/N.png. GET /stats adds jobs submitted, polls and downloads.\n"
      "Stops on Ctrl-C / SIGTERM.\n"
      "Example:\n"
      "  visalign violin reference-server --dataset violin-demo --port 0 --port-file port.txt --profile noise:8 \\\n"
      "      --fail-rate 0.1 --rate-limit 50 &\n"
      "  visalign violin generate --dataset violin-demo --run ref --backend openai \\\n"
      "      --endpoint http://127.0.0.1:$(cat port.txt) --model reference\n"
      "  visalign violin reference-server --dataset violin-demo --port 8091 --api gpt-image-1 &\n"
      "  visalign violin generate --dataset violin-demo --run gpt-image --backend openai \\\n"
      "      --endpoint http://127.0.0.1:8091 --model gpt-image-1 --param output_format=webp\n"
      "  visalign violin reference-server --dataset violin-demo --port 8092 --api bfl --job-ms 500 &\n"
      "  visalign violin generate --dataset violin-demo --run flux --backend bfl \\\n"
      "      --endpoint http://127.0.0.1:8092 --model flux-dev --size 256x256 --poll-interval 0.2");
  cli.Bind(g, [&cli, o, dataset, port_file, key_env]() -> Status {
    violin::ReferenceServerOptions options = *o;
    VISALIGN_ASSIGN_OR_RETURN(options.api_key, backends::ApiKeyFromEnv(*key_env));
    options.dataset = *dataset;
    options.port_file = *port_file;
    backends::InterruptHandler interrupt;
    VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<violin::ReferenceServer> srv, violin::ReferenceServer::Start(options));
    if (cli.global().json) {
      PrintJson({{"url", srv->url()}, {"port", srv->port()}, {"profile", options.profile}, {"api", options.api}});
    } else {
      std::printf("reference server listening on %s (profile %s, api %s)\n", srv->url().c_str(),
                  options.profile.c_str(), options.api.c_str());
    }
    std::fflush(stdout);
    srv->ServeUntil(interrupt.stop());
    Json stats = srv->Stats();
    std::fprintf(stderr, "reference server stopped after %llu requests\n",
                 static_cast<unsigned long long>(stats["requests"].get<uint64_t>()));
    return Status::Ok();
  });
}

// `visalign violin reference-server`, and the old top-level `visalign reference-generator`.
const CommandGroup kViolinReferenceServer(23, {"violin", "reference-generator"}, [](Cli& cli) {
  cli.AddRenamedCommand(cli.Group("violin", "VIOLIN: pure-color obedience benchmark"), "reference-server",
                        "reference-generator", kDescription, [&cli](CLI::App* g) { AddReferenceServer(cli, g); });
});

}  // namespace
}  // namespace visalign::cli
