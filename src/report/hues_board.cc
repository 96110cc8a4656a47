// Hues and Cues per-word figures: the 480-cell board with the human answers as a heat map and the
// models' top-5 marked, and the CIE xy scatter of the answers with the human ellipse and the
// models' points. They read the human answers and predictions that summary.json's "inputs" name,
// through the Hues and Cues library (the same loading as the evaluation), and only when each file's
// SHA-256 is still the one recorded, so the figures show what was evaluated.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "report/page.h"
#include "visalign/benchmarks/hues/hues.h"

namespace visalign::report::internal {
namespace {

// Above this many models a colour legend would be cut by vega; the tooltip names the model.
constexpr size_t kMaxLegendModels = 20;

Json ModelColor(size_t models) {
  Json color = {{"field", "model"}, {"type", "nominal"}};
  if (models > kMaxLegendModels) color["legend"] = nullptr;
  return color;
}

std::string Hex(const color::Srgb8& c) { return fmt::format("#{:02X}{:02X}{:02X}", c.r, c.g, c.b); }

// An input file of summary.json ({"path", "sha256"}) resolved and checked; nullopt with `why` set
// when it is missing or changed.
std::optional<std::filesystem::path> CheckedInput(const ResultsFolder& folder, const Json& input, std::string& why) {
  const std::string path = input.value("path", "");
  const std::filesystem::path file = ResolveInputPath(folder, path);
  Result<std::string> sha = Sha256File(file);
  if (!sha.ok() || *sha != input.value("sha256", "")) {
    why = fmt::format("{} is {} since the evaluation", path, sha.ok() ? "changed" : "not readable");
    return std::nullopt;
  }
  return file;
}

// The words to draw: the options' words, else the board_word_count words most models fail
// (Mahalanobis outliers in items.jsonl), ties in vocabulary order.
Result<std::vector<int>> BoardWords(const ResultsFolder& folder, const ReportOptions& options,
                                    const hues::Vocabulary& vocab) {
  std::vector<int> words;
  for (const std::string& w : options.board_words) {
    std::optional<int> i = vocab.IndexOfName(w);
    if (!i)
      return Status::InvalidArgument(fmt::format("unknown word \"{}\"", w), "board word",
                                     "a word of data/hues/words.csv");
    words.push_back(*i);
  }
  if (!options.board_words.empty()) return words;
  std::vector<int> fails(vocab.words().size(), 0);
  for (const Json& item : folder.items)
    if (std::optional<int> i = vocab.IndexOfName(item.value("word", ""));
        i && item.value("mahalanobis_outlier", false) == true)
      ++fails[static_cast<size_t>(*i)];
  std::vector<int> order(vocab.words().size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return fails[a] > fails[b]; });
  order.resize(std::min<size_t>(order.size(), static_cast<size_t>(options.board_word_count)));
  return order;
}

Json BoardSpec(const hues::Board& board, const std::array<int, hues::kCells>& human_counts,
               const std::vector<hues::ModelPredictions>& models, int word) {
  Json rows = Json::array();
  for (const hues::Cell& c : board.cells())
    rows.push_back({{"kind", "cell"},
                    {"cell", c.name},
                    {"row", std::string(1, c.row)},
                    {"col", c.col},
                    {"color", Hex(c.rgb)},
                    {"humans", human_counts[static_cast<size_t>(&c - board.cells().data())]}});
  for (const hues::ModelPredictions& m : models) {
    const std::vector<hues::Prediction>& top = m.words[static_cast<size_t>(word)];
    for (size_t rank = 0; rank < top.size(); ++rank) {
      const hues::Cell& c = board.cell(top[rank].cell);
      rows.push_back({{"kind", "model"},
                      {"model", m.name},
                      {"cell", c.name},
                      {"row", std::string(1, c.row)},
                      {"col", c.col},
                      {"rank", rank + 1},
                      {"similarity", top[rank].similarity}});
    }
  }
  Json spec = BaseSpec(std::move(rows));
  const Json x = {{"field", "col"}, {"type", "ordinal"}, {"title", nullptr}, {"axis", {{"orient", "top"}}}};
  const Json y = {{"field", "row"}, {"type", "ordinal"}, {"title", nullptr}};
  spec["width"] = {{"step", 20}};
  spec["height"] = {{"step", 20}};
  spec["layer"] = {{{"name", "cells"},
                    {"transform", {{{"filter", "datum.kind == 'cell'"}}}},
                    {"mark", {{"type", "rect"}}},
                    {"encoding",
                     {{"x", x},
                      {"y", y},
                      {"fill", {{"field", "color"}, {"type", "nominal"}, {"scale", nullptr}}},
                      {"tooltip", {{{"field", "cell"}}, {{"field", "humans"}, {"title", "human answers"}}}}}}},
                   {{"name", "humans"},
                    {"transform", {{{"filter", "datum.kind == 'cell' && datum.humans > 0"}}}},
                    {"mark", {{"type", "circle"}, {"color", "black"}, {"opacity", 0.75}}},
                    {"encoding",
                     {{"x", x},
                      {"y", y},
                      {"size", {{"field", "humans"}, {"type", "quantitative"}, {"title", "human answers"}}},
                      {"tooltip", {{{"field", "cell"}}, {{"field", "humans"}, {"title", "human answers"}}}}}}},
                   {{"name", "top5"},
                    {"transform", {{{"filter", "datum.kind == 'model'"}}}},
                    {"mark", {{"type", "square"}, {"filled", false}, {"size", 260}, {"strokeWidth", 2}}},
                    {"encoding",
                     {{"x", x},
                      {"y", y},
                      {"color", ModelColor(models.size())},
                      {"tooltip",
                       {{{"field", "model"}},
                        {{"field", "cell"}},
                        {{"field", "rank"}},
                        {{"field", "similarity"}, {"format", ".4f"}}}}}}}};
  return spec;
}

Json ScatterSpec(const hues::Board& board, const hues::WordView& view,
                 const std::vector<hues::ModelPredictions>& models) {
  Json rows = Json::array();
  const int word = view.word;
  for (size_t i = 0; i < view.counts.size(); ++i)
    if (view.counts[i] > 0) {
      const hues::Cell& c = board.cells()[i];
      rows.push_back({{"kind", "human"},
                      {"cell", c.name},
                      {"x", c.xy[0]},
                      {"y", c.xy[1]},
                      {"humans", view.counts[i]},
                      {"color", Hex(c.rgb)}});
    }
  // The points at Mahalanobis distance² d² from the human mean: the evaluation's outlier boundary.
  for (size_t k = 0; k < view.ellipse.size(); ++k)
    rows.push_back({{"kind", "ellipse"}, {"order", k}, {"x", view.ellipse[k][0]}, {"y", view.ellipse[k][1]}});
  for (const hues::ModelPredictions& m : models) {
    const std::vector<hues::Prediction>& top = m.words[static_cast<size_t>(word)];
    for (size_t rank = 0; rank < top.size(); ++rank) {
      const hues::Cell& c = board.cell(top[rank].cell);
      rows.push_back({{"kind", "model"},
                      {"model", m.name},
                      {"cell", c.name},
                      {"x", c.xy[0]},
                      {"y", c.xy[1]},
                      {"rank", rank + 1},
                      {"similarity", top[rank].similarity}});
    }
  }
  Json spec = BaseSpec(std::move(rows));
  const Json x = {{"field", "x"}, {"type", "quantitative"}, {"title", "CIE x"}, {"scale", {{"zero", false}}}};
  const Json y = {{"field", "y"}, {"type", "quantitative"}, {"title", "CIE y"}, {"scale", {{"zero", false}}}};
  spec["width"] = 360;
  spec["height"] = 300;
  spec["resolve"] = {{"scale", {{"size", "independent"}}}, {"legend", {{"size", "independent"}}}};
  spec["layer"] = {{{"name", "humans"},
                    {"transform", {{{"filter", "datum.kind == 'human'"}}}},
                    {"mark", {{"type", "circle"}, {"stroke", "#555"}, {"strokeWidth", 0.5}, {"opacity", 0.9}}},
                    {"encoding",
                     {{"x", x},
                      {"y", y},
                      {"fill", {{"field", "color"}, {"type", "nominal"}, {"scale", nullptr}}},
                      {"size", {{"field", "humans"}, {"type", "quantitative"}, {"title", "human answers"}}},
                      {"tooltip",
                       {{{"field", "cell"}},
                        {{"field", "humans"}, {"title", "human answers"}},
                        {{"field", "x"}, {"format", ".4f"}},
                        {{"field", "y"}, {"format", ".4f"}}}}}}},
                   {{"name", "ellipse"},
                    {"transform", {{{"filter", "datum.kind == 'ellipse'"}}}},
                    {"mark", {{"type", "line"}, {"strokeDash", {6, 4}}, {"color", "#888"}}},
                    {"encoding", {{"x", x}, {"y", y}, {"order", {{"field", "order"}, {"type", "quantitative"}}}}}},
                   {{"name", "models"},
                    {"transform", {{{"filter", "datum.kind == 'model'"}}}},
                    {"mark", {{"type", "point"}, {"shape", "diamond"}, {"filled", true}}},
                    {"encoding",
                     {{"x", x},
                      {"y", y},
                      {"color", ModelColor(models.size())},
                      {"size", {{"field", "similarity"}, {"type", "quantitative"}, {"title", "similarity"}}},
                      {"tooltip",
                       {{{"field", "model"}},
                        {{"field", "cell"}},
                        {{"field", "rank"}},
                        {{"field", "similarity"}, {"format", ".4f"}}}}}}}};
  return spec;
}

}  // namespace

