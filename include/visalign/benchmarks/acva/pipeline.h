// ACVA-Bench pipeline: generation through the run store, the VLM judge protocol (prompts, reply
// parsing, cached answers), CLIP embeddings, and the reference servers used by tests and the demo.
//
// Judge protocol (docs/acva.md, "Judge protocol"): one POST {endpoint}/v1/chat/completions per question,
// a system message with the instructions and a user message with the text and the image as a base64
// data URL, response_format json_object. Replies: rubric {"rating": r, "evidence": "..."} with r in
// {0, 0.25, 0.5, 0.75, 1}; metaphor {"description": "..."}; 2AFC {"choice": "<one of the two words>"}.
// Code fences and prose around the JSON object are tolerated; anything else is unparseable: asked again
// up to max_reply_attempts times, then recorded invalid (never scored 0). Every answer, valid or not,
// is cached in the run store under (image SHA-256, question key, judge model, prompt template hash);
// transport failures (timeouts, refused connections, 5xx after retries) are not cached.
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "visalign/backends/backends.h"
#include "visalign/backends/runner.h"
#include "visalign/benchmarks/acva/acva.h"
#include "visalign/clip.h"
#include "visalign/core/json.h"
#include "visalign/core/status.h"
#include "visalign/store.h"

namespace visalign::acva {

enum class Language { kZh, kEn };
std::string_view LanguageName(Language language);  // "zh", "en"
std::optional<Language> LanguageFromName(std::string_view name);

// ---------------------------------------------------------------------------------------------
// Generation: K word-only prompts per concept, one run per model.

struct GenerationConfig {
  Language language = Language::kZh;       // zh: {word} is the Chinese word; en: the English gloss
  std::string prompt_template = "{word}";  // placeholders {word}, {gloss}, {id}
  int samples = 3;
  std::optional<int64_t> seed;  // unseeded unless set; sample k gets seed + k
};

// The prompt for a concept (InvalidArgument for an unknown placeholder in the template).
Result<std::string> RenderPrompt(const Concept& cpt, const GenerationConfig& config);
// Work items: item id = concept id, k = 0..samples-1.
Result<std::vector<backends::WorkItem>> GenerationItems(const ConceptSet& set, const GenerationConfig& config);
// Identifies what a run was generated from (concept set, language, template, samples).
std::string GenerationFingerprint(const ConceptSet& set, const GenerationConfig& config);

// One generation run of `acva run`: its name and the image model; an empty field means the command
// line's value (--model, --endpoint, --api-key-env).
struct RunSpec {
  std::string run;
  std::string model;
  std::string endpoint;
  std::string api_key_env;
};
// A runs file: one {"run": NAME[, "model": M][, "endpoint": URL][, "api_key_env": VAR]} per line
// (blank lines ignored). Errors name "<source>:<line>": lines that are not objects, unknown fields,
// a missing or empty "run", fields that are not non-empty strings.
Result<std::vector<RunSpec>> ParseRunSpecs(std::string_view jsonl, const std::string& source);

// ---------------------------------------------------------------------------------------------
// Judge protocol.

enum class JudgeTask { kRubric, kMetaphor, kAfc };

// One question to the judge about one image.
struct JudgeQuestion {
  JudgeTask task = JudgeTask::kRubric;
  std::string key;     // "rubric/<concept>/<question>/<text hash>", "metaphor/<...>", "afc/<first>/<second>/<...>"
  std::string system;  // instructions
  std::string text;    // user text (concept word, the question verbatim or the two numbered words)
  std::array<std::string, 2> options;  // 2AFC: the two words in presented order
};

JudgeQuestion RubricQuestionFor(const Concept& cpt, const RubricQuestion& question, Language language);

// The judge's rubric scale: the levels a rating takes (kRatingLevels) and what its ends mean, in the
// rubric prompt's own words ("clearly not" / "clearly yes"; the prompt is built from them), so human
// raters answer on exactly the judge's scale.
struct RatingScale {
  std::array<double, kRatingLevels.size()> levels{};
  std::string low, high;  // what 0 and 1 mean
};
RatingScale JudgeRatingScale(Language language);
// Whether `rating` is one of the scale's levels (within 1e-9), as a judge's reply must be.
bool OnRatingScale(double rating);
JudgeQuestion MetaphorQuestionFor(const Concept& cpt, Language language);
JudgeQuestion AfcQuestionFor(const Concept& first, const Concept& second, Language language);

struct JudgeSettings {
  std::string model;
  Language language = Language::kEn;
  double temperature = 0;
};

// Hash of everything in a request except the image and the question: system prompts and text
// templates of the task in that language, response format and temperature.
std::string PromptTemplateHash(JudgeTask task, const JudgeSettings& settings);
// What the judge's answers depend on besides the images and questions, for summary.json:
// {"model", "language", "temperature", "prompt_hashes": {"rubric", "metaphor", "afc"}}, the hashes
// being PromptTemplateHash of each task (the last part of its cache keys).
Json JudgeSettingsJson(const JudgeSettings& settings);
// The store cache key of a question about an image.
std::string JudgeCacheKey(const std::string& image_sha256, const JudgeQuestion& question,
                          const JudgeSettings& settings);
// The chat/completions request body for a question about an image (bytes of a PNG/JPEG/WebP file).
Json JudgeRequestBody(const JudgeQuestion& question, const JudgeSettings& settings, std::string_view image_bytes,
                      std::string_view image_extension);

// The first JSON object in a reply: the whole text, a fenced code block, or an object embedded in
// prose. nullopt if there is none.
std::optional<Json> ExtractJsonObject(std::string_view content);

struct JudgeAnswer {
  bool valid = false;
  double rating = 0;        // rubric
  std::string evidence;     // rubric
  std::string description;  // metaphor
  int choice = -1;          // 2AFC: index into options
  std::string error;        // why the reply is invalid
};
// The answer in a judge's reply (ExtractJsonObject, then JudgeAnswerFromJson); never throws.
JudgeAnswer ParseJudgeReply(const JudgeQuestion& question, std::string_view content);
// The answer in a JSON object: rubric {"rating" on kRatingLevels, "evidence" string}, metaphor
// {"description" non-empty string}, 2AFC {"choice" one of the options}; other members are ignored.
// Anything else is an invalid answer saying why.
JudgeAnswer JudgeAnswerFromJson(const JudgeQuestion& question, const Json& object);

// ---------------------------------------------------------------------------------------------
// Judging runs: ask (or look up) every question about every done image of the runs.

struct JudgeConfig {
  JudgeSettings settings;
  std::string endpoint;        // empty: cache only (no requests; a missing answer is an error)
  std::string api_key_env;     // environment variable holding the key; never stored
  int max_reply_attempts = 3;  // asks per question while replies are unparseable
  int concurrency = 4;
  double rate = 0;  // requests per second, <= 0 unlimited
  backends::RetryPolicy retry;
  backends::Millis timeout{120'000};
  bool rejudge_invalid = false;  // ask again questions whose cached answer is invalid
  // A judge that refuses or cannot follow the format is not paid for question after question: the
  // run stops (an error; the answers so far are cached) once this many questions in a row got no
  // valid answer before any valid one in this invocation. 0 = never stop early. A connection
  // failure (refused, DNS, TLS) before any answer stops the run at once.
  int stop_after_invalid = 3;
  bool progress = true;
  // Judges sharing a store lease the questions they ask (RunStore::ClaimCacheKeys), renewed every
  // third of this; a question another judge holds is waited for, or taken over once its lease expires.
  backends::Millis lease{60'000};
};

// Questions are (image, question) pairs; byte-identical images ask the same questions, so one command
// looks up or asks each distinct cache key once (cached + asked + missing = distinct) and gives its
// answer to every image with those bytes. cached, asked, invalid, failed and missing count distinct keys.
struct JudgeStats {
  size_t images = 0;
  size_t questions = 0;             // one per (image, question)
  size_t distinct = 0;              // distinct cache keys among the questions
  size_t cached = 0;                // answered from the cache
  size_t asked = 0;                 // sent to the judge now
  size_t requests = 0;              // HTTP requests made (retries and re-asks of unparseable replies included)
  size_t invalid = 0;               // answers recorded invalid (now or earlier)
  size_t failed = 0;                // transport failures: not answered, not cached
  size_t missing = 0;               // cache-only mode: keys without a cached answer
  std::vector<std::string> errors;  // first few failure messages
  bool interrupted = false;
  Json ToJson() const;
  // "judge: N images, N questions (N distinct): N cached, N asked (N requests), N invalid, N failed"
  std::string ToText() const;
  // The judging's outcome for the command that ran it with `config`: Interrupted, Unavailable when
  // questions failed (answers so far are cached), NotFound when answers are missing from the cache
  // or the runs have no done image, else OK.
  Status Outcome(const JudgeConfig& config) const;
};

struct JudgeOutcome {
  std::vector<JudgedImage> images;  // done images of every run, in run order, answers filled
  JudgeStats stats;
};

// The done images of the ACVA runs `runs` (run order, then item id and k), without answers: what the
// judge judges and human raters rate. NotFound for a run not in the store; InvalidArgument for a run
// of another benchmark or an image of a concept `set` does not have.
Result<std::vector<JudgedImage>> RunImages(store::RunStore& store, const ConceptSet& set,
                                           const std::vector<std::string>& runs);

// `transport` may be null in cache-only mode. Errors only for store problems or unknown runs/concepts;
// per-question failures are counted in stats.
Result<JudgeOutcome> JudgeRuns(store::RunStore& store, const ConceptSet& set, const std::vector<std::string>& runs,
                               const JudgeConfig& config, std::shared_ptr<backends::HttpTransport> transport,
                               const std::atomic<bool>& stop);

// ---------------------------------------------------------------------------------------------
// Embeddings: CLIP image embeddings and text embeddings of metaphor descriptions, cached in the store
// under the model's fingerprint (identical images or texts are encoded once).

struct EmbeddingStats {
  size_t images_encoded = 0, images_cached = 0, texts_encoded = 0, texts_cached = 0;
};
Result<EmbeddingStats> AttachEmbeddings(store::RunStore& store, const clip::ClipModel& model,
                                        std::vector<JudgedImage>& images);

// ---------------------------------------------------------------------------------------------
// Outputs: summary.json, summary.csv, summary.md and items.jsonl in `dir` (the results contract,
// docs/architecture.md).
Status WriteOutputs(const std::filesystem::path& dir, const AnalysisResult& result);
// summary.json's "inputs": {"concept_set": fingerprint, "runs": [{"run", "dataset_fingerprint",
// "identity"}], "judge": {"model", "language", "temperature", "prompt_hashes"}, "clip_fingerprint"}.
Json AnalysisInputsJson(const ConceptSet& set, const std::vector<store::RunInfo>& runs, const JudgeSettings& judge,
                        const std::string& clip_fingerprint);
// Reads items.jsonl rows back (for `acva agreement`).
Result<std::vector<Json>> ReadItems(const std::filesystem::path& items_jsonl);

// ---------------------------------------------------------------------------------------------
// Reference servers on 127.0.0.1 for tests and demos (docs/acva.md, "Reference servers").
//
// Image generator (POST /v1/images/generations): the request's `model` picks a profile — "varied"
// (images pass every rubric question, three visual variants by sample, metaphors differ, 2AFC right),
// "mono" (every sample identical, ratings 0.25, one metaphor, the judge always picks the first word),
// "mixed" (varies like "varied", ratings 0.75 on even samples and 0.25 on odd ones). The variant is
// seed mod 3 when the request has a seed, else a per-prompt counter. Everything the judge needs is
// drawn into the image's first pixels, so its answers follow from the image content alone.
// Judge (POST /v1/chat/completions): decodes the image and answers per the protocol. Fault profiles by
// judge model suffix: "+fenced" (JSON in a code fence with prose), "+garbage-once" (the first reply to
// each distinct request is not JSON), "+refuse" (always a refusal), "+refuse-metaphor" (refuses only
// metaphor questions), "+slow" (waits slow_ms before answering).
// It serves on the backends::HttpServer scaffold, which also answers GET /health.
struct ReferenceServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: any free port
  int slow_ms = 3000;
  std::filesystem::path port_file;  // if set, the bound port is written here once listening
};

class ReferenceServer {
 public:
  static Result<std::unique_ptr<ReferenceServer>> Start(const ReferenceServerOptions& options);
  virtual ~ReferenceServer() = default;
  virtual int port() const = 0;
  virtual std::string url() const = 0;  // http://127.0.0.1:<port>
  virtual size_t chat_requests() const = 0;
  virtual size_t image_requests() const = 0;
  // Stops listening and joins the server thread (also done by the destructor).
  virtual void Stop() = 0;
  // Serves until `stop` is set, then stops (the loop of `visalign acva reference-server`).
  virtual void ServeUntil(const std::atomic<bool>& stop) = 0;
};

}  // namespace visalign::acva
