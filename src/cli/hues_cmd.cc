// `visalign hues ...`: the Hues and Cues board, the human baseline, model evaluation and the
// nonsense baseline.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "visalign/backends/embeddings.h"
#include "visalign/backends/runner.h"
#include "visalign/clip.h"
#include "visalign/benchmarks/hues/hues.h"
#include "visalign/core/io.h"
#include "visalign/core/parallel.h"

namespace visalign::cli {
namespace {

using namespace visalign::hues;
namespace fs = std::filesystem;

// Options shared by the commands that need the board and its macro map.
struct BoardOptions {
  std::string chromaticity = "display";
  std::string macro_map;  // empty = data/hues/macro_regions.csv
};

// ... plus the human answers and the outlier threshold.
struct HumanOptions {
  std::string humans;  // empty = data/hues/human_responses.csv
  bool include_colorblind = false;
  std::string colorblind_ids;
  std::string threshold = "chi2:0.95";
};

void AddBoardOptions(CLI::App* cmd, BoardOptions& o) {
  cmd->add_option("--chromaticity", o.chromaticity,
                  "Cell RGB -> CIE xy: display (the study's calibrated display, XYZ = M·RGB², as published) or "
                  "srgb (standard sRGB, D65)")
      ->check(CLI::IsMember({"display", "srgb"}))
      ->capture_default_str();
  cmd->add_option("--macro-map", o.macro_map,
                  "Macro color map CSV (cell,category,confidence,neutral); default data/hues/macro_regions.csv");
}

void AddHumanOptions(CLI::App* cmd, HumanOptions& o) {
  cmd->add_option("--humans", o.humans,
                  "Human answers in the published format (userId,timestamp,clueCategory,clueId,word,coordinate,...; "
                  "words matched by clueId); default data/hues/human_responses.csv");
  cmd->add_flag("--include-colorblind", o.include_colorblind,
                "Keep colour-blind players (excluded by default, by userId and by a colorblind=YES column)");
  cmd->add_option("--colorblind-ids", o.colorblind_ids,
                  "userIds to exclude, one per line; default data/hues/colorblind_ids.txt");
  cmd->add_option("--threshold", o.threshold,
                  "Outlier rule on Mahalanobis d²: chi2:P (chi-square, 2 dof, quantile P; 0.95 -> 5.991) or sigma:K "
                  "(d² > K²)")
      ->capture_default_str();
}

struct Context {
  Board board;
  MacroMap macro;
  Vocabulary vocabulary;
};

Result<Context> LoadContext(const BoardOptions& o) {
  VISALIGN_ASSIGN_OR_RETURN(Chromaticity c, ParseChromaticity(o.chromaticity));
  VISALIGN_ASSIGN_OR_RETURN(Board board, Board::Default(c));
  Result<MacroMap> macro = o.macro_map.empty() ? MacroMap::Default() : MacroMap::Load(o.macro_map);
  if (!macro.ok()) return macro.status();
  VISALIGN_ASSIGN_OR_RETURN(Vocabulary vocabulary, Vocabulary::Default());
  return Context{std::move(board), std::move(macro).value(), std::move(vocabulary)};
}

struct Humans {
  HumanData data;
  HumanBaseline baseline;
};

Result<Humans> LoadBaseline(const HumanOptions& o, const Context& ctx) {
  VISALIGN_ASSIGN_OR_RETURN(Threshold threshold, ParseThreshold(o.threshold));
  HumanLoadOptions load{o.include_colorblind, o.colorblind_ids};
  Result<HumanData> data = o.humans.empty() ? DefaultHumans(ctx.vocabulary, load)
                                            : LoadHumans(o.humans, ctx.vocabulary, load);
  if (!data.ok()) return data.status();
  if (data->word_mismatches > 0)
    spdlog::warn("{}: {} answer(s) spell a word that is not their clue's (matched by clueId, as published)",
                 data->source, data->word_mismatches);
  HumanBaseline baseline = ComputeHumanBaseline(*data, ctx.vocabulary, ctx.board, ctx.macro, threshold);
  for (const WordBaseline& wb : baseline.words)
    if (wb.singular)
      spdlog::warn("human covariance of {} is singular or near-singular ({} answers): no Mahalanobis/Hotelling for it",
                   ctx.vocabulary.words()[wb.word].en, wb.n);
  return Humans{std::move(data).value(), std::move(baseline)};
}

std::string Percent(double rate) { return std::isnan(rate) ? "-" : fmt::format("{:5.1f}%", 100 * rate); }

Result<std::vector<ModelPredictions>> LoadAll(const std::vector<std::string>& paths, const std::string& format_text,
                                              const Context& ctx, const std::vector<NonsenseWord>& nonsense) {
  VISALIGN_ASSIGN_OR_RETURN(PredictionFormat format, ParsePredictionFormat(format_text));
  return LoadPredictionSets(paths, format, ctx.vocabulary, ctx.board, nonsense);
}

// ---- board ----------------------------------------------------------------------------------
void AddBoard(Cli& cli, CLI::App* g) {
  CLI::App* cmd = g->add_subcommand("board", "List the 480 board cells: RGB, CIE xy, CIELAB, macro color");
  auto o = std::make_shared<BoardOptions>();
  AddBoardOptions(cmd, *o);
  cmd->footer("Examples:\n  visalign hues board --json\n  visalign hues board --chromaticity srgb");
  cli.Bind(cmd, [&cli, o]() -> Status {
    VISALIGN_ASSIGN_OR_RETURN(Context ctx, LoadContext(*o));
    if (cli.global().json) {
      nlohmann::json cells = nlohmann::json::array();
      for (int i = 0; i < kCells; ++i) {
        const Cell& c = ctx.board.cell(i);
        const MacroCell& m = ctx.macro.at(i);
        cells.push_back({{"cell", c.name},
                         {"row", std::string(1, c.row)},
                         {"col", c.col},
                         {"rgb", {c.rgb.r, c.rgb.g, c.rgb.b}},
                         {"xy", {c.xy[0], c.xy[1]}},
                         {"lab", {c.lab.L, c.lab.a, c.lab.b}},
                         {"macro", MacroName(m.category)},
                         {"macro_confidence", m.confidence},
                         {"neutral", m.neutral}});
      }
      PrintJson({{"chromaticity", ChromaticityName(ctx.board.chromaticity())},
                 {"macro_map", ctx.macro.source()},
                 {"cells", cells}});
      return Status::Ok();
    }
    fmt::print("cell  R   G   B     x       y       L*     a*     b*    macro   conf neutral\n");
    for (int i = 0; i < kCells; ++i) {
      const Cell& c = ctx.board.cell(i);
      const MacroCell& m = ctx.macro.at(i);
      fmt::print("{:<4} {:3} {:3} {:3}  {:.4f}  {:.4f}  {:6.2f} {:6.2f} {:6.2f}  {:<7} {:.1f}  {}\n", c.name, c.rgb.r,
                 c.rgb.g, c.rgb.b, c.xy[0], c.xy[1], c.lab.L, c.lab.a, c.lab.b, MacroName(m.category), m.confidence,
                 m.neutral ? "yes" : "");
    }
    return Status::Ok();
  });
}

// ---- macro-map ------------------------------------------------------------------------------
void AddMacroMap(Cli& cli, CLI::App* g) {
  CLI::App* cmd = g->add_subcommand(
      "macro-map", "Derive the macro color map (8 categories + neutral flag) from the ISCC-NBS centroids");
  auto out = std::make_shared<std::string>();
  cmd->add_option("--out", *out, "Output CSV (cell,category,confidence,neutral); - for stdout")->required();
  cmd->footer(fmt::format(
      "Rule: each cell's CIELAB (sRGB, D65) gets the category of the nearest chromatic ISCC-NBS centroid by "
      "CIEDE2000 (white/gray/black skipped, so near-achromatic cells are assigned by their hue), through the "
      "level-2 -> 8-category table in docs/hues.md; confidence = share of the {} nearest chromatic centroids in "
      "that category; neutral = chroma C*ab < {}.\n"
      "Example (regenerates the shipped map):\n  visalign hues macro-map --out data/hues/macro_regions.csv",
      MacroMap::kConfidenceNeighbours, MacroMap::kNeutralChroma));
  cli.Bind(cmd, [out]() -> Status {
    VISALIGN_ASSIGN_OR_RETURN(Board board, Board::Default(Chromaticity::kDisplay));
    VISALIGN_ASSIGN_OR_RETURN(const color::IsccNbs* iscc, color::IsccNbs::Default());
    const std::string csv = MacroMap::Derive(board, *iscc).ToCsv();
    if (*out == "-") {
      std::cout << csv;
      return Status::Ok();
    }
    return WriteFileAtomic(*out, csv);
  });
}

// ---- humans ---------------------------------------------------------------------------------
void AddHumans(Cli& cli, CLI::App* g) {
  CLI::App* cmd = g->add_subcommand(
      "humans", "Human baseline: per-word mean/covariance and leave-one-out outlier rates, by category and group");
  auto bo = std::make_shared<BoardOptions>();
  auto ho = std::make_shared<HumanOptions>();
  auto per_word = std::make_shared<bool>(false);
  AddBoardOptions(cmd, *bo);
  AddHumanOptions(cmd, *ho);
  cmd->add_flag("--per-word", *per_word, "Also print the per-word table (the JSON always has it)");
  cmd->footer(
      "Each answer is tested against the mean and covariance of the other answers to its word (leave one out): it "
      "fails when its Mahalanobis d² exceeds the threshold. A category's rate is the mean of its words' rates. "
      "Words whose covariance is singular (too few or collinear answers) are reported, never silently dropped.\n"
      "Examples:\n  visalign hues humans\n  visalign hues humans --threshold sigma:2 --json\n"
      "  visalign hues humans --humans old_answers.csv --include-colorblind");
  cli.Bind(cmd, [&cli, bo, ho, per_word]() -> Status {
    VISALIGN_ASSIGN_OR_RETURN(Context ctx, LoadContext(*bo));
    VISALIGN_ASSIGN_OR_RETURN(Humans h, LoadBaseline(*ho, ctx));
    if (cli.global().json) {
      PrintJson(HumanBaselineJson(h.baseline, h.data, ctx.vocabulary));
      return Status::Ok();
    }
    fmt::print("Humans: {} answers from {} players ({}); colour-blind excluded: {} answers from {} players\n",
               h.data.answers.size(), h.data.users, h.data.source, h.data.excluded_answers, h.data.excluded_users);
    fmt::print("Outlier threshold: {} (d² > {:.4f})\n\n", h.baseline.threshold.spec, h.baseline.threshold.d2);
    if (*per_word) {
      fmt::print("{:<20} {:<12} {:>3}  {:>7}  {:>7}  {:>8}  {}\n", "word", "category", "n", "mean x", "mean y",
                 "LOO fail", "modal macro");
      for (const WordBaseline& wb : h.baseline.words)
        fmt::print("{:<20} {:<12} {:>3}  {:7.4f}  {:7.4f}  {:>8}  {}{}\n", ctx.vocabulary.words()[wb.word].en,
                   ctx.vocabulary.words()[wb.word].category, wb.n, wb.mean[0], wb.mean[1], Percent(wb.loo_fail_rate),
                   MacroName(wb.modal_macro), wb.singular ? "  (singular covariance)" : "");
      fmt::print("\n");
    }
    fmt::print("{:<14} {:>5}  {:>9}\n", "category", "words", "LOO fail");
    for (const CategoryRate& c : h.baseline.categories)
      fmt::print("{:<14} {:>5}  {:>9}\n", c.category, c.n_words, Percent(c.fail_rate));
    fmt::print("{:<14} {:>5}  {:>9}\n\n", "all", h.baseline.words.size(), Percent(h.baseline.fail_rate));
    fmt::print("{:<10} {:<18} {:>7}  {:>9}\n", "group by", "group", "answers", "LOO fail");
    for (const GroupRate& gr : h.baseline.demographics)
      fmt::print("{:<10} {:<18} {:>7}  {:>9}\n", gr.dimension, gr.group, gr.answers, Percent(gr.fail_rate));
    const AgePermutationTest& age = h.baseline.age_test;
    fmt::print("\nAge >=30 minus <30 (players {} vs {}): {} points, permutation test over players p = {} ({} "
               "permutations)\n",
               age.players_30_and_over, age.players_under_30,
               std::isnan(age.difference) ? "-" : fmt::format("{:+.1f}", 100 * age.difference),
               std::isnan(age.p_value) ? "-" : fmt::format("{:.2g}", age.p_value), age.permutations);
    int loo_singular = 0;
    for (const WordBaseline& wb : h.baseline.words) loo_singular += wb.loo_singular;
    fmt::print("\nSingular word covariances: {}; answers not testable (singular leave-one-out covariance): {}\n",
               h.baseline.singular_words, loo_singular);
    return Status::Ok();
  });
}

// ---- evaluate -------------------------------------------------------------------------------
struct EvaluateArgs {
  std::vector<std::string> predictions;
  std::string format = "auto";
  double alpha = 0.05;
  std::string weights = "similarity";
  std::string catalog;
  std::string out;
};

void AddEvaluate(Cli& cli, CLI::App* g) {
  CLI::App* cmd = g->add_subcommand("evaluate", "Compare models' top-5 board cells with the human answers");
  auto bo = std::make_shared<BoardOptions>();
  auto ho = std::make_shared<HumanOptions>();
  auto a = std::make_shared<EvaluateArgs>();
  cmd->add_option("--predictions", a->predictions,
                  "Predictions: a folder of <model>/results.csv (published format: word,coordenada_x,coordenada_y,"
                  "R,G,B,distance; 5 rows per word, best first), such a CSV file, or JSONL "
                  "({\"model\",\"word\",\"top\":[{\"cell\",\"similarity\"}...]}). Repeatable.")
      ->required();
  cmd->add_option("--format", a->format, "auto (by folder/extension), peer or jsonl")
      ->check(CLI::IsMember({"auto", "peer", "jsonl"}))
      ->capture_default_str();
  AddBoardOptions(cmd, *bo);
  AddHumanOptions(cmd, *ho);
  cmd->add_option("--alpha", a->alpha, "Significance level; a word is rejected when its BH q-value <= alpha")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--model-weights", a->weights,
                  "Weights of the model's 5 cells in its covariance: similarity (|similarity|, as published) or "
                  "uniform")
      ->check(CLI::IsMember({"similarity", "uniform"}))
      ->capture_default_str();
  cmd->add_option("--catalog", a->catalog,
                  "CSV model,architecture,dataset whose rows override (or add to) the shipped model-family catalog "
                  "data/hues/model_catalog.csv (the 162 published models); families.csv has the rates per family");
  cmd->add_option("--out", a->out, "Output folder")->required();
  cmd->footer(
      "Per model and word: top-1 cell and macro colors, Mahalanobis d² of the top-1 cell against the human mean and "
      "covariance (outlier above the threshold), Hotelling two-sample T² / F / p (survival function) of the humans vs "
      "the weighted top-5 cells, Benjamini-Hochberg q over the model's words. Writes words.csv, hotelling.csv "
      "(with the published 1 - CDF p-value), models.csv, categories.csv, summary.json, summary.md "
      "and families.csv.\n"
      "Examples:\n  visalign hues evaluate --predictions data/hues/peer-sample --out hues-eval\n"
      "  visalign hues evaluate --predictions runs/ --humans data/hues/peer-sample/HC_old.csv --out old-eval\n"
      "  visalign hues evaluate --predictions all.jsonl --model-weights uniform --catalog models.csv --out eval");
  cli.Bind(cmd, [&cli, bo, ho, a]() -> Status {
    VISALIGN_ASSIGN_OR_RETURN(Context ctx, LoadContext(*bo));
    VISALIGN_ASSIGN_OR_RETURN(auto nonsense, AllNonsenseWords());
    VISALIGN_ASSIGN_OR_RETURN(ModelWeights weights, ParseModelWeights(a->weights));
    EvaluationReport report;
    VISALIGN_ASSIGN_OR_RETURN(Catalog catalog, LoadModelCatalog(a->catalog, report.catalog_sources));
    report.catalog = std::move(catalog);
    VISALIGN_ASSIGN_OR_RETURN(Humans h, LoadBaseline(*ho, ctx));
    VISALIGN_ASSIGN_OR_RETURN(auto models, LoadAll(a->predictions, a->format, ctx, nonsense));
    report.humans_source = h.data.source;
    report.humans_exclusions_source = h.data.exclusions_source;
    report.threshold = h.baseline.threshold;
    report.options = {a->alpha, weights};
    report.chromaticity = ctx.board.chromaticity();
    report.macro_source = ctx.macro.source();
    report.models.resize(models.size());
    ParallelFor(models.size(), [&](size_t i) {
      report.models[i] = EvaluateModel(models[i], h.baseline, ctx.vocabulary, ctx.board, ctx.macro, report.options);
    });
    for (const ModelEvaluation& m : report.models) {
      if (!m.missing_words.empty())
        spdlog::warn("model {}: no predictions for {} of {} words (first: {})", m.name, m.missing_words.size(),
                     ctx.vocabulary.words().size(), m.missing_words.front());
      if (m.negative_similarities && weights == ModelWeights::kAbsSimilarity)
        spdlog::warn("model {}: negative similarities; weights use |similarity| (published recipe)", m.name);
      if (!report.catalog->count(m.name))
        spdlog::warn("model {} is not in the model-family catalog (add it with --catalog FILE)", m.name);
    }
    VISALIGN_RETURN_IF_ERROR(WriteEvaluation(report, h.baseline, ctx.vocabulary, a->out));
    if (cli.global().json) {
      VISALIGN_ASSIGN_OR_RETURN(std::string summary, ReadFile(fs::path(a->out) / "summary.json"));
      PrintJson(nlohmann::json::parse(summary));
      return Status::Ok();
    }
    fmt::print("{:<32} {:>5}  {:>11}  {:>11}  {:>11}  {:>9}\n", "model", "words", "Mahalanobis", "Hotelling", "(p<=alpha)",
               "humans");
    for (const ModelEvaluation& m : report.models)
      fmt::print("{:<32} {:>5}  {:>11}  {:>11}  {:>11}  {:>9}\n", m.name, m.words.size(), Percent(m.mahalanobis.rate()),
                 Percent(m.hotelling.rate()), Percent(m.hotelling_uncorrected.rate()), Percent(m.human_fail_rate));
    fmt::print("\nFail rates (share of words). Hotelling: BH q <= {}; humans: leave-one-out rate over the same words.\n"
               "Wrote {}/words.csv, hotelling.csv, models.csv, categories.csv, families.csv, summary.json, summary.md\n",
               a->alpha, a->out);
    return Status::Ok();
  });
}

// ---- nonsense -------------------------------------------------------------------------------
constexpr std::string_view kPublishedNonsense = "published";  // --vocabulary's name for the authors' 11-item list

void AddNonsense(Cli& cli, CLI::App* g) {
  CLI::App* cmd = g->add_subcommand("nonsense", "Does a model collapse to a default color on meaningless words?");
  auto bo = std::make_shared<BoardOptions>();
  auto paths = std::make_shared<std::vector<std::string>>();
  auto format = std::make_shared<std::string>("auto");
  auto vocabulary_path = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  cmd->add_option("--predictions", *paths, "Predictions including the nonsense words (same formats as evaluate)")
      ->required();
  cmd->add_option("--format", *format, "auto, peer or jsonl")
      ->check(CLI::IsMember({"auto", "peer", "jsonl"}))
      ->capture_default_str();
  cmd->add_option("--vocabulary", *vocabulary_path,
                  "Nonsense vocabulary: a CSV word,group (4 groups of 4), or \"published\" for the authors' own "
                  "11-item list as published (data/hues/nonsense_words.csv); default data/hues/nonsense16.csv");
  AddBoardOptions(cmd, *bo);
  cmd->add_option("--out", *out,
                  "Output folder: summary.json, summary.csv, items.jsonl (one line per model and nonsense word), "
                  "summary.md; `visalign report --results` draws it")
      ->required();
  cmd->footer(
      "A group collapses when >= 3/4 of its top-1 cells (3 of 4) share a macro class (the 8 categories, or Neutral "
      "for the 7 near-achromatic cells I16-I20, J17, J18; the paper's neutral is I18 alone); one-word groups never "
      "collapse. neutral_collapse: >= 3/4 of the groups that can collapse (3 of 4) collapse onto Neutral; "
      "specific_color_collapse: onto one category; selective_collapse: some groups collapse, fewer or onto "
      "different classes; high_entropy: none. Also: entropy (bits) of the top-1 macro classes, the nonsense prior "
      "(the modal top-1 cell, if it occurs >= 2 times) and valid words whose top-1 is that cell (possible false "
      "positives). Prints each model's result (--json: summary.json's \"models\") and writes them to --out.\n"
      "Examples:\n  visalign hues nonsense --predictions run.jsonl --out nonsense\n"
      "  visalign hues nonsense --predictions runs/ --vocabulary published --json --out nonsense-published\n"
      "  visalign report --results nonsense --out report.html");
  cli.Bind(cmd, [&cli, bo, paths, format, vocabulary_path, out]() -> Status {
    VISALIGN_ASSIGN_OR_RETURN(Context ctx, LoadContext(*bo));
    const bool custom = !vocabulary_path->empty() && *vocabulary_path != kPublishedNonsense;
    NonsenseRun run;
    Result<std::vector<NonsenseWord>> nonsense = vocabulary_path->empty()      ? DefaultNonsenseVocabulary()
                                                 : custom                      ? LoadNonsenseVocabulary(*vocabulary_path)
                                                                               : PublishedNonsenseVocabulary();
    if (!nonsense.ok()) return nonsense.status();
    if (custom) {
      run.vocabulary_source = *vocabulary_path;
    } else {
      VISALIGN_ASSIGN_OR_RETURN(fs::path file, DataFile(vocabulary_path->empty() ? "hues/nonsense16.csv"
                                                                                 : "hues/nonsense_words.csv"));
      run.vocabulary_source = file.string();
    }
    // Prediction files may hold the words of both shipped lists (hues run --nonsense plays them all).
    Result<std::vector<NonsenseWord>> known = custom ? nonsense : AllNonsenseWords();
    if (!known.ok()) return known.status();
    VISALIGN_ASSIGN_OR_RETURN(auto models, LoadAll(*paths, *format, ctx, *known));
    for (const ModelPredictions& m : models) {
      VISALIGN_ASSIGN_OR_RETURN(NonsenseResult r, ClassifyNonsense(m, *nonsense, ctx.macro));
      run.results.push_back(std::move(r));
      run.prediction_sources.push_back(m.source);
    }
    run.words = std::move(nonsense).value();
    VISALIGN_RETURN_IF_ERROR(WriteNonsense(run, ctx.macro, ctx.vocabulary, *out));
    if (cli.global().json) {
      VISALIGN_ASSIGN_OR_RETURN(std::string summary, ReadFile(fs::path(*out) / "summary.json"));
      PrintJson({{"models", nlohmann::json::parse(summary)["models"]}});
      return Status::Ok();
    }
    for (const NonsenseResult& r : run.results) fmt::print("{}", NonsenseResultText(r, ctx.vocabulary, run.words.size()));
    fmt::print("Wrote {}/summary.json, summary.csv, items.jsonl, summary.md\n", *out);
    return Status::Ok();
  });
}

// ---- run --------------------------------------------------------------------------------------
struct RunArgs {
  std::string model;
  std::string models;
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
  std::string out;
  std::string cache;
  std::string store;
  bool no_cache = false;
  std::string chromaticity = "display";
};

// What `hues run` played with: predictions, and for a native model its embeddings and cache use.
struct RunOutcome {
  std::vector<WordPredictions> words;
  std::optional<HuesEmbeddings> embeddings;  // what the ranking used (not for --embeddings FILE)
  ClipRunResult native;                     // --clip-model only
  std::optional<clip::ClipConfig> config;   // --clip-model only
};

// How `hues run` loads a model (--precision applies, so the fingerprint tells fp32 and bf16 apart).
Result<clip::ClipLoadOptions> ClipOptions(const Cli& cli, const RunArgs& a) {
  clip::ClipLoadOptions clip_options;
  clip_options.show_progress = !cli.global().json;
  VISALIGN_RETURN_IF_ERROR(ApplyClipPrecision(a.precision, clip_options));
  return clip_options;
}

Result<RunOutcome> RunNative(const Cli& cli, const RunArgs& a, const Context& ctx, const std::vector<std::string>& words) {
  VISALIGN_ASSIGN_OR_RETURN(clip::ClipLoadOptions clip_options, ClipOptions(cli, a));
  auto model = clip::LoadClipModel(a.model, clip_options);
  if (!model.ok()) return model.status().WithContext("--clip-model");
  if (model->config().random)
    spdlog::warn("--clip-model {} has weights {}", a.model, clip::RandomWeightsLabel(model->config()));
  ClipRunOptions options;
  options.prompt_template = a.prompt_template;
  if (!a.no_cache) options.cache_dir = !a.store.empty() ? fs::path(a.store) / "cache"
                                       : !a.cache.empty() ? fs::path(a.cache) : DefaultBoardCacheDir();
  spdlog::info("{} words; board patches {}", words.size(),
               options.cache_dir.empty() ? "not cached" : "cached in " + options.cache_dir.string());
  RunOutcome outcome;
  VISALIGN_ASSIGN_OR_RETURN(outcome.native, PredictWithClip(*model, ctx.board, words, options));
  outcome.words = outcome.native.words;
  outcome.embeddings = HuesEmbeddings{outcome.native.board_embeddings, words, outcome.native.text_embeddings,
                                      a.prompt_template, fs::absolute(a.model).lexically_normal().string()};
  outcome.config = model->config();
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

// The model name in the outputs: --name, else the model folder's or embeddings file's name, else
// the endpoint's model name.
Result<std::string> RunName(const RunArgs& a) {
  std::string name = a.name;
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

// What one model's run is: identical records give identical predictions.
nlohmann::json RunRecord(const std::string& fingerprint, const std::string& prompt_template,
                         const std::vector<std::string>& words) {
  std::string joined;
  for (const std::string& w : words) joined += w + "\n";
  return {{"fingerprint", fingerprint}, {"template", prompt_template}, {"words_sha256", Sha256Hex(joined)}};
}

// Model folders of DIR (those with a config file), sorted by name.
Result<std::vector<fs::path>> ModelDirs(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return Status::InvalidArgument("\"" + dir.string() + "\" is not a directory", "--models",
                                   "a folder of CLIP model folders");
  }
  std::vector<fs::path> dirs;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory() &&
        (fs::is_regular_file(e.path() / "open_clip_config.json") || fs::is_regular_file(e.path() / "config.json"))) {
      dirs.push_back(e.path());
    }
  }
  std::sort(dirs.begin(), dirs.end());
  if (dirs.empty()) {
    return Status::InvalidArgument("no model folders in \"" + dir.string() + "\"", "--models",
                                   "subfolders with open_clip_config.json or config.json");
  }
  return dirs;
}

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
// `resumable` (--models): skips a native model whose run record matches, and writes the record after.
Result<nlohmann::json> RunOne(const Cli& cli, const RunArgs& a, const Context& ctx, const std::vector<std::string>& words,
                              const std::string& name, bool resumable) {
  const std::vector<fs::path> outputs = PredictionOutputFiles(a.out, name);
  const fs::path record_file = fs::path(a.out) / name / kRunRecordFile;
  nlohmann::json record;
  if (resumable) {
    VISALIGN_ASSIGN_OR_RETURN(clip::ClipLoadOptions clip_options, ClipOptions(cli, a));
    clip_options.show_progress = false;
    Result<clip::ClipModel> model = clip::LoadClipModel(a.model, clip_options);
    if (!model.ok()) return model.status().WithContext("--models " + a.model);
    VISALIGN_ASSIGN_OR_RETURN(std::string fingerprint, model->Fingerprint());
    record = RunRecord(fingerprint, a.prompt_template, words);
    bool done = fs::is_regular_file(record_file);
    for (const fs::path& f : outputs) done = done && fs::is_regular_file(f);
    Result<std::string> text = done ? ReadFile(record_file) : Result<std::string>(Status::NotFound("no record"));
    if (text.ok() && nlohmann::json::parse(*text, nullptr, false) == record) {
      if (!cli.global().json) fmt::print("{}: already done ({} matches), skipped\n", name, record_file.string());
      nlohmann::json skipped = nlohmann::json::object();
      skipped["model"] = name;
      skipped["status"] = "skipped";
      return skipped;
    }
  }
  Result<RunOutcome> outcome = !a.model.empty()       ? RunNative(cli, a, ctx, words)
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
  if (resumable) VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(record_file, record.dump(2) + "\n"));
  std::vector<std::string> files;
  for (const fs::path& f : outputs) files.push_back(f.string());
  nlohmann::json j = {{"model", name},
               {"source", source},
                     {"words", run.words.size()},
                     {"cache_hit", run.native.cache_hit},
                     {"cache_file", run.native.cache_file.string()},
                     {"outputs", files},
                     {"saved_embeddings", a.save_embeddings.empty() ? nlohmann::json() : nlohmann::json(a.save_embeddings)},
                     {"random_weights", run.config ? RandomWeightsJson(*run.config) : nlohmann::json()}};
  if (resumable) j["status"] = "done";
  if (cli.global().json) return j;
  const std::string board = source == "embeddings" ? "from " + a.embeddings
                            : source == "endpoint"  ? "from " + a.endpoint
                            : run.native.cache_file.empty() ? "computed, not cached"
                            : run.native.cache_hit          ? "from cache " + run.native.cache_file.string()
                                                            : "computed and cached in " + run.native.cache_file.string();
  fmt::print("{}: top-5 cells for {} words (board embeddings: {})\n", name, run.words.size(), board);
  if (random) fmt::print("weights {}\n", clip::RandomWeightsLabel(*run.config));
  if (!a.save_embeddings.empty()) fmt::print("wrote embeddings {}\n", a.save_embeddings);
  for (const fs::path& f : outputs) fmt::print("wrote {}\n", f.string());
  return j;
}

