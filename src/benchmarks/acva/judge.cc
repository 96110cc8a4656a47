// The judge protocol: prompts, request bodies, cache keys and strict reply parsing.
#include <algorithm>
#include <cmath>

#include "visalign/benchmarks/acva/pipeline.h"
#include "visalign/core/base64.h"
#include "visalign/core/format.h"
#include "visalign/core/io.h"
#include "visalign/core/untrusted.h"

namespace visalign::acva {
namespace {

constexpr double kRatingTolerance = 1e-9;
constexpr size_t kQuestionHashChars = 16;

struct Prompts {
  const char* system;
  const char* concept_line;   // followed by the word (and gloss in English)
  const char* question_line;  // rubric: followed by the question
  const char* afc_line;       // 2AFC: the question, followed by "1. <word>" and "2. <word>" lines
};

// The rubric scale's wording; the rubric prompts below are built from it and kRatingLevels, so raters
// (JudgeRatingScale) see exactly what the judge is told.
constexpr const char* kScaleLowEn = "clearly not";
constexpr const char* kScaleHighEn = "clearly yes";
constexpr const char* kScaleLowZh = "明显不是";
constexpr const char* kScaleHighZh = "明显是";

// "0, 0.25, 0.5, 0.75, 1" (en) or "0、0.25、0.5、0.75、1" (zh).
std::string LevelsText(Language language) {
  std::string text;
  for (double level : kRatingLevels)
    text += (text.empty() ? "" : language == Language::kZh ? "、" : ", ") + FormatNumber(level);
  return text;
}

std::string RubricSystem(Language language) {
  if (language == Language::kZh)
    return "你是一位严谨的图像评审。这幅图是文生图模型根据一个抽象概念生成的。请只根据画面中可见的内容回答这一个问题。"
           "只回复一个 JSON 对象：{\"rating\": r, \"evidence\": \"...\"}，其中 r 取 " +
           LevelsText(language) + " 之一（0 = " + kScaleLowZh + "，1 = " + kScaleHighZh +
           "），evidence 用不超过 25 个词说明画面中的依据。";
  return "You are a careful visual judge. The image was made by a text-to-image model asked to depict an abstract "
         "concept. Answer the one question about what is visible in the image. Reply with a JSON object only: "
         "{\"rating\": r, \"evidence\": \"...\"}, where r is one of " +
         LevelsText(language) + " (0 = " + kScaleLowEn + ", 1 = " + kScaleHighEn +
         ") and evidence names the visible evidence in at most 25 words.";
}
constexpr const char* kMetaphorSystemEn =
    "You are a careful visual judge. The image was made by a text-to-image model asked to depict an abstract "
    "concept. Describe the main visual carrier and metaphor the image uses for the concept, in one English "
    "sentence. Reply with a JSON object only: {\"description\": \"...\"}.";
constexpr const char* kMetaphorSystemZh =
    "你是一位严谨的图像评审。这幅图是文生图模型根据一个抽象概念生成的。请用一句英文描述画面表达该概念所用的"
    "主要视觉载体和隐喻（英文便于后续文本嵌入）。只回复一个 JSON 对象：{\"description\": \"...\"}。";
constexpr const char* kAfcSystemEn =
    "You are a careful visual judge. You see an image and two words. Decide which of the two words the image "
    "expresses better. Reply with a JSON object only: {\"choice\": \"<one of the two words, exactly as given>\"}.";
constexpr const char* kAfcSystemZh =
    "你是一位严谨的图像评审。你会看到一幅图和两个词。请判断这幅图更好地表达了哪个词。"
    "只回复一个 JSON 对象：{\"choice\": \"<两个词之一，与给出的完全一致>\"}。";

std::string SystemPrompt(JudgeTask task, Language language) {
  const bool zh = language == Language::kZh;
  switch (task) {
    case JudgeTask::kRubric:
      return RubricSystem(language);
    case JudgeTask::kMetaphor:
      return zh ? kMetaphorSystemZh : kMetaphorSystemEn;
    case JudgeTask::kAfc:
      return zh ? kAfcSystemZh : kAfcSystemEn;
  }
  return "";
}

std::string ConceptLine(const Concept& c, Language language) {
  return language == Language::kZh ? "概念：" + c.word : "Concept: " + c.word + " (" + c.gloss_en + ")";
}

std::string QuestionLine(const RubricQuestion& q, Language language) {
  return language == Language::kZh ? "问题：" + q.text_zh : "Question: " + q.text_en;
}

std::string AfcText(const std::string& first, const std::string& second, Language language) {
  const std::string lead = language == Language::kZh ? "这幅图更好地表达了下面哪个词？"
                                                     : "Which of these two words does the image express better?";
  return lead + "\n1. " + first + "\n2. " + second;
}

std::string TextHash(const std::string& text) { return Sha256Hex(text).substr(0, kQuestionHashChars); }

JudgeQuestion Make(JudgeTask task, Language language, std::string key_prefix, std::string text) {
  JudgeQuestion q;
  q.task = task;
  q.system = SystemPrompt(task, language);
  q.text = std::move(text);
  q.key = key_prefix + "/" + TextHash(q.text);
  return q;
}

// The end of the JSON value starting at s[open] == '{' (brace matching outside strings), or npos.
size_t MatchingBrace(std::string_view s, size_t open) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = open; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '{')
      ++depth;
    else if (c == '}' && --depth == 0)
      return i;
  }
  return std::string_view::npos;
}

