// `visalign clip resolve NAME`: what a model name resolves to (repository, commit, files,
// preprocessing, native or not), fetching what is missing into the model cache.
#include <iostream>
#include <memory>
#include <string>

#include "cli/cli.h"
#include "cli/clip_model_option.h"
#include "visalign/hub/hub.h"

namespace visalign::cli {
namespace {

// The library names its input "model name" (--clip-model elsewhere); here it is the argument.
Status AsArgument(const Status& st) {
  if (st.where() != "model name") return st;
  return Status(st.code(), st.what(), "argument NAME", st.expected());
}

Status RunResolve(const Cli& cli, const std::string& text) {
  Result<hub::ModelName> parsed = hub::ParseModelName(text);
  if (!parsed.ok()) return AsArgument(parsed.status());
  const hub::ModelName& name = *parsed;
  if (name.kind == hub::NameKind::kFolder) {
    return Status::InvalidArgument("model name \"" + text + "\" is not a hub name", "argument NAME",
                                   "hf-hub:ORG/NAME[@REVISION] or MODEL/TAG (a folder needs no resolving: clip info)");
  }
  VISALIGN_ASSIGN_OR_RETURN(hub::HubOptions options, HubOptionsFor(cli));
  VISALIGN_ASSIGN_OR_RETURN(hub::ResolvedModel model, hub::FetchModel(name, options));
  if (cli.global().json) {
    PrintJson(hub::ResolvedModelJson(model));
  } else {
    std::cout << hub::ResolvedModelText(model);
  }
  return Status::Ok();
}

const CommandGroup kClipResolve(53, {"clip"}, [](Cli& cli) {
  CLI::App* g = cli.Group("clip", "");
  CLI::App* resolve = g->add_subcommand(
      "resolve",
      "Resolve a model name (hf-hub:ORG/NAME[@REVISION] or open_clip MODEL/TAG), fetching it into the cache");
  auto name = std::make_shared<std::string>();
  resolve->add_option("NAME", *name, "hf-hub:ORG/NAME[@REVISION] or MODEL/TAG (open_clip's pretrained table)")
      ->required();
  resolve->footer(
      "Prints the repository, revision and commit, the files (downloaded or cached), the preprocessing (a MODEL/TAG's "
      "from open_clip's table), whether visalign runs it natively, and the model folder every --clip-model NAME uses.\n"
      "Cache: $VISALIGN_CACHE, else $HF_HOME/hub, else ~/.cache/visalign. Hub: $HF_ENDPOINT (default "
      "https://huggingface.co), token $HF_TOKEN for gated repositories, HF_HUB_OFFLINE=1 or --offline for the cache "
      "only "
      "(docs/clip.md \"Models by name\").\n"
      "Examples:\n  visalign clip resolve ViT-B-32/laion2b_s34b_b79k\n"
      "  visalign clip resolve hf-hub:timm/ViT-B-16-SigLIP --json\n"
      "  visalign --offline clip resolve ViT-B-32/laion2b_s34b_b79k");
  cli.Bind(resolve, [&cli, name]() { return RunResolve(cli, *name); });
});

}  // namespace
}  // namespace visalign::cli