// `hues run --models DIR`: RunOne for every model folder of DIR; a failing model does not stop the others.
Status RunModels(const Cli& cli, const RunArgs& a, const Context& ctx, const std::vector<std::string>& words) {
  VISALIGN_ASSIGN_OR_RETURN(std::vector<fs::path> dirs, ModelDirs(a.models));
  nlohmann::json results = nlohmann::json::array();
  Status first_failure = Status::Ok();
  int failed = 0;
  for (const fs::path& dir : dirs) {
    RunArgs one = a;
    one.model = dir.string();
    const std::string name = dir.filename().string();
    Result<nlohmann::json> r = RunOne(cli, one, ctx, words, name, /*resumable=*/true);
    if (r.ok()) {
      results.push_back(*r);
      continue;
    }
    spdlog::error("{}: {}", name, r.status().ToString());
    nlohmann::json f = nlohmann::json::object();
    f["model"] = name;
    f["status"] = "failed";
    f["error"] = r.status().ToString();
    results.push_back(f);
    if (failed++ == 0) first_failure = r.status();
  }
  if (cli.global().json) {
    nlohmann::json out = nlohmann::json::object();
    out["models"] = results;
    PrintJson(out);
  }
  if (failed > 0) {
    return first_failure.WithContext(fmt::format("{} of {} models in --models failed; first", failed, dirs.size()));
  }
  return Status::Ok();
}

