// `visalign reference-generator`: a local OpenAI-compatible image server that answers VIOLIN
// prompts with their (optionally degraded) correct images, for tests, demos and calibration.
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "cli/cli.h"
#include "server/reference_generator.h"
#include "visalign/backends/runner.h"
#include "visalign/core/io.h"

namespace visalign::cli {
namespace {

constexpr std::chrono::milliseconds kSignalPoll{50};

const CommandGroup kReferenceGenerator(31, [](Cli& cli) {
  CLI::App* g = cli.app().add_subcommand(
      "reference-generator", "Serve VIOLIN's correct images (optionally degraded) as an OpenAI-compatible image API");
  auto o = std::make_shared<server::ReferenceGeneratorOptions>();
  auto dataset = std::make_shared<std::string>();
  auto port_file = std::make_shared<std::string>();
  g->add_option("--dataset", *dataset, "VIOLIN dataset folder (with manifest.jsonl)")->required();
  g->add_option("--host", o->host, "Address to listen on")->capture_default_str();
  g->add_option("--port", o->port, "Port (0 = any free port; see --port-file)")->capture_default_str();
  g->add_option("--port-file", *port_file, "Write the port number to this file once listening");
  g->add_option("--profile", o->profile,
                "exact, noise:SIGMA, gradient, hue-shift:DEG, texture, layout-5050 or object")
      ->capture_default_str();
  g->add_option("--api", o->api, "Request fields accepted: generic (any), gpt-image-1 or dall-e-3 (as those APIs)")
      ->capture_default_str();
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
      "Stops on Ctrl-C / SIGTERM.\n"
      "Example:\n"
      "  visalign reference-generator --dataset violin-demo --port 0 --port-file port.txt --profile noise:8 \\\n"
      "      --fail-rate 0.1 --rate-limit 50 &\n"
      "  visalign generate --dataset violin-demo --run ref --backend openai \\\n"
      "      --endpoint http://127.0.0.1:$(cat port.txt) --model reference\n"
      "  visalign reference-generator --dataset violin-demo --port 8091 --api gpt-image-1 &\n"
      "  visalign generate --dataset violin-demo --run gpt-image --backend openai \\\n"
      "      --endpoint http://127.0.0.1:8091 --model gpt-image-1 --param output_format=webp");
  cli.Bind(g, [&cli, o, dataset, port_file]() -> Status {
    server::ReferenceGeneratorOptions options = *o;
    options.dataset = *dataset;
    backends::InterruptHandler interrupt;
    VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<server::ReferenceGenerator> srv,
                              server::ReferenceGenerator::Start(options));
    if (!port_file->empty())
      VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(*port_file, std::to_string(srv->port()) + "\n"));
    if (cli.global().json) {
      PrintJson({{"url", srv->url()}, {"port", srv->port()}, {"profile", options.profile}, {"api", options.api}});
    } else {
      std::printf("reference generator listening on %s (profile %s, api %s)\n", srv->url().c_str(),
                  options.profile.c_str(), options.api.c_str());
    }
    std::fflush(stdout);
    while (!interrupt.stop().load()) std::this_thread::sleep_for(kSignalPoll);
    srv->Stop();
    nlohmann::json stats = srv->Stats();
    std::fprintf(stderr, "reference generator stopped after %llu requests\n",
                 static_cast<unsigned long long>(stats["requests"].get<uint64_t>()));
    return Status::Ok();
  });
});

}  // namespace
}  // namespace visalign::cli