Status AddBoardFigures(const ResultsFolder& folder, const ReportOptions& options, SectionBuilder& section) {
  const Json& summary = folder.summary;
  const Json& inputs = summary.value("inputs", Json::object());
  const Json& settings = summary.value("settings", Json::object());
  const auto left_out = [&](const std::string& why) {
    section.Html("<p class=\"note\">Board figures left out: " + EscapeHtml(why) + ".</p>\n");
    return Status::Ok();
  };
  if (options.board_words.empty() && options.board_word_count == 0) return Status::Ok();
  VISALIGN_ASSIGN_OR_RETURN(hues::Chromaticity chromaticity,
                            hues::ParseChromaticity(settings.value("chromaticity", std::string("display"))));
  VISALIGN_ASSIGN_OR_RETURN(hues::Board board, hues::Board::Default(chromaticity));
  VISALIGN_ASSIGN_OR_RETURN(hues::Vocabulary vocab, hues::Vocabulary::Default());
  std::string why;
  const std::optional<std::filesystem::path> humans_file =
      CheckedInput(folder, inputs.value("humans", Json::object()), why);
  if (!humans_file) return left_out("the human answers " + why);
  hues::HumanLoadOptions load;
  if (inputs.contains("humans_exclusions")) {
    const std::optional<std::filesystem::path> ids = CheckedInput(folder, inputs["humans_exclusions"], why);
    if (!ids) return left_out("the colour-blind players' list " + why);
    load.colorblind_ids = *ids;
  } else {
    load.include_colorblind = true;
  }
  Result<hues::HumanData> humans = hues::LoadHumans(*humans_file, vocab, load);
  if (!humans.ok()) return left_out(humans.status().ToString());
  Result<std::vector<hues::ModelPredictions>> loaded = hues::LoadEvaluatedModels(folder.dir, vocab, board);
  if (!loaded.ok()) return left_out(loaded.status().ToString());
  const std::vector<hues::ModelPredictions>& models = *loaded;
  const double d2 = settings.value("threshold", Json::object()).value("d2", 5.991464547107979);
  VISALIGN_ASSIGN_OR_RETURN(std::vector<int> words, BoardWords(folder, options, vocab));
  hues::HumanFilter every_answer;
  every_answer.colorblind = hues::ColorblindFilter::kInclude;
  for (int word : words) {
    // The answers as loaded: the colour-blind players are already left out when the evaluation left them out.
    const hues::WordView view = hues::ViewWord(*humans, board, word, every_answer, d2);
    const std::string& name = vocab.words()[static_cast<size_t>(word)].en;
    std::string slug;
    for (char c : name) slug += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '-';
    section.AddFigure(
        "board-" + slug, fmt::format("Board: \"{}\".", name),
        fmt::format("The {} human answers as dots sized by count on the 480-cell board; squares: each model's "
                    "top-5 cells (the model filter applies).",
                    view.n),
        BoardSpec(board, view.counts, models, word));
    section.AddFigure(
        "xy-" + slug, fmt::format("CIE xy: \"{}\".", name),
        fmt::format("Human answers (sized by count), the human ellipse at Mahalanobis d² = {:.4g} (the "
                    "evaluation's outlier boundary) and each model's top-5 sized by similarity ({} chromaticity).",
                    d2, hues::ChromaticityName(chromaticity)),
        ScatterSpec(board, view, models));
  }
  return Status::Ok();
}

}  // namespace visalign::report::internal
