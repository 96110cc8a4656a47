#include <gtest/gtest.h>

#include "visalign/benchmarks/acva/pipeline.h"

namespace visalign::acva {
namespace {

Concept Loyalty() {
  Concept c;
  c.id = "loyalty";
  c.word = "忠诚";
  c.gloss_en = "loyalty";
  c.rubric = {
      {"relationship", "是否存在持续的关系？", "Is there an ongoing relationship?", 2, Framework::kComponential}};
  return c;
}

Concept Oath() {
  Concept c = Loyalty();
  c.id = "oath";
  c.word = "誓言";
  c.gloss_en = "oath";
  return c;
}

TEST(ExtractJsonObject, AcceptsBareFencedAndEmbeddedObjects) {
  EXPECT_EQ((*ExtractJsonObject(R"({"rating": 1})"))["rating"], 1);
  EXPECT_EQ((*ExtractJsonObject("Sure!\n```json\n{\"rating\": 0.5}\n```\nDone."))["rating"], 0.5);
  EXPECT_EQ((*ExtractJsonObject(R"(My answer is {"evidence": "a {brace} in text", "rating": 0.25}.)"))["rating"], 0.25);
  EXPECT_FALSE(ExtractJsonObject("I'm sorry, I can't help with that.").has_value());
  EXPECT_FALSE(ExtractJsonObject("[1, 2]").has_value());
  EXPECT_FALSE(ExtractJsonObject("{rating: 1}").has_value());
}

TEST(ParseJudgeReply, RubricNeedsARatingOnTheFiveLevelScaleAndEvidence) {
  const JudgeQuestion q = RubricQuestionFor(Loyalty(), Loyalty().rubric[0], Language::kEn);
  const JudgeAnswer ok = ParseJudgeReply(q, R"({"rating": 0.75, "evidence": "two figures hold hands"})");
  ASSERT_TRUE(ok.valid) << ok.error;
  EXPECT_EQ(ok.rating, 0.75);
  EXPECT_EQ(ok.evidence, "two figures hold hands");
  const JudgeAnswer off_scale = ParseJudgeReply(q, R"({"rating": 0.6, "evidence": "x"})");
  EXPECT_FALSE(off_scale.valid);
  EXPECT_NE(off_scale.error.find("not one of 0, 0.25, 0.5, 0.75, 1"), std::string::npos);
  EXPECT_FALSE(ParseJudgeReply(q, R"({"rating": "high", "evidence": "x"})").valid);
  EXPECT_FALSE(ParseJudgeReply(q, R"({"rating": 1})").valid);
  const JudgeAnswer refusal = ParseJudgeReply(q, "I cannot judge this image.");
  EXPECT_FALSE(refusal.valid);
  EXPECT_NE(refusal.error.find("I cannot judge this image."), std::string::npos);
}

TEST(ParseJudgeReply, AfcChoiceMustBeOneOfTheTwoWords) {
  const JudgeQuestion q = AfcQuestionFor(Oath(), Loyalty(), Language::kEn);
  EXPECT_EQ(q.options[0], "誓言");
  EXPECT_NE(q.text.find("\n1. 誓言\n2. 忠诚"), std::string::npos);
  EXPECT_EQ(ParseJudgeReply(q, R"({"choice": "忠诚"})").choice, 1);
  EXPECT_EQ(ParseJudgeReply(q, R"({"choice": " 誓言 "})").choice, 0);
  EXPECT_FALSE(ParseJudgeReply(q, R"({"choice": "both"})").valid);
}

TEST(ParseJudgeReply, MetaphorNeedsANonEmptyDescription) {
  const JudgeQuestion q = MetaphorQuestionFor(Loyalty(), Language::kZh);
  EXPECT_EQ(ParseJudgeReply(q, R"({"description": "A dog waits at a door."})").description, "A dog waits at a door.");
  EXPECT_FALSE(ParseJudgeReply(q, R"({"description": "  "})").valid);
}

TEST(JudgeRequestBody, FollowsTheProtocol) {
  const JudgeQuestion q = RubricQuestionFor(Loyalty(), Loyalty().rubric[0], Language::kEn);
  const Json body = JudgeRequestBody(q, {"qwen-vl", Language::kEn, 0.0}, "abc", "png");
  EXPECT_EQ(body["model"], "qwen-vl");
  EXPECT_EQ(body["temperature"], 0.0);
  EXPECT_EQ(body["response_format"]["type"], "json_object");
  EXPECT_EQ(body["messages"][0]["role"], "system");
  const auto& user = body["messages"][1]["content"];
  EXPECT_NE(user[0]["text"].get<std::string>().find("忠诚"), std::string::npos);
  EXPECT_NE(user[0]["text"].get<std::string>().find("Is there an ongoing relationship?"), std::string::npos);
  EXPECT_EQ(user[1]["image_url"]["url"], "data:image/png;base64,YWJj");
}

TEST(JudgeCacheKey, ChangesWithImageQuestionModelAndTemplate) {
  const Concept c = Loyalty();
  const JudgeQuestion q = RubricQuestionFor(c, c.rubric[0], Language::kEn);
  const JudgeSettings s{"m", Language::kEn, 0.0};
  const std::string key = JudgeCacheKey("sha", q, s);
  EXPECT_EQ(key, JudgeCacheKey("sha", RubricQuestionFor(c, c.rubric[0], Language::kEn), s));
  EXPECT_NE(key, JudgeCacheKey("sha2", q, s));
  EXPECT_NE(key, JudgeCacheKey("sha", q, {"m2", Language::kEn, 0.0}));
  EXPECT_NE(key, JudgeCacheKey("sha", q, {"m", Language::kEn, 0.7}));
  Concept edited = c;
  edited.rubric[0].text_en = "Is there a lasting bond?";
  EXPECT_NE(key, JudgeCacheKey("sha", RubricQuestionFor(edited, edited.rubric[0], Language::kEn), s));
  EXPECT_NE(PromptTemplateHash(JudgeTask::kRubric, s),
            PromptTemplateHash(JudgeTask::kRubric, {"m", Language::kZh, 0.0}));
}

TEST(GenerationItems, WordOnlyPromptsWithSeedsPerSample) {
  ConceptSet set;
  set.concepts = {Loyalty()};
  GenerationConfig config;
  config.samples = 2;
  config.seed = 10;
  auto items = GenerationItems(set, config);
  ASSERT_TRUE(items.ok());
  ASSERT_EQ(items->size(), 2u);
  EXPECT_EQ((*items)[0].prompt, "忠诚");
  EXPECT_EQ((*items)[1].seed, 11);
  config.language = Language::kEn;
  config.prompt_template = "an image of {word}";
  EXPECT_EQ(RenderPrompt(Loyalty(), config).value(), "an image of loyalty");
  config.prompt_template = "{concept}";
  EXPECT_FALSE(RenderPrompt(Loyalty(), config).ok());
  config.seed.reset();
  config.prompt_template = "{word}";
  EXPECT_FALSE(GenerationItems(set, config)->front().seed.has_value());
}

TEST(JudgeRatingScale, IsWhatTheRubricPromptTellsTheJudge) {
  for (Language language : {Language::kEn, Language::kZh}) {
    const RatingScale scale = JudgeRatingScale(language);
    const std::string system = RubricQuestionFor(Loyalty(), Loyalty().rubric[0], language).system;
    EXPECT_EQ(scale.levels, kRatingLevels);
    EXPECT_NE(system.find("0 = " + scale.low), std::string::npos) << system;
    EXPECT_NE(system.find("1 = " + scale.high), std::string::npos) << system;
    for (double level : scale.levels) EXPECT_TRUE(OnRatingScale(level));
  }
  EXPECT_EQ(JudgeRatingScale(Language::kEn).low, "clearly not");
  EXPECT_FALSE(OnRatingScale(0.6));
}

}  // namespace
}  // namespace visalign::acva
