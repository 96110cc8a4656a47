// `visalign hues run`: a native CLIP/SigLIP model, a folder of them, or embeddings from a file or a
// server play Hues and Cues; top-5 cells per word in the published format.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/cli.h"
#include "cli/clip_model_option.h"
#include "cli/hues_context.h"
#include "visalign/backends/embeddings.h"
#include "visalign/backends/runner.h"
#include "visalign/benchmarks/hues/hues.h"
#include "visalign/benchmarks/hues/sweep.h"
#include "visalign/clip.h"
#include "visalign/core/io.h"
#include "visalign/store.h"

namespace visalign::cli {
namespace {

using namespace visalign::hues;
namespace fs = std::filesystem;

// ---- run --------------------------------------------------------------------------------------
// `hues run` has no store unless --store is given.
StoreFlags NoStore() {
  StoreFlags flags;
  flags.location.clear();
  return flags;
}

struct RunArgs {
  std::string model;
  std::string models;
  std::string models_file;
  bool published = false;
  bool keep_checkpoints = false;
  uint64_t disk_budget = 0;
  std::string precision = "fp32";
  std::string embeddings;
  std::string endpoint;
  std::string endpoint_model;
  std::string api_key_env;
  std::string save_embeddings;
  std::string name;
  std::string prompt_template = "{}";
  std::string words = "data";
  bool nonsense = false;
  bool overwrite = false;
  std::string out;
  std::string cache;
  StoreFlags store = NoStore();
  bool no_cache = false;
  std::string chromaticity = "display";
};

// What `hues run` played with: predictions, and for a native model its embeddings and cache use.
struct RunOutcome {
  std::vector<WordPredictions> words;
  std::optional<HuesEmbeddings> embeddings;  // what the ranking used (not for --embeddings FILE)
  ClipRunResult native;                      // --clip-model only
  std::optional<clip::ClipConfig> config;    // --clip-model only
};

// How `hues run` loads a model (--precision applies, so the fingerprint tells fp32 and bf16 apart).
Result<clip::ClipLoadOptions> ClipOptions(const Cli& cli, const RunArgs& a) {
  clip::ClipLoadOptions clip_options;
  clip_options.show_progress = !cli.global().json;
  VISALIGN_RETURN_IF_ERROR(ApplyClipPrecision(a.precision, clip_options));
  return clip_options;
}

// Where board embeddings are cached with --store: STORE/cache for a folder, the image root's cache/
// for a server store (its folder on this machine).
fs::path StoreCacheDir(const StoreFlags& store) {
  if (store.location.find("://") == std::string::npos) return fs::path(store.location) / "cache";
  return store.options.image_root.empty() ? DefaultBoardCacheDir() : store.options.image_root / "cache";
}

Result<RunOutcome> RunNative(const RunArgs& a, const Context& ctx, const std::vector<std::string>& words,
                             const clip::ClipModel& model, BoardPixels* board_pixels) {
  if (model.config().random)
    spdlog::warn("--clip-model {} has weights {}", a.model, clip::RandomWeightsLabel(model.config()));
  ClipRunOptions options;
  options.prompt_template = a.prompt_template;
  options.board_pixels = board_pixels;
  if (!a.no_cache)
    options.cache_dir = !a.store.location.empty() ? StoreCacheDir(a.store)
                        : !a.cache.empty()        ? fs::path(a.cache)
                                                  : DefaultBoardCacheDir();
  spdlog::info("{} words; board patches {}", words.size(),
               options.cache_dir.empty() ? "not cached" : "cached in " + options.cache_dir.string());
  RunOutcome outcome;
  VISALIGN_ASSIGN_OR_RETURN(outcome.native, PredictWithClip(model, ctx.board, words, options));
  outcome.words = outcome.native.words;
  outcome.embeddings = HuesEmbeddings{outcome.native.board_embeddings, words, outcome.native.text_embeddings,
                                      a.prompt_template, fs::absolute(a.model).lexically_normal().string()};
  outcome.config = model.config();
  return outcome;
}

Result<RunOutcome> RunFromEndpoint(const RunArgs& a, const Context& ctx, const std::vector<std::string>& words) {
  backends::EmbeddingsOptions options;
  options.endpoint.base_url = a.endpoint;
  VISALIGN_ASSIGN_OR_RETURN(options.endpoint.api_key, backends::ApiKeyFromEnv(a.api_key_env));
  options.model = a.endpoint_model;
  spdlog::info("{} words and {} board patches from {}", words.size(), kCells, a.endpoint);
  const backends::InterruptHandler interrupt;
  RunOutcome outcome;
  Result<HuesEmbeddings> e = FetchHuesEmbeddings(options, backends::MakeCurlTransport(), ctx.board, words,
                                                 a.prompt_template, interrupt.stop());
  if (!e.ok()) return e.status().WithContext("--embeddings-endpoint");
  outcome.words = RankCells(e->board, e->texts, words);
  outcome.embeddings = std::move(e).value();
  return outcome;
}

Result<RunOutcome> RunFromFile(const RunArgs& a, const std::vector<std::string>& words) {
  Result<HuesEmbeddings> e = ReadEmbeddingsFile(a.embeddings);
  if (!e.ok()) return e.status().WithContext("--embeddings");
  RunOutcome outcome;
  VISALIGN_ASSIGN_OR_RETURN(outcome.words, PredictFromEmbeddings(*e, words, a.prompt_template));
  return outcome;
}

// The model name in the outputs: --name, else a hub name's (hub::ResultsName) or the model folder's
// or embeddings file's name, else the endpoint's model name.
Result<std::string> RunName(const RunArgs& a) {
  std::string name = a.name;
  if (name.empty() && !a.model.empty()) {
    VISALIGN_ASSIGN_OR_RETURN(hub::ModelName parsed, hub::ParseModelName(a.model));
    name = hub::ResultsName(parsed);
  }
  if (name.empty() && !a.model.empty()) {
    const fs::path dir = fs::absolute(a.model).lexically_normal();  // "models/x/" ends in an empty filename
    name = (dir.has_filename() ? dir : dir.parent_path()).filename().string();
  }
  if (name.empty() && !a.embeddings.empty()) name = fs::path(a.embeddings).stem().string();
  if (name.empty()) name = a.endpoint_model;
  if (name.empty() || name.find('/') != std::string::npos)
    return Status::InvalidArgument("model name \"" + name + "\"", "--name",
                                   "a non-empty name without '/' (--embeddings-endpoint without --embeddings-model "
                                   "needs --name)");
  return name;
}

// Written last into OUT/<name>/ by `hues run --models`: a model whose record matches (same weights
// and preprocessing, template and words) and whose outputs exist is skipped when the command is re-run.
constexpr const char* kRunRecordFile = "hues-run.json";

// Model folders of DIR (those with a config file), sorted by name.
Status CheckModelsArgs(const RunArgs& a) {
  if (!a.name.empty()) {
    return Status::InvalidArgument("--name with --models", "--name", "no --name (each model is named by its folder)");
  }
  if (!a.save_embeddings.empty()) {
    return Status::InvalidArgument("--save-embeddings with --models", "--save-embeddings", "one model (--clip-model)");
  }
  const fs::path ext = fs::path(a.out).extension();
  if (ext == ".csv" || ext == ".jsonl") {
    return Status::InvalidArgument("--out \"" + a.out + "\" is a file", "--out", "a FOLDER with --models");
  }
  return Status::Ok();
}

// One run of `hues run` (one model or embeddings source) into its output files; the --json object.
// `resumable` (--models): skips a model whose run record matches (or played these words and more).
// `board_pixels`: shared with the other models of --models (null for one model).
Result<Json> RunOne(const Cli& cli, const RunArgs& a, const Context& ctx, const std::vector<std::string>& words,
                    const std::string& name, bool resumable, BoardPixels* board_pixels) {
  const std::vector<fs::path> outputs = PredictionOutputFiles(a.out, name);
  const fs::path record_file = fs::path(a.out) / name / kRunRecordFile;
  const std::string model_flag = resumable ? "--models " + a.model : "--clip-model";
  std::optional<clip::ClipModel> model;
  if (!a.model.empty()) {
    VISALIGN_ASSIGN_OR_RETURN(clip::ClipLoadOptions clip_options, ClipOptions(cli, a));
    Result<clip::ClipModel> loaded = LoadClipModelFlag(cli, a.model, clip_options);
    if (!loaded.ok()) return loaded.status().WithContext(model_flag);
    model = std::move(loaded).value();
  }
  // What made predictions already in the folder decides: the same run (or, for --models, one that
  // played these words and more) is done; another run's files are never replaced without --overwrite.
  const bool folder = outputs.size() > 1;
  PredictionRunRecord record;
  if (folder) {
    if (model) {
      VISALIGN_ASSIGN_OR_RETURN(record.fingerprint, model->Fingerprint());
    } else {
      record.fingerprint = !a.embeddings.empty() ? "embeddings " + fs::absolute(a.embeddings).string()
                                                 : "endpoint " + a.endpoint + " model " + a.endpoint_model;
    }
    record.prompt_template = a.prompt_template;
    record.words = words;
    VISALIGN_ASSIGN_OR_RETURN(PredictionRunDecision decision,
                              DecidePredictionRun(fs::path(a.out) / name, outputs, record_file, record, resumable,
                                                  a.overwrite, "--out " + a.out));
    if (decision.skip) {
      if (!cli.global().json)
        fmt::print("{}: already done ({} {}), skipped\n", name, record_file.string(),
                   decision.earlier.kind == EarlierPredictions::kSame ? "matches" : "has these words and more");
      Json skipped = Json::object();
      skipped["model"] = name;
      skipped["status"] = "skipped";
      return skipped;
    }
  }
  Result<RunOutcome> outcome = model                   ? RunNative(a, ctx, words, *model, board_pixels)
                               : !a.embeddings.empty() ? RunFromFile(a, words)
                                                       : RunFromEndpoint(a, ctx, words);
  if (!outcome.ok()) return outcome.status();
  RunOutcome& run = *outcome;
  if (!a.save_embeddings.empty()) {
    VISALIGN_RETURN_IF_ERROR(WriteEmbeddingsFile(a.save_embeddings, *run.embeddings).WithContext("--save-embeddings"));
  }
  const bool random = run.config && run.config->random;

  VISALIGN_RETURN_IF_ERROR(WritePredictionFiles(outputs, name, run.words, ctx.board));
  const std::string source = !a.model.empty() ? "clip-model" : !a.embeddings.empty() ? "embeddings" : "endpoint";
  if (folder) VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(record_file, record.ToJson().dump(2) + "\n"));
  std::vector<std::string> files;
  for (const fs::path& f : outputs) files.push_back(f.string());
  Json j = {{"model", name},
            {"source", source},
            {"words", run.words.size()},
            {"cache_hit", run.native.cache_hit},
            {"cache_file", run.native.cache_file.string()},
            {"outputs", files},
            {"saved_embeddings", a.save_embeddings.empty() ? Json() : Json(a.save_embeddings)},
            {"random_weights", run.config ? clip::RandomWeightsJson(*run.config) : Json()}};
  if (resumable) j["status"] = "done";
  // --models: "prepared" / "shared" (with an earlier model of the same preprocessing), null when
  // the board came from the embedding cache.
  if (board_pixels != nullptr)
    j["board_pixels"] =
        run.native.board_pixels_prepared ? Json(*run.native.board_pixels_prepared ? "prepared" : "shared") : Json();
  if (cli.global().json) return j;
  const std::string board = source == "embeddings"          ? "from " + a.embeddings
                            : source == "endpoint"          ? "from " + a.endpoint
                            : run.native.cache_file.empty() ? "computed, not cached"
                            : run.native.cache_hit          ? "from cache " + run.native.cache_file.string()
                                                   : "computed and cached in " + run.native.cache_file.string();
  fmt::print("{}: top-5 cells for {} words (board embeddings: {})\n", name, run.words.size(), board);
  if (random) fmt::print("weights {}\n", clip::RandomWeightsLabel(*run.config));
  if (!a.save_embeddings.empty()) fmt::print("wrote embeddings {}\n", a.save_embeddings);
  for (const fs::path& f : outputs) fmt::print("wrote {}\n", f.string());
  return j;
}

// `hues run --models DIR` (or --models-file, --published): hues::RunModelsFolder with RunOne for
// each model (sharing board pixels within a preprocessing group), and with --store the processes
// given the same --models, --out and --store share the models.
Status RunModels(const Cli& cli, const RunArgs& a, const Context& ctx, const std::vector<std::string>& words) {
  SweepOptions options;
  VISALIGN_ASSIGN_OR_RETURN(options.models, ModelEntries(a.models, a.models_file, a.published));
  options.out = a.out;
  std::unique_ptr<store::RunStore> shared;
  if (!a.store.location.empty()) {
    VISALIGN_ASSIGN_OR_RETURN(shared, OpenStore(a.store));
  }
  VISALIGN_ASSIGN_OR_RETURN(hub::HubOptions hub_options, HubOptionsFor(cli));
  hub_options.disk_budget = a.disk_budget;
  const std::unique_ptr<SweepDownloads> downloads = SweepDownloads::Make(std::move(hub_options), a.keep_checkpoints);
  options.downloads = downloads.get();
  BoardPixels board_pixels;
  VISALIGN_ASSIGN_OR_RETURN(SweepReport report,
                            RunModelsFolder(options, shared.get(), [&](const ModelEntry& entry, const std::string&) {
                              RunArgs one = a;
                              one.model = entry.model;
                              return RunOne(cli, one, ctx, words, entry.name, /*resumable=*/true, &board_pixels);
                            }));
  if (cli.global().json) {
    Json out = Json::object();
    out["models"] = report.models;
    PrintJson(out);
  }
  return report.ToStatus();
}

void AddRun(Cli& cli, CLI::App* g) {
  CLI::App* cmd = g->add_subcommand(
      "run",
      "Play Hues and Cues with a native CLIP/SigLIP model or with embeddings from anywhere: top-5 cells per word");
  auto a = std::make_shared<RunArgs>();
  CLI::Option* model = cmd->add_option("--clip-model", a->model, "CLIP model folder (see `visalign clip info`)");
  cli.DeprecateOption(cmd, "--model", "--clip-model");
  CLI::Option* models =
      cmd->add_option(
             "--models", a->models,
             "Folder of model folders (each as for --clip-model): runs each, sorted and named by its folder, into "
             "--out "
             "FOLDER; re-running skips models already done with the same weights, template and words; models with the "
             "same preprocessing share the board's pixels")
          ->excludes(model);
  CLI::Option* models_file = cmd->add_option("--models-file", a->models_file,
                                             "FILE of --clip-model values, one per line (folders, hf-hub:ORG/NAME, "
                                             "MODEL/TAG; # comments): runs each as "
                                             "--models does, named <MODEL>-<TAG> / NAME / the folder's name")
                                 ->excludes(model)
                                 ->excludes(models);
  CLI::Option* published = cmd->add_flag("--published", a->published,
                                         "The paper's models (data/hues/model_catalog.csv) that run natively, by their "
                                         "open_clip name (MODEL/TAG), fetched "
                                         "from the Hub one after another (the others are listed as needing embeddings)")
                               ->excludes(model)
                               ->excludes(models)
                               ->excludes(models_file);
  cmd->add_flag("--keep-checkpoints", a->keep_checkpoints,
                "With --models-file/--published: keep each downloaded model's weights (default: deleted once its "
                "predictions are written)");
  cmd->add_option(
         "--disk-budget", a->disk_budget,
         "With --models-file/--published: the most the model cache may hold (a whole number with a unit: 20GB, "
         "8GiB, 500MB; default: no limit). A download that would pass it first deletes the weights kept "
         "(--keep-checkpoints) for models "
         "already run, oldest first; a model that still does not fit fails alone and the sweep goes on")
      ->transform(CLI::AsSizeValue(true));
  AddClipPrecisionOption(cmd, &a->precision);
  CLI::Option* file = cmd->add_option("--embeddings", a->embeddings,
                                      "Precomputed embeddings FILE (safetensors: \"board\" [480, D], \"words\" [W, D]; "
                                      "docs/hues.md) instead of a "
                                      "native model")
                          ->excludes(model)
                          ->excludes(models)
                          ->excludes(models_file)
                          ->excludes(published);
  CLI::Option* endpoint = cmd->add_option("--embeddings-endpoint", a->endpoint,
                                          "OpenAI-compatible embedding server URL (POST /v1/embeddings; board patches "
                                          "as PNG data URLs) instead of a native model")
                              ->excludes(model)
                              ->excludes(models)
                              ->excludes(models_file)
                              ->excludes(published)
                              ->excludes(file);
  cmd->add_option("--embeddings-model", a->endpoint_model,
                  "The endpoint's name for its model (the requests' \"model\")")
      ->needs(endpoint);
  cmd->add_option("--api-key-env", a->api_key_env, "Environment variable holding the endpoint's API key")
      ->needs(endpoint);
  cmd->add_option("--save-embeddings", a->save_embeddings,
                  "Also write the board and word embeddings used to FILE (the --embeddings layout)")
      ->excludes(file);
  cmd->add_option("--name", a->name,
                  "Model name in the outputs (default: the model folder's or embeddings file's name)");
  cmd->add_option("--template", a->prompt_template, "Prompt template; {} is replaced by the word")
      ->capture_default_str();
  cmd->add_option("--words", a->words,
                  "data (the 100 clue words, English) or FILE (CSV with a word_en/word column, or one word per line)")
      ->capture_default_str();
  cmd->add_flag("--nonsense", a->nonsense,
                "Also play the nonsense words: the 16 of data/hues/nonsense16.csv and the 4 published stop words it "
                "drops (HER, HIM, HE, SHE), so hues nonsense can use either list");
  cmd->add_option("--out", a->out,
                  "FOLDER (writes FOLDER/<name>/results.csv in the published format and predictions.jsonl), or a "
                  "file ending in .csv or .jsonl")
      ->required();
  cmd->add_flag("--overwrite", a->overwrite,
                "Replace predictions another run wrote into --out/<name> (another model, template or word list); "
                "without it such a folder is an error, and with --models a folder holding these words and more "
                "counts as done");
  cmd->add_option("--cache", a->cache,
                  "Folder caching board image embeddings per (model fingerprint, preprocessing, board); default "
                  "$VISALIGN_CACHE, $XDG_CACHE_HOME/visalign or ~/.cache/visalign");
  AddStoreOptions(
      cmd, &a->store,
      "Run store: cache board embeddings under STORE/cache (a server store: under --image-root/cache); "
      "with --models, processes given the same --models, --out and --store share the models, each run once");
  cmd->add_flag("--no-cache", a->no_cache, "Neither read nor write the board-embedding cache");
  cmd->footer(
      "Each of the 480 board cells becomes a solid image of the model's input size, run through the model's own "
      "preprocessing and image tower (cached: later runs with new words cost only the text tower); each word "
      "goes through the template and the text tower; cells are ranked by cosine similarity (for SigLIP the same "
      "order as its sigmoid scores). With --embeddings or --embeddings-endpoint the embeddings come from elsewhere "
      "and are ranked the same way.\n"
      "Examples:\n  visalign hues run --clip-model models/ViT-B-32 --nonsense --out runs/\n"
      "  visalign hues run --models models/ --out runs/     # every model folder in models/, resumable\n"
      "  visalign hues run --models models/ --out runs/ --store ./visalign-store   # start N times: shared\n"
      "  visalign hues run --published --out runs/     # the paper's native models from the Hub, one after another\n"
      "  visalign hues run --published --out runs/ --keep-checkpoints --disk-budget 50GB   # keep what fits\n"
      "  visalign hues evaluate --predictions runs/ --out runs-eval\n"
      "  visalign hues run --clip-model models/ViT-B-32 --template \"the color of {}\" --out vitb32-color.jsonl\n"
      "  visalign hues run --embeddings EVA02-B-16.safetensors --nonsense --out runs/\n"
      "  visalign hues run --embeddings-endpoint http://127.0.0.1:8080 --embeddings-model siglip --out runs/");
  cli.Bind(cmd, [&cli, a]() -> Status {
    const bool sweep = !a->models.empty() || !a->models_file.empty() || a->published;
    if (a->model.empty() && !sweep && a->embeddings.empty() && a->endpoint.empty())
      return Status::InvalidArgument(
          "no model", "visalign hues run",
          "one of --clip-model DIR, --models DIR, --embeddings FILE or --embeddings-endpoint URL");
    if (!sweep && (a->keep_checkpoints || a->disk_budget > 0)) {
      return Status::InvalidArgument(
          a->disk_budget > 0 ? "--disk-budget without a sweep" : "--keep-checkpoints without a sweep",
          "visalign hues run", "--models-file FILE or --published (a single model's download is kept)");
    }
    std::string name;
    if (!sweep) {
      VISALIGN_ASSIGN_OR_RETURN(name, RunName(*a));
    } else {
      VISALIGN_RETURN_IF_ERROR(CheckModelsArgs(*a));
    }
    BoardOptions bo;
    VISALIGN_ASSIGN_OR_RETURN(Context ctx, LoadContext(bo));
    VISALIGN_ASSIGN_OR_RETURN(std::vector<std::string> words, ReadWordList(a->words, ctx.vocabulary));
    if (a->nonsense) {
      VISALIGN_ASSIGN_OR_RETURN(auto nonsense, AllNonsenseWords());
      for (const NonsenseWord& n : nonsense) words.push_back(n.word);
    }
    if (!sweep) {
      VISALIGN_ASSIGN_OR_RETURN(Json j, RunOne(cli, *a, ctx, words, name, /*resumable=*/false, nullptr));
      if (cli.global().json) PrintJson(j);
      return Status::Ok();
    }
    return RunModels(cli, *a, ctx, words);
  });
}

const CommandGroup kHuesRun(42, {"hues"}, [](Cli& cli) {
  AddRun(cli, cli.Group("hues", "Hues and Cues: CLIP color alignment vs human players"));
});

}  // namespace
}  // namespace visalign::cli
