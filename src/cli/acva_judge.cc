// The judge steps of `visalign acva ...` (see acva_judge.h).
#include "cli/acva_judge.h"

#include <cstdio>

#include <fmt/format.h>

#include "cli/backend_options.h"
#include "visalign/backends/backends.h"

namespace visalign::cli {

void AddJudgeOptions(CLI::App* app, JudgeArgs& a, bool endpoint_required) {
  auto* ep = app->add_option("--judge-endpoint", a.endpoint, "Base URL of an OpenAI-compatible chat API (VLM judge)");
  if (endpoint_required) ep->required();
  app->add_option("--judge-model", a.model, "Judge model name (part of every cache key)")->required();
  app->add_option("--judge-api-key-env", a.api_key_env, "Environment variable holding the judge's API key");
  app->add_option("--judge-language", a.language, "Language of judge prompts and rubric questions: en or zh")
      ->check(CLI::IsMember({"zh", "en"}))
      ->capture_default_str();
  app->add_option("--judge-temperature", a.temperature, "Sampling temperature")->capture_default_str();
  app->add_option("--judge-concurrency", a.concurrency, "Judge requests in flight")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--judge-rate", a.rate, "Judge requests per second (0 = unlimited)")->capture_default_str();
  app->add_option("--judge-timeout", a.timeout_s, "Seconds per judge request")->capture_default_str();
  app->add_option("--judge-max-attempts", a.max_attempts, "Attempts per request on timeouts, 429 and 5xx")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--judge-reply-attempts", a.max_reply_attempts,
                  "Times a question is asked while the reply is unparseable; then it is recorded invalid")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_flag("--rejudge-invalid", a.rejudge_invalid, "Ask again questions whose cached answer is invalid");
  app->add_option("--judge-stop-after-invalid", a.stop_after_invalid,
                  "Stop (an error; answers so far cached) once this many questions in a row got no valid answer "
                  "before any valid one (a judge that refuses or ignores the format); 0 = never")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app->add_option("--judge-lease", a.lease_s,
                  "Seconds a question being asked stays this judge's between renewals (judges sharing a store take "
                  "over a dead judge's questions after it)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

acva::JudgeConfig JudgeConfigFrom(const Cli& cli, const JudgeArgs& a) {
  acva::JudgeConfig config;
  config.settings.model = a.model;
  config.settings.language = *acva::LanguageFromName(a.language);
  config.settings.temperature = a.temperature;
  config.endpoint = a.endpoint;
  config.api_key_env = a.api_key_env;
  config.max_reply_attempts = a.max_reply_attempts;
  config.concurrency = a.concurrency;
  config.rate = a.rate;
  config.retry.max_attempts = a.max_attempts;
  config.timeout = MillisFromSeconds(a.timeout_s);
  config.rejudge_invalid = a.rejudge_invalid;
  config.stop_after_invalid = a.stop_after_invalid;
  config.lease = MillisFromSeconds(a.lease_s);
  config.progress = !cli.global().json;
  return config;
}

// Judges (asks what is not cached when an endpoint is given) and returns the judged images.
Result<acva::JudgeOutcome> Judge(const Cli& cli, const JudgeArgs& a, const acva::ConceptSet& set,
                                 store::RunStore& store, const std::atomic<bool>& stop) {
  const acva::JudgeConfig config = JudgeConfigFrom(cli, a);
  auto transport = a.endpoint.empty() ? nullptr : backends::MakeCurlTransport();
  VISALIGN_ASSIGN_OR_RETURN(acva::JudgeOutcome outcome, acva::JudgeRuns(store, set, a.runs, config, transport, stop));
  const acva::JudgeStats& s = outcome.stats;
  if (!cli.global().json)
    std::printf(
        "judge: %zu images, %zu questions (%zu distinct): %zu cached, %zu asked (%zu requests), %zu invalid, "
        "%zu failed\n",
        s.images, s.questions, s.distinct, s.cached, s.asked, s.requests, s.invalid, s.failed);
  if (s.interrupted) return Status::Interrupted("judging interrupted; answers so far are cached, rerun to continue");
  if (s.failed > 0)
    return Status::Unavailable(fmt::format("{} judge questions failed (first: {})", s.failed, s.errors.front()),
                               "--judge-endpoint " + a.endpoint,
                               "rerun when the judge is reachable; answers so far are cached");
  if (s.missing > 0)
    return Status::NotFound(fmt::format("{} of {} judge answers are not in the cache", s.missing, s.questions),
                            "--judge-model " + a.model,
                            "run `visalign acva judge` first with the same runs, judge model and language");
  if (s.images == 0) return Status::NotFound("no done images in the runs", "--run", "runs with generated images");
  return outcome;
}

// `acva judge --dry-run`: the judge's work from the cache alone, nothing asked or written.
Status JudgeDryRun(const Cli& cli, const JudgeArgs& a, std::optional<double> price, const acva::ConceptSet& set,
                   store::RunStore& store, const std::atomic<bool>& stop) {
  acva::JudgeConfig config = JudgeConfigFrom(cli, a);
  config.progress = false;
  VISALIGN_ASSIGN_OR_RETURN(acva::JudgeOutcome outcome, acva::JudgeRuns(store, set, a.runs, config, nullptr, stop));
  const acva::JudgeStats& s = outcome.stats;
  const size_t to_ask = s.missing;  // with --rejudge-invalid, cached invalid answers count here
  const size_t max_requests = to_ask * static_cast<size_t>(a.max_reply_attempts) * static_cast<size_t>(a.max_attempts);
  const std::string url = backends::OpenAiClient({a.endpoint, "", {}}, nullptr).Url("chat/completions");
  if (cli.global().json) {
    PrintJson({{"images", s.images},
               {"questions", s.questions},
               {"distinct", s.distinct},
               {"cached", s.cached},
               {"to_ask", to_ask},
               {"max_requests", max_requests},
               {"request", "POST " + url},
               {"cost", price ? Json(*price * static_cast<double>(to_ask)) : Json(nullptr)}});
    return Status::Ok();
  }
  std::printf("judge %s at %s: %zu images, %zu questions (%zu distinct)\n", a.model.c_str(), url.c_str(), s.images,
              s.questions, s.distinct);
  std::printf(
      "cached: %zu; to ask: %zu (at most %zu requests with --judge-reply-attempts %d and --judge-max-attempts "
      "%d)\n",
      s.cached, to_ask, max_requests, a.max_reply_attempts, a.max_attempts);
  if (price)
    std::printf("cost: %zu requests x $%g = $%.2f (re-asks and retries not counted)\n", to_ask, *price,
                *price * static_cast<double>(to_ask));
  return Status::Ok();
}

}  // namespace visalign::cli
