// ACVA inputs from outside. The first byte picks the parser (modulo 4), the rest is the text:
//   0 concepts JSONL   1 pairs JSONL (over the starter concepts)   2 runs file   3 a judge's reply
// to a rubric, a metaphor and a two-alternative question about a starter concept. A reply judged
// valid has its fields in range; an invalid one says why in one line.
#include <string>

#include "fuzz/fuzz_support.h"
#include "visalign/benchmarks/acva/acva.h"
#include "visalign/benchmarks/acva/pipeline.h"

namespace acva = visalign::acva;
using visalign::fuzz::CheckErrorLine;

namespace {

const acva::ConceptSet& StarterSet() {
  static const acva::ConceptSet set = [] {
    auto concepts = acva::StarterConceptsFile();
    auto pairs = acva::StarterPairsFile();
    VISALIGN_FUZZ_CHECK(concepts.ok() && pairs.ok(), "the starter concept set ($VISALIGN_DATA)");
    auto loaded = acva::LoadConceptSet(*concepts, *pairs);
    VISALIGN_FUZZ_CHECK(loaded.ok() && loaded->concepts.size() >= 2, loaded.status().ToString());
    return std::move(loaded).value();
  }();
  return set;
}

void CheckReply(const acva::JudgeQuestion& question, std::string_view reply) {
  const acva::JudgeAnswer answer = acva::ParseJudgeReply(question, reply);
  if (!answer.valid) {
    VISALIGN_FUZZ_CHECK(!answer.error.empty());
    CheckErrorLine(answer.error);
    return;
  }
  if (question.task == acva::JudgeTask::kAfc) VISALIGN_FUZZ_CHECK(answer.choice == 0 || answer.choice == 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [selector, text] = visalign::fuzz::Select(data, size);
  const acva::ConceptSet& set = StarterSet();
  switch (selector % 4) {
    case 0:
      CheckErrorLine(acva::ParseConcepts(text, "concepts.jsonl").status());
      break;
    case 1:
      CheckErrorLine(acva::ParsePairs(text, "pairs.jsonl", set.concepts).status());
      break;
    case 2:
      CheckErrorLine(acva::ParseRunSpecs(text, "runs.jsonl").status());
      break;
    default: {
      const acva::Concept& first = set.concepts[0];
      const acva::Concept& second = set.concepts[1];
      CheckReply(acva::RubricQuestionFor(first, first.rubric.front(), acva::Language::kEn), text);
      CheckReply(acva::MetaphorQuestionFor(first, acva::Language::kEn), text);
      CheckReply(acva::AfcQuestionFor(first, second, acva::Language::kEn), text);
    }
  }
  return 0;
}