void AddRun(Cli& cli, CLI::App* g) {
  CLI::App* cmd = g->add_subcommand(
      "run", "Play Hues and Cues with a native CLIP/SigLIP model or with embeddings from anywhere: top-5 cells per word");
  auto a = std::make_shared<RunArgs>();
  CLI::Option* model = cmd->add_option("--clip-model", a->model, "CLIP model folder (see `visalign clip info`)");
  cli.DeprecateOption(cmd, "--model", "--clip-model");
  CLI::Option* models = cmd->add_option(
      "--models", a->models,
      "Folder of model folders (each as for --clip-model): runs each, sorted and named by its folder, into --out "
      "FOLDER; re-running skips models already done with the same weights, template and words")->excludes(model);
  AddClipPrecisionOption(cmd, &a->precision);
  CLI::Option* file = cmd->add_option(
      "--embeddings", a->embeddings,
      "Precomputed embeddings FILE (safetensors: \"board\" [480, D], \"words\" [W, D]; docs/hues.md) instead of a "
      "native model")->excludes(model)->excludes(models);
  CLI::Option* endpoint = cmd->add_option("--embeddings-endpoint", a->endpoint,
                                          "OpenAI-compatible embedding server URL (POST /v1/embeddings; board patches "
                                          "as PNG data URLs) instead of a native model")
                              ->excludes(model)
                              ->excludes(models)
                              ->excludes(file);
  cmd->add_option("--embeddings-model", a->endpoint_model, "The endpoint's name for its model (the requests' \"model\")")
      ->needs(endpoint);
  cmd->add_option("--api-key-env", a->api_key_env, "Environment variable holding the endpoint's API key")->needs(endpoint);
  cmd->add_option("--save-embeddings", a->save_embeddings,
                  "Also write the board and word embeddings used to FILE (the --embeddings layout)")
      ->excludes(file);
  cmd->add_option("--name", a->name, "Model name in the outputs (default: the model folder's or embeddings file's name)");
  cmd->add_option("--template", a->prompt_template, "Prompt template; {} is replaced by the word")->capture_default_str();
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
  cmd->add_option("--cache", a->cache,
                  "Folder caching board image embeddings per (model fingerprint, preprocessing, board); default "
                  "$VISALIGN_CACHE, $XDG_CACHE_HOME/visalign or ~/.cache/visalign");
  cmd->add_option("--store", a->store, "Run store folder: cache board embeddings under STORE/cache instead");
  cmd->add_flag("--no-cache", a->no_cache, "Neither read nor write the board-embedding cache");
  cmd->footer(
      "Each of the 480 board cells becomes a solid image of the model's input size, run through the model's own "
      "preprocessing and image tower (cached: later runs with new words cost only the text tower); each word "
      "goes through the template and the text tower; cells are ranked by cosine similarity (for SigLIP the same "
      "order as its sigmoid scores). With --embeddings or --embeddings-endpoint the embeddings come from elsewhere "
      "and are ranked the same way.\n"
      "Examples:\n  visalign hues run --clip-model models/ViT-B-32 --nonsense --out runs/\n"
      "  visalign hues run --models models/ --out runs/     # every model folder in models/, resumable\n"
      "  visalign hues evaluate --predictions runs/ --out runs-eval\n"
      "  visalign hues run --clip-model models/ViT-B-32 --template \"the color of {}\" --out vitb32-color.jsonl\n"
      "  visalign hues run --embeddings EVA02-B-16.safetensors --nonsense --out runs/\n"
      "  visalign hues run --embeddings-endpoint http://127.0.0.1:8080 --embeddings-model siglip --out runs/");
  cli.Bind(cmd, [&cli, a]() -> Status {
    if (a->model.empty() && a->models.empty() && a->embeddings.empty() && a->endpoint.empty())
      return Status::InvalidArgument("no model", "visalign hues run",
                                     "one of --clip-model DIR, --models DIR, --embeddings FILE or --embeddings-endpoint URL");
    std::string name;
    if (a->models.empty()) {
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
    if (a->models.empty()) {
      VISALIGN_ASSIGN_OR_RETURN(nlohmann::json j, RunOne(cli, *a, ctx, words, name, /*resumable=*/false));
      if (cli.global().json) PrintJson(j);
      return Status::Ok();
    }
    return RunModels(cli, *a, ctx, words);
  });
}

const CommandGroup kHues(40, [](Cli& cli) {
  CLI::App* g = cli.Group("hues", "Hues and Cues: CLIP color alignment vs human players");
  AddBoard(cli, g);
  AddMacroMap(cli, g);
  AddHumans(cli, g);
  AddEvaluate(cli, g);
  AddNonsense(cli, g);
  AddRun(cli, g);
});

}  // namespace
}  // namespace visalign::cli
