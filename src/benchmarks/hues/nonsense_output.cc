// How `hues nonsense` shows a NonsenseResult: its JSON object and its text lines.
#include <fmt/format.h>

#include "visalign/benchmarks/hues/hues.h"

namespace visalign::hues {

nlohmann::json NonsenseResultJson(const NonsenseResult& r, const Vocabulary& vocabulary) {
  nlohmann::json groups = nlohmann::json::array();
  for (const NonsenseGroupResult& gr : r.groups) {
    std::vector<std::string> cells;
    for (int c : gr.top1) cells.push_back(CellName(c));
    groups.push_back({{"group", gr.group},
                      {"top1", cells},
                      {"collapsed", gr.collapsed},
                      {"onto", gr.collapsed ? nlohmann::json(MacroName(gr.onto)) : nlohmann::json(nullptr)}});
  }
  std::vector<std::string> false_positives;
  for (int w : r.false_positive_words) false_positives.push_back(vocabulary.words()[w].en);
  return {{"model", r.model},
          {"class", CollapseClassName(r.collapse)},
          {"onto", r.collapse_onto ? nlohmann::json(MacroName(*r.collapse_onto)) : nlohmann::json(nullptr)},
          {"entropy_bits", r.entropy_bits},
          {"groups", groups},
          {"prior_cell", r.prior_cell ? nlohmann::json(CellName(*r.prior_cell)) : nlohmann::json(nullptr)},
          {"prior_count", r.prior_cell ? r.prior_count : 0},
          {"false_positive_words", false_positives}};
}

std::string NonsenseResultText(const NonsenseResult& r, const Vocabulary& vocabulary, size_t nonsense_words) {
  std::string out = fmt::format("{}: {}{}, entropy {:.2f} bits\n", r.model, CollapseClassName(r.collapse),
                                r.collapse_onto ? fmt::format(" onto {}", MacroName(*r.collapse_onto)) : "",
                                r.entropy_bits);
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

}  // namespace visalign::hues
