// Word-only prompts for ACVA generation runs, and the runs file of `acva run`.
#include "benchmarks/acva/jsonl.h"
#include "visalign/benchmarks/acva/pipeline.h"
#include "visalign/core/io.h"

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
                                     "prompt template", "placeholders {word}, {gloss}, {id}");
    out += name == "word" ? word : name == "gloss" ? cpt.gloss_en : cpt.id;
    i = close;
  }
  return out;
}

Result<std::vector<backends::WorkItem>> GenerationItems(const ConceptSet& set, const GenerationConfig& config) {
  if (config.samples < 1)
    return Status::InvalidArgument("samples " + std::to_string(config.samples), "samples", "at least 1");
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
  const Json j = {{"concept_set", set.fingerprint},
                  {"language", LanguageName(config.language)},
                  {"prompt_template", config.prompt_template}};
  return Sha256Hex(CanonicalJsonText(j));  // key-sorted: the fingerprint of every earlier release
}

Result<std::vector<RunSpec>> ParseRunSpecs(std::string_view text, const std::string& source) {
  std::vector<RunSpec> specs;
  VISALIGN_RETURN_IF_ERROR(jsonl::ForEachLine(text, source, [&](const Json& j, const std::string& where) -> Status {
    if (!j.is_object()) return Status::InvalidArgument("line is not a JSON object", where, "one run object per line");
    VISALIGN_RETURN_IF_ERROR(jsonl::CheckKnownFields(j, {"run", "model", "endpoint", "api_key_env"}, where));
    RunSpec spec;
    VISALIGN_ASSIGN_OR_RETURN(spec.run, jsonl::RequiredString(j, "run", where));
    for (auto [key, field] : {std::pair{"model", &spec.model}, std::pair{"endpoint", &spec.endpoint},
                              std::pair{"api_key_env", &spec.api_key_env}})
      if (j.contains(key)) {
        VISALIGN_ASSIGN_OR_RETURN(*field, jsonl::RequiredString(j, key, where));
      }
    specs.push_back(std::move(spec));
    return Status::Ok();
  }));
  return specs;
}

}  // namespace visalign::acva
