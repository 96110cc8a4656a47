// `visalign clip random-model`: a CLIP model directory with deterministic random weights, for demos
// and tests without downloading weights.
#include <fmt/format.h>

#include <charconv>
#include <iostream>
#include <memory>
#include <string>

#include "cli/cli.h"
#include "visalign/clip.h"

namespace visalign::cli {
namespace {

using namespace visalign::clip;

struct RandomModelArgs {
  std::string out;
  std::string arch = std::string(RandomClipArchName(RandomClipModelOptions{}.arch));
  std::string seed = std::to_string(RandomClipModelOptions{}.seed);
  bool force = false;
};

Status RunRandomModel(const Cli& cli, const RandomModelArgs& a) {
  RandomClipModelOptions options;
  Result<RandomClipArch> arch = ParseRandomClipArch(a.arch);
  if (!arch.ok()) return arch.status().WithContext("--arch");
  options.arch = *arch;
  const auto [end, error] = std::from_chars(a.seed.data(), a.seed.data() + a.seed.size(), options.seed);
  if (error != std::errc() || end != a.seed.data() + a.seed.size()) {
    return Status::InvalidArgument("seed \"" + a.seed + "\"", "--seed", "an integer from 0 to 18446744073709551615");
  }
  options.overwrite = a.force;
  Result<RandomClipModelFiles> files = WriteRandomClipModel(a.out, options);
  if (!files.ok()) return files.status().WithContext("--out");
  if (cli.global().json) {
    PrintJson({{"model", a.out},
               {"arch", a.arch},
               {"seed", options.seed},
               {"parameters", files->parameters},
               {"files", {files->config_file.string(), files->weights_file.string()}}});
    return Status::Ok();
  }
  std::cout << fmt::format("wrote {} ({}, seed {}: {} parameters, RANDOM weights: its numbers mean nothing)\n", a.out,
                           a.arch, options.seed, files->parameters);
  return Status::Ok();
}

const CommandGroup kClipRandomModel(52, {"clip"}, [](Cli& cli) {
  CLI::App* g = cli.Group("clip", "");
  CLI::App* random =
      g->add_subcommand("random-model", "Write a CLIP model directory with deterministic random weights");
  auto ra = std::make_shared<RandomModelArgs>();
  random
      ->add_option("--out", ra->out, "Model directory to create (open_clip_config.json + open_clip_model.safetensors)")
      ->required();
  random
      ->add_option(
          "--arch", ra->arch,
          "tiny (13.7 MB, fast), or OpenCLIP's shapes ViT-B-32 (605 MB), RN50 (408 MB), convnext_base (606 MB), "
          "ViTamin-S (250 MB), MobileCLIP2-S0 (300 MB) or MobileCLIP-B (599 MB)")
      ->capture_default_str();
  random->add_option("--seed", ra->seed, "Seed of the weights, 0 to 2^64 - 1")->capture_default_str();
  random->add_flag("--force", ra->force, "Write into a non-empty --out, replacing the model files");
  random->footer(
      "For demos and tests without downloading weights: the model loads and runs like any OpenCLIP ViT (real "
      "tokenizer, vocabulary 49408, context 77) but its numbers mean nothing; `clip info`, `hues run` and "
      "`acva analyze` label it RANDOM. The same --arch and --seed give byte-identical files on every machine.\n"
      "Example:\n  visalign clip random-model --out clip-random --seed 0\n"
      "  visalign hues run --clip-model clip-random --out runs/");
  cli.Bind(random, [&cli, ra]() { return RunRandomModel(cli, *ra); });
});

}  // namespace
}  // namespace visalign::cli
