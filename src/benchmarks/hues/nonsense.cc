// Nonsense baseline: does a model answer meaningless words with a default color?
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "benchmarks/hues/text_util.h"
#include "visalign/benchmarks/hues/hues.h"

namespace visalign::hues {
namespace {

// A group collapses when at least 3/4 of its top-1 cells share a macro class (3 of 4); a group of fewer than
// kMinGroupWords words cannot collapse (the published 11-item list has one-word groups). A neutral or specific
// collapse needs at least 3/4 of the groups that can collapse to collapse onto one class (3 of 4; 2 of 2).
constexpr int kShareNumerator = 3, kShareDenominator = 4;
constexpr int kMinGroupWords = 2;
constexpr int kMinPriorCount = 2;  // a nonsense "prior" cell must be the top-1 of at least 2 nonsense words

bool AtLeastThreeQuarters(int count, int of) { return kShareDenominator * count >= kShareNumerator * of; }

}  // namespace

std::string_view CollapseClassName(CollapseClass c) {
  switch (c) {
    case CollapseClass::kNeutral:
      return "neutral_collapse";
    case CollapseClass::kSpecificColor:
      return "specific_color_collapse";
    case CollapseClass::kSelective:
      return "selective_collapse";
    case CollapseClass::kHighEntropy:
      return "high_entropy";
  }
  return "";
}

Result<NonsenseResult> ClassifyNonsense(const ModelPredictions& model, const std::vector<NonsenseWord>& vocabulary,
                                        const MacroMap& macro) {
  NonsenseResult r;
  r.model = model.name;
  std::vector<std::string> missing;
  std::vector<int> all_top1;
  for (const NonsenseWord& w : vocabulary) {
    auto it = model.nonsense.find(internal::AsciiUpper(w.word));
    if (it == model.nonsense.end() || it->second.empty()) {
      missing.push_back(w.word);
      continue;
    }
    auto group = std::find_if(r.groups.begin(), r.groups.end(), [&](const auto& g) { return g.group == w.group; });
    if (group == r.groups.end()) {
      NonsenseGroupResult fresh;
      fresh.group = w.group;
      group = r.groups.insert(r.groups.end(), std::move(fresh));
    }
    group->top1.push_back(it->second.front().cell);
    all_top1.push_back(it->second.front().cell);
  }
  if (!missing.empty()) {
    std::string list;
    for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
    return Status::InvalidArgument(fmt::format("model {} has no predictions for nonsense word(s) {}", model.name, list),
                                   model.source, "predictions for every word of the nonsense vocabulary");
  }

  std::array<int, kMacroClasses> onto_counts{};
  int collapsed = 0, can_collapse = 0;
  for (NonsenseGroupResult& g : r.groups) {
    const int n = static_cast<int>(g.top1.size());
    if (n < kMinGroupWords) continue;
    ++can_collapse;
    std::array<int, kMacroClasses> counts{};
    for (int cell : g.top1) ++counts[static_cast<size_t>(macro.MacroClass(cell))];
    const auto top = std::max_element(counts.begin(), counts.end());
    if (AtLeastThreeQuarters(*top, n)) {
      g.collapsed = true;
      g.onto = static_cast<Macro>(top - counts.begin());
      ++onto_counts[static_cast<size_t>(g.onto)];
      ++collapsed;
    }
  }
  const auto top_onto = std::max_element(onto_counts.begin(), onto_counts.end());
  if (*top_onto > 0 && AtLeastThreeQuarters(*top_onto, can_collapse)) {
    r.collapse_onto = static_cast<Macro>(top_onto - onto_counts.begin());
    r.collapse = *r.collapse_onto == Macro::kNeutral ? CollapseClass::kNeutral : CollapseClass::kSpecificColor;
  } else {
    r.collapse = collapsed > 0 ? CollapseClass::kSelective : CollapseClass::kHighEntropy;
  }

  std::array<double, kMacroClasses> class_counts{};
  std::map<int, int> cell_counts;
  for (int cell : all_top1) {
    ++class_counts[static_cast<size_t>(macro.MacroClass(cell))];
    ++cell_counts[cell];
  }
  r.entropy_bits = stats::EntropyBits(class_counts);
  for (int cell : all_top1) {  // first-seen order breaks ties
    if (cell_counts[cell] > r.prior_count) {
      r.prior_count = cell_counts[cell];
      r.prior_cell = cell;
    }
  }
  if (r.prior_count < kMinPriorCount) r.prior_cell.reset();
  if (r.prior_cell)
    for (size_t w = 0; w < model.words.size(); ++w)
      if (!model.words[w].empty() && model.words[w].front().cell == *r.prior_cell)
        r.false_positive_words.push_back(static_cast<int>(w));
  return r;
}

}  // namespace visalign::hues
