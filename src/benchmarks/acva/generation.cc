// Word-only prompts for ACVA generation runs.
#include "visalign/acva_pipeline.h"
#include "visalign/io.h"

namespace visalign::acva {

Result<std::string> RenderPrompt(const Concept& cpt, const GenerationConfig& config) {
  const std::string& word = config.language == Language::kZh ? cpt.word : cpt.gloss_en;
  const std::string& t = config.prompt_template;
  std::string out;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] != '{') {
      out += t[i];
      continue;
    }
    const size_t close = t.find('}', i);
    const std::string name = close == std::string::npos ? t.substr(i) : t.substr(i + 1, close - i - 1);
    if (close == std::string::npos || (name != "word" && name != "gloss" && name != "id"))
      return Status::InvalidArgument("unknown placeholder \"{" + name + "\" in prompt template \"" + t + "\"",
                                     "--prompt-template", "placeholders {word}, {gloss}, {id}");
    out += name == "word" ? word : name == "gloss" ? cpt.gloss_en : cpt.id;
    i = close;
  }
  return out;
}

Result<std::vector<backends::WorkItem>> GenerationItems(const ConceptSet& set, const GenerationConfig& config) {
  if (config.samples < 1)
    return Status::InvalidArgument("samples " + std::to_string(config.samples), "--samples", "at least 1");
  std::vector<backends::WorkItem> items;
  for (const Concept& c : set.concepts) {
    VISALIGN_ASSIGN_OR_RETURN(std::string prompt, RenderPrompt(c, config));
    for (int k = 0; k < config.samples; ++k) {
      std::optional<int64_t> seed;
      if (config.seed) seed = *config.seed + k;
      items.push_back({c.id, prompt, k, seed});
    }
  }
  return items;
}

std::string GenerationFingerprint(const ConceptSet& set, const GenerationConfig& config) {
  const nlohmann::json j = {{"concept_set", set.fingerprint},
                            {"language", LanguageName(config.language)},
                            {"prompt_template", config.prompt_template}};
  return Sha256Hex(j.dump());
}

}  // namespace visalign::acva
