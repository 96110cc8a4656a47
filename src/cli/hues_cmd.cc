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
#include "cli/hues_context.h"
#include "visalign/backends/embeddings.h"
#include "visalign/backends/runner.h"
#include "visalign/benchmarks/hues/hues.h"
#include "visalign/clip.h"
#include "visalign/core/io.h"
#include "visalign/core/parallel.h"
#include "visalign/core/untrusted.h"

namespace visalign::cli {
namespace {

using namespace visalign::hues;
namespace fs = std::filesystem;

// ... plus the human answers and the outlier threshold.
struct HumanOptions {
  std::string humans;  // empty = data/hues/human_responses.csv
  bool include_colorblind = false;
  std::string colorblind_ids;
  std::string threshold = "chi2:0.95";
  std::string pairing = "character";
};

void AddBoardOptions(Cli& cli, CLI::App* cmd, BoardOptions& o) {
  cmd->add_option("--chromaticity", o.chromaticity,
                  "Cell RGB -> CIE xy: display (the study's calibrated display, XYZ = M·RGB², as published) or "
                  "srgb (standard sRGB, D65)")
      ->check(CLI::IsMember({"display", "srgb"}))
      ->capture_default_str();
  cmd->add_option("--regions", o.regions,
                  "Macro color regions CSV (cell,category,confidence,neutral), e.g. the participants' consensus of "
                  "`hues export-regions`; default data/hues/macro_regions.csv");
  cli.DeprecateOption(cmd, "--macro-map", "--regions");
}

void AddHumanOptions(CLI::App* cmd, HumanOptions& o) {
  cmd->add_option("--humans", o.humans,
                  "Human answers in the published format (userId,timestamp,clueCategory,clueId,word,coordinate,...; "
                  "words matched as --pairing says); default data/hues/human_responses.csv");
  cmd->add_option("--pairing", o.pairing,
                  "Which word an answer counts for: character = the character the player saw, so a Spanish answer "
                  "to EPI (Y BLAS) (clue 91, BERT (AND ERNIE) in English) counts for ERNIE (AND BERT) and one to "
                  "BLAS (Y EPI) for BERT (AND ERNIE); clue-id = the word of the answer's clueId")
      ->check(CLI::IsMember({"character", "clue-id"}))
      ->capture_default_str();
  cmd->add_flag("--include-colorblind", o.include_colorblind,
                "Keep colour-blind players (excluded by default, by userId and by a colorblind=YES column)");
  cmd->add_option("--colorblind-ids", o.colorblind_ids,
                  "userIds to exclude, one per line; default data/hues/colorblind_ids.txt");
  cmd->add_option("--threshold", o.threshold,
                  "Outlier rule on Mahalanobis d²: chi2:P (chi-square, 2 dof, quantile P; 0.95 -> 5.991) or sigma:K "
                  "(d² > K²)")
      ->capture_default_str();
}

struct Humans {
  HumanData data;
  HumanBaseline baseline;
};

Result<Humans> LoadBaseline(const HumanOptions& o, const Context& ctx) {
  VISALIGN_ASSIGN_OR_RETURN(Threshold threshold, ParseThreshold(o.threshold));
  VISALIGN_ASSIGN_OR_RETURN(AnswerPairing pairing, ParseAnswerPairing(o.pairing));
  HumanLoadOptions load{o.include_colorblind, o.colorblind_ids, pairing};
  Result<HumanData> data =
      o.humans.empty() ? DefaultHumans(ctx.vocabulary, load) : LoadHumans(o.humans, ctx.vocabulary, load);
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
  AddBoardOptions(cli, cmd, *o);
  cmd->footer("Examples:\n  visalign hues board --json\n  visalign hues board --chromaticity srgb");
  cli.Bind(cmd, [&cli, o]() -> Status {
    VISALIGN_ASSIGN_OR_RETURN(Context ctx, LoadContext(*o));
    if (cli.global().json) {
      Json cells = Json::array();
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
  AddBoardOptions(cli, cmd, *bo);
  AddHumanOptions(cmd, *ho);
  cmd->add_flag("--per-word", *per_word, "Also print the per-word table (the JSON always has it)");
  cmd->footer(
      "Each answer is tested against the mean and covariance of the other answers to its word (leave one out): it "
      "fails when its Mahalanobis d² exceeds the threshold. A category's rate is the mean of its words' rates. "
      "Words whose covariance is singular (too few or collinear answers) are reported, never silently dropped.\n"
      "Examples:\n  visalign hues humans\n  visalign hues humans --threshold sigma:2 --json\n"
      "  visalign hues humans --humans data/hues/peer-sample/HC_old.csv --include-colorblind");
  cli.Bind(cmd, [&cli, bo, ho, per_word]() -> Status {
    VISALIGN_ASSIGN_OR_RETURN(Context ctx, LoadContext(*bo));
    VISALIGN_ASSIGN_OR_RETURN(Humans h, LoadBaseline(*ho, ctx));
    if (cli.global().json) {
      PrintJson(HumanBaselineJson(h.baseline, h.data, ctx.vocabulary));
      return Status::Ok();
    }
    fmt::print("Humans: {} answers from {} players ({}); colour-blind excluded: {} answers from {} players\n",
               h.data.answers.size(), h.data.users, h.data.source, h.data.excluded_answers, h.data.excluded_users);
    fmt::print("Pairing: {}{}\n", AnswerPairingName(h.data.pairing),
               h.data.pairing == AnswerPairing::kCharacter
                   ? fmt::format(" ({} Spanish answers to the Sesame Street clues counted for the character shown)",
                                 h.data.repaired_answers)
                   : std::string());
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
    fmt::print(
        "\nAge >=30 minus <30 (players {} vs {}): {} points, permutation test over players p = {} ({} "
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
  AddBoardOptions(cli, cmd, *bo);
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
      "  visalign hues evaluate --predictions runs/ --model-weights uniform --catalog zoo.csv --out eval");
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
    report.pairing = h.data.pairing;
    report.repaired_answers = h.data.repaired_answers;
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
      VISALIGN_ASSIGN_OR_RETURN(Json summary, ReadJsonFile(fs::path(a->out) / "summary.json"));
      PrintJson(summary);
      return Status::Ok();
    }
    fmt::print("{:<32} {:>5}  {:>11}  {:>11}  {:>11}  {:>9}\n", "model", "words", "Mahalanobis", "Hotelling",
               "(p<=alpha)", "humans");
    for (const ModelEvaluation& m : report.models)
      fmt::print("{:<32} {:>5}  {:>11}  {:>11}  {:>11}  {:>9}\n", m.name, m.words.size(), Percent(m.mahalanobis.rate()),
                 Percent(m.hotelling.rate()), Percent(m.hotelling_uncorrected.rate()), Percent(m.human_fail_rate));
    fmt::print(
        "\nFail rates (share of words). Hotelling: BH q <= {}; humans: leave-one-out rate over the same words.\n"
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
  AddBoardOptions(cli, cmd, *bo);
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
    Result<std::vector<NonsenseWord>> nonsense = vocabulary_path->empty() ? DefaultNonsenseVocabulary()
                                                 : custom                 ? LoadNonsenseVocabulary(*vocabulary_path)
                                                                          : PublishedNonsenseVocabulary();
    if (!nonsense.ok()) return nonsense.status();
    if (custom) {
      run.vocabulary_source = *vocabulary_path;
    } else {
      VISALIGN_ASSIGN_OR_RETURN(fs::path file,
                                DataFile(vocabulary_path->empty() ? "hues/nonsense16.csv" : "hues/nonsense_words.csv"));
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
      VISALIGN_ASSIGN_OR_RETURN(Json summary, ReadJsonFile(fs::path(*out) / "summary.json"));
      PrintJson({{"models", summary["models"]}});
      return Status::Ok();
    }
    for (const NonsenseResult& r : run.results)
      fmt::print("{}", NonsenseResultText(r, ctx.vocabulary, run.words.size()));
    fmt::print("Wrote {}/summary.json, summary.csv, items.jsonl, summary.md\n", *out);
    return Status::Ok();
  });
}

const CommandGroup kHues(40, {"hues"}, [](Cli& cli) {
  CLI::App* g = cli.Group("hues", "Hues and Cues: CLIP color alignment vs human players");
  AddBoard(cli, g);
  AddMacroMap(cli, g);
  AddHumans(cli, g);
  AddEvaluate(cli, g);
  AddNonsense(cli, g);
});

}  // namespace
}  // namespace visalign::cli