std::optional<Json> ParseObject(std::string_view text) {
  auto j = ParseJson(text);
  if (!j.ok() || !j->is_object()) return std::nullopt;
  return std::move(*j);
}

std::string Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r\n\"'");
  if (b == std::string_view::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r\n\"'.");
  return std::string(s.substr(b, e - b + 1));
}

}  // namespace

std::string_view LanguageName(Language language) { return language == Language::kZh ? "zh" : "en"; }

std::optional<Language> LanguageFromName(std::string_view name) {
  if (name == "zh") return Language::kZh;
  if (name == "en") return Language::kEn;
  return std::nullopt;
}

RatingScale JudgeRatingScale(Language language) {
  const bool zh = language == Language::kZh;
  return {kRatingLevels, zh ? kScaleLowZh : kScaleLowEn, zh ? kScaleHighZh : kScaleHighEn};
}

bool OnRatingScale(double rating) {
  return std::any_of(kRatingLevels.begin(), kRatingLevels.end(),
                     [&](double level) { return std::fabs(rating - level) < kRatingTolerance; });
}

JudgeQuestion RubricQuestionFor(const Concept& cpt, const RubricQuestion& question, Language language) {
  return Make(JudgeTask::kRubric, language, "rubric/" + cpt.id + "/" + question.id,
              ConceptLine(cpt, language) + "\n" + QuestionLine(question, language));
}

JudgeQuestion MetaphorQuestionFor(const Concept& cpt, Language language) {
  return Make(JudgeTask::kMetaphor, language, "metaphor/" + cpt.id, ConceptLine(cpt, language));
}

JudgeQuestion AfcQuestionFor(const Concept& first, const Concept& second, Language language) {
  JudgeQuestion q =
      Make(JudgeTask::kAfc, language, "afc/" + first.id + "/" + second.id, AfcText(first.word, second.word, language));
  q.options = {first.word, second.word};
  return q;
}

std::string PromptTemplateHash(JudgeTask task, const JudgeSettings& settings) {
  // The templates with placeholders in place of the concept, question and words.
  const Language lang = settings.language;
  const std::string templates = SystemPrompt(task, lang) + "\n" +
                                (lang == Language::kZh ? "概念：{word}\n问题：{question}\n"
                                                       : "Concept: {word} ({gloss})\nQuestion: {question}\n") +
                                AfcText("{first}", "{second}", lang);
  const Json fingerprint = {{"templates", templates},
                            {"response_format", "json_object"},
                            {"temperature", settings.temperature},
                            {"image", "data-url"}};
  return Sha256Hex(CanonicalJsonText(fingerprint));  // key-sorted: the hash of every earlier release
}

Json JudgeSettingsJson(const JudgeSettings& settings) {
  return {{"model", settings.model},
          {"language", LanguageName(settings.language)},
          {"temperature", settings.temperature},
          {"prompt_hashes",
           {{"rubric", PromptTemplateHash(JudgeTask::kRubric, settings)},
            {"metaphor", PromptTemplateHash(JudgeTask::kMetaphor, settings)},
            {"afc", PromptTemplateHash(JudgeTask::kAfc, settings)}}}};
}

