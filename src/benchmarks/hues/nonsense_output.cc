// How `hues nonsense` shows a NonsenseResult: its JSON object, its text lines and the results
// folder of `hues nonsense --out`.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "visalign/benchmarks/hues/hues.h"
#include "visalign/core/benchmarks.h"
#include "visalign/core/format.h"
#include "visalign/core/io.h"
#include "visalign/core/results.h"

namespace visalign::hues {

Json NonsenseResultJson(const NonsenseResult& r, const Vocabulary& vocabulary) {
  Json groups = Json::array();
  for (const NonsenseGroupResult& gr : r.groups) {
    std::vector<std::string> cells;
    for (int c : gr.top1) cells.push_back(CellName(c));
    groups.push_back({{"group", gr.group},
                      {"top1", cells},
                      {"collapsed", gr.collapsed},
                      {"onto", gr.collapsed ? Json(MacroName(gr.onto)) : Json(nullptr)}});
  }
  std::vector<std::string> false_positives;
  for (int w : r.false_positive_words) false_positives.push_back(vocabulary.words()[w].en);
  return {{"model", r.model},
          {"class", CollapseClassName(r.collapse)},
          {"onto", r.collapse_onto ? Json(MacroName(*r.collapse_onto)) : Json(nullptr)},
          {"entropy_bits", r.entropy_bits},
          {"groups", groups},
          {"prior_cell", r.prior_cell ? Json(CellName(*r.prior_cell)) : Json(nullptr)},
          {"prior_count", r.prior_cell ? r.prior_count : 0},
          {"false_positive_words", false_positives}};
}

std::string NonsenseResultText(const NonsenseResult& r, const Vocabulary& vocabulary, size_t nonsense_words) {
  std::string out =
      fmt::format("{}: {}{}, entropy {:.2f} bits\n", r.model, CollapseClassName(r.collapse),
                  r.collapse_onto ? fmt::format(" onto {}", MacroName(*r.collapse_onto)) : "", r.entropy_bits);
  for (const NonsenseGroupResult& gr : r.groups) {
    std::string cells;
    for (int c : gr.top1) cells += (cells.empty() ? "" : " ") + CellName(c);
    out += fmt::format("  {:<14} {:<16} {}\n", gr.group, cells,
                       gr.collapsed ? fmt::format("collapsed onto {}", MacroName(gr.onto)) : "");
  }
  if (r.prior_cell) {
    std::string words;
    for (int w : r.false_positive_words) words += (words.empty() ? "" : ", ") + vocabulary.words()[w].en;
    out += fmt::format("  nonsense prior: {} ({} of {} nonsense words); valid words answered with it: {}\n",
                       CellName(*r.prior_cell), r.prior_count, nonsense_words, words.empty() ? "none" : words);
  }
  return out;
}

namespace {

constexpr CollapseClass kCollapseClasses[] = {CollapseClass::kNeutral, CollapseClass::kSpecificColor,
                                              CollapseClass::kSelective, CollapseClass::kHighEntropy};

std::string Joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ";") + p;
  return out;
}

}  // namespace

Status WriteNonsense(const NonsenseRun& run, const MacroMap& macro, const Vocabulary& vocabulary,
                     const std::filesystem::path& dir) {
  VISALIGN_RETURN_IF_ERROR(EnsureDirectory(dir));
  std::string csv =
      "model,class,onto,entropy_bits,groups,collapsed_groups,prior_cell,prior_count,false_positive_words\n";
  std::string md = fmt::format(
      "# Hues and Cues nonsense baseline\n\nNonsense vocabulary: `{}` ({} words); macro map: `{}`.\n\n"
      "| model | class | onto | entropy (bits) | collapsed groups | prior cell |\n"
      "|---|---|---|---:|---|---|\n",
      run.vocabulary_source, run.words.size(), macro.source());
  std::string items;
  Json models = Json::array();
  Json predictions = Json::array();
  std::map<CollapseClass, int> counts;
  for (size_t i = 0; i < run.results.size(); ++i) {
    const NonsenseResult& r = run.results[i];
    ++counts[r.collapse];
    std::vector<std::string> collapsed, false_positives;
    for (const NonsenseGroupResult& g : r.groups)
      if (g.collapsed) collapsed.push_back(fmt::format("{}:{}", g.group, MacroName(g.onto)));
    for (int w : r.false_positive_words) false_positives.push_back(vocabulary.words()[static_cast<size_t>(w)].en);
    const std::string onto = r.collapse_onto ? std::string(MacroName(*r.collapse_onto)) : "";
    const std::string prior = r.prior_cell ? CellName(*r.prior_cell) : "";
    csv += fmt::format("{},{},{},{},{},{},{},{},{}\n", CsvField(r.model), CollapseClassName(r.collapse), onto,
                       FormatNumber(r.entropy_bits), r.groups.size(), CsvField(Joined(collapsed)), prior,
                       r.prior_cell ? r.prior_count : 0, CsvField(Joined(false_positives)));
    md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", r.model, CollapseClassName(r.collapse),
                      onto.empty() ? "–" : onto, FormatFixed(r.entropy_bits, 2),
                      collapsed.empty() ? "–" : Joined(collapsed), prior.empty() ? "–" : prior);
    // items.jsonl: the nonsense words in vocabulary order, each with its group's next top-1 cell
    // (ClassifyNonsense fills each group's top1 in that order).
    std::map<std::string, size_t> next;
    for (const NonsenseWord& w : run.words) {
      auto group = std::find_if(r.groups.begin(), r.groups.end(), [&](const auto& g) { return g.group == w.group; });
      if (group == r.groups.end()) continue;
      const int cell = group->top1[next[w.group]++];
      Json item = {{"model", r.model},
                   {"word", w.word},
                   {"group", w.group},
                   {"top1", CellName(cell)},
                   {"top1_macro", MacroName(macro.MacroClass(cell))}};
      items += item.dump() + "\n";
    }
    models.push_back(NonsenseResultJson(r, vocabulary));
    Json prediction = {{"model", r.model}};
    prediction.update(InputFingerprint(run.prediction_sources[i]));
    predictions.push_back(std::move(prediction));
  }
  Json summary = ResultsHeader(benchmarks::kHuesNonsense);
  summary["inputs"] = {{"predictions", std::move(predictions)},
                       {"vocabulary", InputFingerprint(run.vocabulary_source)},
                       {"macro_map", InputFingerprint(macro.source())}};
  summary["settings"] = {
      {"vocabulary", run.vocabulary_source},
      {"words", run.words.size()},
      {"macro_map", macro.source()},
      {"rule", "a group collapses when >= 3/4 of its top-1 cells share a macro class; docs/hues.md"}};
  summary["classes"] = Json::object();
  for (CollapseClass c : kCollapseClasses) summary["classes"][std::string(CollapseClassName(c))] = counts[c];
  summary["models"] = std::move(models);
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(dir / "summary.csv", csv));
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(dir / "items.jsonl", items));
  VISALIGN_RETURN_IF_ERROR(WriteFileAtomic(dir / "summary.md", md));
  return WriteFileAtomic(dir / "summary.json", summary.dump(2) + "\n");
}

}  // namespace visalign::hues
