// The judge steps of `visalign acva ...` (see acva_judge.h).
#include "cli/acva_judge.h"

#include <cstdio>

#include "cli/backend_options.h"
#include "visalign/benchmarks/acva/run_pipeline.h"

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

std::shared_ptr<backends::HttpTransport> JudgeTransport(const JudgeArgs& a) {
  return a.endpoint.empty() ? nullptr : backends::MakeCurlTransport();
}

Status JudgeCommand(const Cli& cli, const JudgeArgs& a, bool dry_run, std::optional<double> price,
                    const acva::ConceptSet& set, store::RunStore& store, const std::atomic<bool>& stop) {
  const acva::JudgeConfig config = JudgeConfigFrom(cli, a);
  if (dry_run) {
    VISALIGN_ASSIGN_OR_RETURN(acva::JudgePlan plan, acva::PlanJudging(store, set, a.runs, config, price, stop));
    if (cli.global().json)
      PrintJson(plan.ToJson());
    else
      std::printf("%s", plan.ToText(config).c_str());
    return Status::Ok();
  }
  VISALIGN_ASSIGN_OR_RETURN(acva::JudgeOutcome outcome,
                            acva::JudgeRuns(store, set, a.runs, config, JudgeTransport(a), stop));
  if (cli.global().json)
    PrintJson(outcome.stats.ToJson());
  else
    std::printf("%s\n", outcome.stats.ToText().c_str());
  return outcome.stats.Outcome(config);
}

}  // namespace visalign::cli