std::string JudgeCacheKey(const std::string& image_sha256, const JudgeQuestion& question,
                          const JudgeSettings& settings) {
  return image_sha256 + "|" + question.key + "|" + settings.model + "|" + PromptTemplateHash(question.task, settings);
}

Json JudgeRequestBody(const JudgeQuestion& question, const JudgeSettings& settings, std::string_view image_bytes,
                      std::string_view image_extension) {
  const std::string mime = image_extension == "jpg" || image_extension == "jpeg" ? "image/jpeg"
                           : image_extension == "webp"                           ? "image/webp"
                                                                                 : "image/png";
  const std::string data_url = "data:" + mime + ";base64," + EncodeBase64(image_bytes);
  return {{"model", settings.model},
          {"temperature", settings.temperature},
          {"response_format", {{"type", "json_object"}}},
          {"messages",
           Json::array({{{"role", "system"}, {"content", question.system}},
                        {{"role", "user"},
                         {"content", Json::array({{{"type", "text"}, {"text", question.text}},
                                                  {{"type", "image_url"}, {"image_url", {{"url", data_url}}}}})}}})}};
}

std::optional<Json> ExtractJsonObject(std::string_view content) {
  if (auto whole = ParseObject(content)) return whole;
  constexpr std::string_view kFence = "```";
  if (size_t open = content.find(kFence); open != std::string_view::npos) {
    size_t body = content.find('\n', open);
    size_t close = body == std::string_view::npos ? body : content.find(kFence, body);
    if (close != std::string_view::npos)
      if (auto fenced = ParseObject(content.substr(body + 1, close - body - 1))) return fenced;
  }
  for (size_t open = content.find('{'); open != std::string_view::npos; open = content.find('{', open + 1)) {
    const size_t close = MatchingBrace(content, open);
    if (close == std::string_view::npos) break;
    if (auto embedded = ParseObject(content.substr(open, close - open + 1))) return embedded;
  }
  return std::nullopt;
}

JudgeAnswer ParseJudgeReply(const JudgeQuestion& question, std::string_view content) {
  const std::optional<Json> j = ExtractJsonObject(content);
  if (!j) {
    JudgeAnswer a;
    a.error = "no JSON object in reply: " + QuoteText(content);
    return a;
  }
  return JudgeAnswerFromJson(question, *j);
}

JudgeAnswer JudgeAnswerFromJson(const JudgeQuestion& question, const Json& object) {
  JudgeAnswer a;
  if (!object.is_object()) {
    a.error = "not a JSON object: " + QuoteJson(object);
    return a;
  }
  switch (question.task) {
    case JudgeTask::kRubric: {
      auto r = object.find("rating");
      if (r == object.end() || !r->is_number()) {
        a.error = "reply without a numeric \"rating\": " + QuoteJson(object);
        return a;
      }
      const double rating = r->get<double>();
      if (!OnRatingScale(rating)) {
        a.error = "rating " + r->dump() + " is not one of " + LevelsText(Language::kEn);
        return a;
      }
      auto e = object.find("evidence");
      if (e == object.end() || !e->is_string()) {
        a.error = "reply without a string \"evidence\": " + QuoteJson(object);
        return a;
      }
      a.rating = rating;
      a.evidence = e->get<std::string>();
      break;
    }
    case JudgeTask::kMetaphor: {
      auto d = object.find("description");
      if (d == object.end() || !d->is_string() || Trim(d->get<std::string>()).empty()) {
        a.error = "reply without a non-empty \"description\": " + QuoteJson(object);
        return a;
      }
      a.description = d->get<std::string>();
      break;
    }
    case JudgeTask::kAfc: {
      auto c = object.find("choice");
      if (c == object.end() || !c->is_string()) {
        a.error = "reply without a string \"choice\": " + QuoteJson(object);
        return a;
      }
      const std::string choice = Trim(c->get<std::string>());
      for (int i = 0; i < 2; ++i)
        if (choice == question.options[static_cast<size_t>(i)]) a.choice = i;
      if (a.choice < 0) {
        a.error = "choice " + QuoteText(c->get<std::string>()) + " is neither \"" + question.options[0] + "\" nor \"" +
                  question.options[1] + "\"";
        return a;
      }
      break;
    }
  }
  a.valid = true;
  return a;
}

}  // namespace visalign::acva
