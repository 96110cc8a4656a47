// `visalign acva ...`: ACVA-Bench — generate images for abstract concepts, judge them with a VLM,
// analyze adequacy/diversity/distinctiveness, check agreement with humans, and a reference server.
#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli/acva_judge.h"
#include "cli/backend_options.h"
#include "cli/cli.h"
#include "cli/clip_model_option.h"
#include "visalign/backends/backends.h"
#include "visalign/backends/refusals.h"
#include "visalign/backends/runner.h"
#include "visalign/benchmarks/acva/acva.h"
#include "visalign/benchmarks/acva/analyze_runs.h"
#include "visalign/benchmarks/acva/pipeline.h"
#include "visalign/benchmarks/acva/run_pipeline.h"
#include "visalign/clip.h"
#include "visalign/core/benchmarks.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"
#include "visalign/store.h"

namespace visalign::cli {
namespace {
namespace fs = std::filesystem;

struct SetArgs {
  std::string concepts, pairs;
};

struct GenerateArgs {
  GenerateArgs() { backend.name = "openai"; }
  std::string run;
  BackendArgs backend;
  std::string language = "zh", prompt_template = "{word}";
  RunControlArgs control;
  std::vector<std::string> filters;
  int samples = 3;
  int64_t seed = 0;
};

struct AnalyzeArgs {
  std::string clip_model, out;
  std::string clip_precision = "fp32";
  double pass_threshold = 0.6, cluster_threshold = 0.25;
  std::string quadrant_medians = "pooled";  // or "per-model"
  std::string thresholds_from;              // summary.json whose medians are frozen
  int bootstrap = 2000;
  uint64_t bootstrap_seed = 20240501;
};

// `acva run`: the generation runs, as --run/--model pairs or a runs file, and runs added unchanged.
struct RunArgs {
  std::vector<std::string> runs, models, with_runs;
  std::string runs_file;
};

struct Common {
  StoreFlags store;
  SetArgs set;
  GenerateArgs gen;
  JudgeArgs judge;
  bool judge_dry_run = false;
  std::optional<double> judge_price;  // USD per request
  AnalyzeArgs analyze;
};

void AddSetOptions(CLI::App* app, SetArgs& a) {
  app->add_option("--concepts", a.concepts, "concepts.jsonl (default: the shipped starter set, data/acva/)");
  app->add_option("--pairs", a.pairs, "pairs.jsonl of near-synonym pairs (default: the shipped starter set)");
}

// Everything `acva generate` and `acva run` share; --run is each command's own.
void AddGenerateOptions(CLI::App* app, GenerateArgs& a) {
  app->add_option("--backend", a.backend.name, BackendKindsText() + " (docs/backends.md)")
      ->check(CLI::IsMember(BackendKinds()))
      ->capture_default_str();
  AddBackendOptions(app, a.backend);
  app->add_option("--path", a.backend.path, "directory: import <concept>__<k>.png files made elsewhere");
  app->add_option("--language", a.language, "Prompt language: zh ({word} = Chinese word) or en (English gloss)")
      ->check(CLI::IsMember({"zh", "en"}))
      ->capture_default_str();
  app->add_option("--prompt-template", a.prompt_template, "Prompt template; placeholders {word} {gloss} {id}")
      ->capture_default_str();
  app->add_option("--samples", a.samples, "Images per concept (K)")->check(CLI::PositiveNumber)->capture_default_str();
  app->add_option("--seed", a.seed, "Base seed: sample k of every concept gets seed + k ({seed} in --param/--cmd)")
      ->capture_default_str();
  AddRunControlOptions(app, a.control, a.backend, "concepts");
  app->add_option("--filter", a.filters,
                  "Subset of concepts: ids=ID[,ID...] or category=NAME[,NAME...] (repeatable; several keys in one: "
                  "category=emotion,ids=love)");
}

void AddAnalyzeOptions(CLI::App* app, AnalyzeArgs& a) {
  app->add_option("--clip-model", a.clip_model, "CLIP model directory for image and metaphor embeddings")->required();
  AddClipPrecisionOption(app, &a.clip_precision);
  app->add_option("--out", a.out, "Output folder: summary.{json,csv,md}, items.jsonl")->required();
  app->add_option("--pass-threshold", a.pass_threshold, "Adequacy needed to pass")->capture_default_str();
  app->add_option("--cluster-threshold", a.cluster_threshold,
                  "Cosine distance up to which metaphor clusters merge (average linkage)")
      ->capture_default_str();
  CLI::Option* medians =
      app->add_option("--quadrant-medians", a.quadrant_medians,
                      "Where the diversity quadrants are split: pooled = the medians of D_img and H over the groups "
                      "of every model analysed together (ACVA §5.2); per-model = each model's own medians (its "
                      "shares then never depend on the other models)")
          ->check(CLI::IsMember({"pooled", "per-model"}))
          ->capture_default_str();
  app->add_option("--thresholds-from", a.thresholds_from,
                  "summary.json of an earlier analysis whose pooled medians split the quadrants here (frozen: "
                  "adding a model moves no other model's shares)")
      ->excludes(medians);
  app->add_option("--bootstrap", a.bootstrap, "Bootstrap resamples")->check(CLI::PositiveNumber)->capture_default_str();
  app->add_option("--bootstrap-seed", a.bootstrap_seed, "Bootstrap seed (results are deterministic)")
      ->capture_default_str();
}

Result<acva::ConceptSet> LoadSet(const SetArgs& a) {
  fs::path concepts = a.concepts, pairs = a.pairs;
  if (concepts.empty()) {
    VISALIGN_ASSIGN_OR_RETURN(concepts, acva::StarterConceptsFile());
  }
  if (pairs.empty()) {
    VISALIGN_ASSIGN_OR_RETURN(pairs, acva::StarterPairsFile());
  }
  return acva::LoadConceptSet(concepts, pairs);
}

// The concepts --filter (ids, category) and --limit (the first N after filtering) select; every
// concept when neither is given.
Result<acva::ConceptSet> SelectConcepts(const acva::ConceptSet& set, const std::vector<std::string>& filter_args,
                                        int limit) {
  VISALIGN_ASSIGN_OR_RETURN(Filters filters, ParseFilters(filter_args, {"ids", "category"}));
  acva::ConceptSet out = acva::SelectConcepts(set, filters, limit);
  if (out.concepts.empty())
    return Status::InvalidArgument("no concept left after --filter/--limit", "--filter",
                                   "concept ids or categories of the concept set (see `visalign acva validate`)");
  return out;
}

acva::GenerationConfig GenerationConfigFrom(const GenerateArgs& a) {
  acva::GenerationConfig config;
  config.language = *acva::LanguageFromName(a.language);
  config.prompt_template = a.prompt_template;
  config.samples = a.samples;
  config.seed = a.seed;
  return config;
}

// The work items `config` makes of the concepts --filter/--limit select, in --shard's part.
Result<std::vector<backends::WorkItem>> GenerationWork(const GenerateArgs& a, const acva::ConceptSet& set,
                                                       const acva::GenerationConfig& config) {
  VISALIGN_ASSIGN_OR_RETURN(acva::ConceptSet selected, SelectConcepts(set, a.filters, a.control.limit));
  VISALIGN_ASSIGN_OR_RETURN(std::vector<backends::WorkItem> all, acva::GenerationItems(selected, config));
  return ShardOf(std::move(all), a.control);
}

// `acva generate`: one run through the generation runner, its summary printed.
Status Generate(const Cli& cli, const GenerateArgs& a, const acva::ConceptSet& set, store::RunStore& store,
                const std::atomic<bool>& stop) {
  VISALIGN_RETURN_IF_ERROR(store::ValidateRunName(a.run));
  const acva::GenerationConfig config = GenerationConfigFrom(a);
  VISALIGN_ASSIGN_OR_RETURN(std::vector<backends::WorkItem> items, GenerationWork(a, set, config));
  VISALIGN_ASSIGN_OR_RETURN(auto backend, MakeBackend(a.backend, store, "visalign acva generate --help"));
  backends::RunnerOptions options = RunnerOptionsFrom(a.control, !cli.global().json, "generate " + a.run);
  store::RunInfo info{a.run, std::string(benchmarks::kAcva), acva::GenerationFingerprint(set, config), {}, ""};
  VISALIGN_ASSIGN_OR_RETURN(backends::RunSummary summary,
                            backends::RunGeneration(store, info, items, *backend, options, stop));
  if (cli.global().json) {
    Json j = summary.ToJson();
    j["run"] = a.run;
    PrintJson(j);
  } else {
    std::printf("generate %s: %s\n", a.run.c_str(), summary.ToText().c_str());
  }
  return summary.Outcome("run " + a.run);
}

// The analysis options --pass-threshold ... --bootstrap-seed describe.
Result<acva::AnalyzeRunsOptions> AnalyzeOptionsFrom(const AnalyzeArgs& a) {
  acva::AnalyzeRunsOptions options;
  options.analysis.pass_threshold = a.pass_threshold;
  options.analysis.cluster_threshold = a.cluster_threshold;
  options.analysis.median_scope =
      a.quadrant_medians == "per-model" ? acva::MedianScope::kModel : acva::MedianScope::kPooled;
  if (!a.thresholds_from.empty()) {
    VISALIGN_ASSIGN_OR_RETURN(options.analysis.frozen_medians, acva::FrozenMediansFromFile(a.thresholds_from));
    options.analysis.median_scope = acva::MedianScope::kFrozen;
  }
  options.analysis.bootstrap.resamples = a.bootstrap;
  options.analysis.bootstrap.seed = a.bootstrap_seed;
  options.clip_model = a.clip_model;
  return options;
}

// `acva analyze` (no generations) and `acva run`: acva::RunPipeline with every backend and the CLIP
// model made first (a wrong option fails before any image is paid for), each stage printed as it
// ends, the results written to --out and printed.
Status Pipeline(const Cli& cli, const Common& c, const std::vector<GenerateArgs>& generations,
                std::vector<std::string> runs, const acva::ConceptSet& set, store::RunStore& store,
                const std::atomic<bool>& stop) {
  const bool text = !cli.global().json;
  acva::PipelineOptions options;
  for (const GenerateArgs& g : generations) {
    VISALIGN_ASSIGN_OR_RETURN(auto backend, MakeBackend(g.backend, store, "visalign acva run --help"));
    options.generations.push_back({g.run, std::move(backend)});
  }
  if (!generations.empty()) {
    options.generation = GenerationConfigFrom(c.gen);
    VISALIGN_ASSIGN_OR_RETURN(options.items, GenerationWork(c.gen, set, options.generation));
    options.runner = RunnerOptionsFrom(c.gen.control, text, "generate");
  }
  options.runs = std::move(runs);
  options.judge = JudgeConfigFrom(cli, c.judge);
  options.judge_transport = JudgeTransport(c.judge);
  VISALIGN_ASSIGN_OR_RETURN(options.analyze, AnalyzeOptionsFrom(c.analyze));
  clip::ClipLoadOptions clip_options;
  clip_options.show_progress = text;
  VISALIGN_RETURN_IF_ERROR(ApplyClipPrecision(c.analyze.clip_precision, clip_options));
  VISALIGN_ASSIGN_OR_RETURN(clip::ClipModel model, LoadClipModelFlag(cli, c.analyze.clip_model, clip_options));
  if (model.config().random)
    std::fprintf(stderr, "warning: --clip-model %s has weights %s\n", c.analyze.clip_model.c_str(),
                 clip::RandomWeightsLabel(model.config()).c_str());

  acva::PipelineObserver observer;
  if (text) {
    observer.generated = [](const std::string& run, const backends::RunSummary& summary) {
      std::printf("generate %s: %s\n", run.c_str(), summary.ToText().c_str());
      std::fflush(stdout);
    };
    observer.judged = [](const acva::JudgeStats& stats) {
      std::printf("%s\n", stats.ToText().c_str());
      std::fflush(stdout);
    };
    observer.incomplete = [](const acva::RunGenerationState& g) {
      std::fprintf(stderr, "warning: run %s has %zu failed and %zu pending images; they are not analyzed\n",
                   g.run.c_str(), g.counts.failed, g.counts.pending);
    };
  }
  VISALIGN_ASSIGN_OR_RETURN(acva::PipelineResult result,
                            acva::RunPipeline(store, set, model, std::move(options), stop, observer));
  VISALIGN_RETURN_IF_ERROR(acva::WriteOutputs(c.analyze.out, result.analysis));
  if (!text) {
    PrintJson(result.analysis.summary);
    return Status::Ok();
  }
  std::vector<backends::RefusalRate> refusals;
  for (const acva::RunGenerationState& g : result.generation) refusals.push_back(g.refusals);
  std::printf("%s\n%swrote %s/summary.{json,csv,md} and items.jsonl\n",
              acva::SummaryMarkdown(result.analysis.summary).c_str(), backends::RefusalText(refusals).c_str(),
              c.analyze.out.c_str());
  return Status::Ok();
}

// The generation runs of `acva run`: --run/--model pairs (or --run alone for the command and
// directory backends) or the runs file, each on top of the shared generation options.
Result<std::vector<GenerateArgs>> Generations(const GenerateArgs& shared, const RunArgs& r) {
  std::vector<acva::RunSpec> specs;
  std::string where = "--run";
  if (!r.runs_file.empty()) {
    VISALIGN_ASSIGN_OR_RETURN(std::string text, ReadFile(r.runs_file));
    VISALIGN_ASSIGN_OR_RETURN(specs, acva::ParseRunSpecs(text, r.runs_file));
    where = r.runs_file;
  } else {
    if (!r.models.empty() && r.models.size() != r.runs.size())
      return Status::InvalidArgument(fmt::format("{} --model for {} --run", r.models.size(), r.runs.size()), "--model",
                                     "one --model per --run, paired in order");
    for (size_t i = 0; i < r.runs.size(); ++i)
      specs.push_back({r.runs[i], r.models.empty() ? "" : r.models[i], "", ""});
  }
  if (specs.empty())
    return Status::InvalidArgument("no generation run", where, "--run NAME (with --model) or a runs file with a line");
  std::vector<GenerateArgs> out;
  for (const acva::RunSpec& spec : specs) {
    GenerateArgs g = shared;
    g.run = spec.run;
    g.backend.model = spec.model;
    if (!spec.endpoint.empty()) g.backend.endpoint = spec.endpoint;
    if (!spec.api_key_env.empty()) g.backend.api_key_env = spec.api_key_env;
    out.push_back(std::move(g));
  }
  return out;
}

// A subcommand `name` of `group` over a concept set and the run store: their options go into
// `c`, and `body` runs with both loaded and the interrupt flag of a SIGINT/SIGTERM handler.
using SetAndStoreBody = std::function<Status(const acva::ConceptSet&, store::RunStore&, const std::atomic<bool>& stop)>;
CLI::App* AddSetAndStoreCommand(Cli& cli, CLI::App* group, const std::shared_ptr<Common>& c, const char* name,
                                const char* description, SetAndStoreBody body) {
  CLI::App* s = group->add_subcommand(name, description);
  AddStoreOptions(s, &c->store, "Run store");
  AddSetOptions(s, c->set);
  cli.Bind(s, [c, body = std::move(body)]() -> Status {
    VISALIGN_ASSIGN_OR_RETURN(acva::ConceptSet set, LoadSet(c->set));
    VISALIGN_ASSIGN_OR_RETURN(auto store, OpenStore(c->store));
    backends::InterruptHandler interrupt;
    return body(set, *store, interrupt.stop());
  });
  return s;
}

const CommandGroup kAcva(60, {"acva"}, [](Cli& cli) {
  CLI::App* g = cli.Group("acva", "ACVA-Bench: abstract concept visualization (adequacy, diversity, distinctiveness)");
  g->footer(
      "Staged: generate (per model) -> judge -> analyze; each stage resumes from the run store.\n"
      "Example with the local reference server and a random-weights CLIP:\n"
      "  visalign acva reference-server --port 8090 &\n"
      "  visalign clip random-model --out clip-random\n"
      "  visalign acva generate --run varied --endpoint http://127.0.0.1:8090 --model varied --seed 0 "
      "--param 'seed={seed}'\n"
      "  visalign acva judge --run varied --judge-endpoint http://127.0.0.1:8090 --judge-model ref-judge\n"
      "  visalign acva analyze --run varied --judge-model ref-judge --clip-model clip-random --out results\n"
      "Definitions of every number: docs/acva.md.");

  {
    auto set = std::make_shared<SetArgs>();
    CLI::App* v = g->add_subcommand("validate", "Check a concept set and its near-synonym pairs");
    AddSetOptions(v, *set);
    v->footer(
        "Errors name file:line and field. Example: visalign acva validate --concepts data/acva/concepts.jsonl --pairs "
        "data/acva/pairs.jsonl");
    cli.Bind(v, [&cli, set]() -> Status {
      VISALIGN_ASSIGN_OR_RETURN(acva::ConceptSet s, LoadSet(*set));
      Json per_category = Json::object();
      size_t questions = 0;
      for (const acva::Concept& c : s.concepts) {
        per_category[std::string(acva::CategoryName(c.category))] =
            per_category.value(std::string(acva::CategoryName(c.category)), 0) + 1;
        questions += c.rubric.size();
      }
      const Json j = {{"concepts", s.concepts.size()},
                      {"questions", questions},
                      {"pairs", s.pairs.size()},
                      {"by_category", per_category},
                      {"fingerprint", s.fingerprint}};
      if (cli.global().json)
        PrintJson(j);
      else
        std::printf("ok: %zu concepts, %zu rubric questions, %zu pairs; by category: %s\n", s.concepts.size(),
                    questions, s.pairs.size(), per_category.dump().c_str());
      return Status::Ok();
    });
  }

  {
    auto c = std::make_shared<Common>();
    CLI::App* s = AddSetAndStoreCommand(
        cli, g, c, "generate", "Generate K images per concept for one model into the run store",
        [&cli, c](const acva::ConceptSet& set, store::RunStore& store, const std::atomic<bool>& stop) {
          return Generate(cli, c->gen, set, store, stop);
        });
    s->add_option("--run", c->gen.run, "Run name = the model's label in the results")->required();
    AddGenerateOptions(s, c->gen);
    s->footer(
        "Prompts are the concept word alone by default. Re-running resumes: done images are never requested again.\n"
        "Example: visalign acva generate --run gpt-image --endpoint https://gateway --model gpt-image-1 "
        "--api-key-env OPENAI_API_KEY");
  }

  {
    auto c = std::make_shared<Common>();
    CLI::App* s = AddSetAndStoreCommand(
        cli, g, c, "judge", "Ask the VLM judge every rubric, metaphor and 2AFC question (cached)",
        [&cli, c](const acva::ConceptSet& set, store::RunStore& store, const std::atomic<bool>& stop) -> Status {
          return JudgeCommand(cli, c->judge, c->judge_dry_run, c->judge_price, set, store, stop);
        });
    s->add_option("--run", c->judge.runs, "Generation runs to judge (repeatable)")->required();
    AddJudgeOptions(s, c->judge, /*endpoint_required=*/true);
    s->add_flag("--dry-run", c->judge_dry_run,
                "Print how many questions are cached and how many would be asked (requests at most, and the cost with "
                "--price-per-request); ask nothing");
    s->add_option("--price-per-request", c->judge_price, "USD per judge request: the cost in --dry-run")
        ->check(CLI::NonNegativeNumber);
    s->footer(
        "One request per question; answers are cached by (image SHA-256, question, judge model, prompt template "
        "hash), so re-running asks only what is missing and byte-identical images are asked once. Unparseable "
        "replies are re-asked, then recorded invalid.\n"
        "Example: visalign acva judge --run my-model --judge-endpoint http://127.0.0.1:8000 --judge-model qwen2.5-vl");
  }

  {
    auto c = std::make_shared<Common>();
    CLI::App* s = AddSetAndStoreCommand(
        cli, g, c, "analyze", "Compute adequacy, diversity, distinctiveness and statistics",
        [&cli, c](const acva::ConceptSet& set, store::RunStore& store, const std::atomic<bool>& stop) -> Status {
          return Pipeline(cli, *c, {}, c->judge.runs, set, store, stop);
        });
    s->add_option("--run", c->judge.runs, "Runs (models) to analyze (repeatable)")->required();
    AddJudgeOptions(s, c->judge, /*endpoint_required=*/false);
    AddAnalyzeOptions(s, c->analyze);
    s->footer(
        "Reads judge answers from the cache (asks the judge for missing ones only if --judge-endpoint is given).\n"
        "Diversity quadrants split every model's groups at the medians of D_img and H over all --run's groups, as\n"
        "ACVA §5.2 does (a value equal to the median counts half high, half low); --thresholds-from an earlier\n"
        "summary.json freezes its medians, --quadrant-medians per-model uses each model's own. Models are listed\n"
        "by tier, then pass rate.\n"
        "Example: visalign acva analyze --run a --run b --judge-model qwen2.5-vl --clip-model models/ViT-B-32 --out "
        "res");
  }

  {
    auto c = std::make_shared<Common>();
    auto r = std::make_shared<RunArgs>();
    CLI::App* s = AddSetAndStoreCommand(
        cli, g, c, "run", "generate + judge + analyze one or more models (each stage resumes)",
        [&cli, c, r](const acva::ConceptSet& set, store::RunStore& store, const std::atomic<bool>& stop) -> Status {
          VISALIGN_ASSIGN_OR_RETURN(std::vector<GenerateArgs> generations, Generations(c->gen, *r));
          return Pipeline(cli, *c, generations, r->with_runs, set, store, stop);
        });
    auto* run = s->add_option("--run", r->runs, "Run name of a model (repeatable; pairs with --model in order)");
    AddGenerateOptions(s, c->gen);
    // --model repeats here, once per --run.
    s->remove_option(s->get_option("--model"));
    s->add_option("--model", r->models, "openai: the model of each --run, in the same order (repeatable)");
    s->add_option("--runs-file", r->runs_file,
                  "JSON Lines, one {\"run\", \"model\"[, \"endpoint\", \"api_key_env\"]} per line, instead of "
                  "--run/--model; missing fields take the command line's")
        ->excludes(run);
    s->add_option("--with-run", r->with_runs, "Other existing runs to judge and analyze alongside (repeatable)");
    AddJudgeOptions(s, c->judge, /*endpoint_required=*/true);
    AddAnalyzeOptions(s, c->analyze);
    s->footer(
        "Every run is generated (resuming), then all runs are judged in one pass (byte-identical images are\n"
        "asked once) and analyzed together. Every backend and the CLIP model are made before the first request,\n"
        "so a wrong option costs no image; a stage that ends short stops the command (rerun it to resume).\n"
        "Example with the reference server:\n"
        "  visalign acva reference-server --port 8090 &\n"
        "  visalign acva run --run a --model varied --run b --model mono --endpoint http://127.0.0.1:8090 "
        "--seed 0 --param 'seed={seed}' --judge-endpoint http://127.0.0.1:8090 --judge-model ref-judge "
        "--clip-model clip-random --out results\n"
        "(clip-random: `visalign clip random-model --out clip-random`, a tiny CLIP with RANDOM weights)");
  }

  {
    auto options = std::make_shared<acva::ReferenceServerOptions>();
    CLI::App* s = g->add_subcommand("reference-server",
                                    "Local reference image generator + deterministic VLM judge (tests, demos)");
    auto port_file = std::make_shared<std::string>();
    s->add_option("--host", options->host, "Address to listen on")->capture_default_str();
    s->add_option("--port", options->port, "Port (0 = any free port; see --port-file)")->capture_default_str();
    s->add_option("--port-file", *port_file, "Write the port number to this file once listening");
    s->add_option("--slow-ms", options->slow_ms, "Delay of judge models with the +slow suffix")->capture_default_str();
    s->footer(
        "POST /v1/images/generations with model varied | mono | mixed; POST /v1/chat/completions answers from the\n"
        "image content (judge model any name; suffixes +fenced +garbage-once +refuse +refuse-metaphor +slow inject\n"
        "faults). Prints `listening on http://127.0.0.1:PORT` and serves until interrupted. See docs/acva.md.");
    cli.Bind(s, [options, port_file]() -> Status {
      acva::ReferenceServerOptions o = *options;
      o.port_file = *port_file;
      VISALIGN_ASSIGN_OR_RETURN(auto server, acva::ReferenceServer::Start(o));
      std::printf("listening on %s\n", server->url().c_str());
      std::fflush(stdout);
      backends::InterruptHandler interrupt;
      server->ServeUntil(interrupt.stop());
      return Status::Ok();
    });
  }
});

}  // namespace
}  // namespace visalign::cli
