// Judging the done images of generation runs: every question looked up in the store cache or asked
// (concurrently, rate-limited, with retries), answers cached as soon as they arrive.
#include <spdlog/spdlog.h>

#include <mutex>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "visalign/benchmarks/acva/pipeline.h"
#include "visalign/core/io.h"
#include "visalign/core/progress.h"

namespace visalign::acva {
namespace {

using nlohmann::json;
constexpr const char* kCacheNamespace = "acva.judge";
constexpr size_t kMaxErrorsKept = 5;
constexpr backends::Millis kConnectTimeout{10'000};

// Where one question's answer goes in the judged image.
struct Slot {
  size_t image = 0;
  JudgeTask task = JudgeTask::kRubric;
  size_t index = 0;  // rubric answer index or 2AFC trial index
};

struct Task {
  Slot slot;
  JudgeQuestion question;
  std::string cache_key;
};

// The cached record of an answer.
json AnswerRecord(const JudgeAnswer& a, const JudgeQuestion& q, int attempts, const std::string& raw) {
  json j = {{"valid", a.valid}, {"attempts", attempts}, {"question", q.text}, {"reply", raw}};
  if (!a.valid) j["error"] = a.error;
  switch (q.task) {
    case JudgeTask::kRubric:
      if (a.valid) {
        j["rating"] = a.rating;
        j["evidence"] = a.evidence;
      }
      break;
    case JudgeTask::kMetaphor:
      if (a.valid) j["description"] = a.description;
      break;
    case JudgeTask::kAfc:
      if (a.valid) j["choice"] = q.options[static_cast<size_t>(a.choice)];
      break;
  }
  return j;
}

// Fills the image's slot from a cached record.
void Apply(const json& record, const Task& t, const ConceptSet& set, JudgedImage& image) {
  const bool valid = record.value("valid", false);
  const std::string error = record.value("error", std::string());
  switch (t.slot.task) {
    case JudgeTask::kRubric: {
      RubricAnswer& a = image.answers[t.slot.index];
      if (valid) {
        a.rating = record["rating"].get<double>();
        a.evidence = record.value("evidence", std::string());
      } else {
        a.error = error;
      }
      break;
    }
    case JudgeTask::kMetaphor:
      if (valid) image.metaphor = record["description"].get<std::string>();
      else image.metaphor_error = error;
      break;
    case JudgeTask::kAfc: {
      AfcTrial& trial = image.afc[t.slot.index];
      if (valid) {
        const std::string word = record["choice"].get<std::string>();
        trial.choice = set.concepts[*set.IndexOf(trial.first)].word == word ? trial.first : trial.second;
      } else {
        trial.error = error;
      }
      break;
    }
  }
}

std::string ExtensionOf(const std::filesystem::path& p) {
  std::string ext = p.extension().string();
  return ext.empty() ? "png" : ext.substr(1);
}

class Judge {
 public:
  Judge(store::RunStore& store, const ConceptSet& set, const JudgeConfig& config,
        std::optional<backends::OpenAiClient> client, const std::atomic<bool>& stop)
      : store_(store), set_(set), config_(config), stop_(stop), limiter_(config.rate), client_(std::move(client)) {}

  Result<JudgeOutcome> Run(const std::vector<std::string>& runs) {
    JudgeOutcome out;
    std::vector<Task> tasks;
    for (const std::string& run : runs) {
      VISALIGN_ASSIGN_OR_RETURN(auto info, store_.FindRun(run));
      if (!info) return Status::NotFound("run \"" + run + "\" not in the store", store_.root().string(),
                                         "a run made by `visalign acva generate --run " + run + "`");
      if (info->benchmark != "acva")
        return Status::InvalidArgument("run \"" + run + "\" is a " + info->benchmark + " run", "run name",
                                       "an ACVA generation run");
      VISALIGN_ASSIGN_OR_RETURN(auto done, store_.DoneImages(run));
      for (const store::DoneImage& d : done) {
        auto c = set_.IndexOf(d.item_id);
        if (!c) return Status::InvalidArgument("run \"" + run + "\" has an image of concept \"" + d.item_id + "\"",
                                               "concept set", "the concept set the run was generated from");
        JudgedImage image;
        image.model = run;
        image.concept_id = d.item_id;
        image.k = d.k;
        image.path = d.image_path.string();
        image.sha256 = d.sha256;
        AddTasks(out.images.size(), set_.concepts[*c], image, tasks);
        out.images.push_back(std::move(image));
      }
    }
    out.stats.images = out.images.size();
    out.stats.questions = tasks.size();

    const std::vector<std::vector<size_t>> shared = TasksByKey(tasks);
    out.stats.distinct = shared.size();
    std::vector<size_t> to_ask;  // indices into `shared`
    for (size_t k = 0; k < shared.size(); ++k) {
      VISALIGN_ASSIGN_OR_RETURN(auto cached, store_.CacheGet(kCacheNamespace, tasks[shared[k].front()].cache_key));
      std::optional<json> record;
      if (cached) {
        json j = json::parse(*cached, nullptr, false);
        if (!j.is_discarded()) record = j;
      }
      const bool usable = record && (record->value("valid", false) || !config_.rejudge_invalid);
      if (usable) {
        ++out.stats.cached;
        if (!record->value("valid", false)) ++out.stats.invalid;
        ApplyToAll(*record, tasks, shared[k], out);
      } else if (client_) {
        to_ask.push_back(k);
      } else {
        ++out.stats.missing;
      }
    }
    if (!to_ask.empty()) VISALIGN_RETURN_IF_ERROR(AskAll(tasks, shared, to_ask, out));
    return out;
  }

 private:
  void AddTasks(size_t image_index, const Concept& cpt, JudgedImage& image, std::vector<Task>& tasks) {
    const Language lang = config_.settings.language;
    auto add = [&](JudgeTask task, size_t index, JudgeQuestion q) {
      std::string key = JudgeCacheKey(image.sha256, q, config_.settings);
      tasks.push_back({{image_index, task, index}, std::move(q), std::move(key)});
    };
    for (size_t q = 0; q < cpt.rubric.size(); ++q) {
      image.answers.push_back({cpt.rubric[q].id, std::nullopt, "", ""});
      add(JudgeTask::kRubric, q, RubricQuestionFor(cpt, cpt.rubric[q], lang));
    }
    add(JudgeTask::kMetaphor, 0, MetaphorQuestionFor(cpt, lang));
    for (const ConceptPair& p : set_.pairs) {
      if (p.a != cpt.id && p.b != cpt.id) continue;
      const Concept& a = set_.concepts[*set_.IndexOf(p.a)];
      const Concept& b = set_.concepts[*set_.IndexOf(p.b)];
      for (const auto& [first, second] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
        image.afc.push_back({p.a, p.b, first->id, second->id, std::nullopt, ""});
        add(JudgeTask::kAfc, image.afc.size() - 1, AfcQuestionFor(*first, *second, lang));
      }
    }
  }

  // Tasks grouped by cache key, in order of first appearance. Byte-identical images (and a concept
  // judged in two runs from the same bytes) share every question: each key is looked up or asked once
  // and its answer goes to every task of the group.
  static std::vector<std::vector<size_t>> TasksByKey(const std::vector<Task>& tasks) {
    std::vector<std::vector<size_t>> groups;
    std::unordered_map<std::string_view, size_t> group_of;
    for (size_t i = 0; i < tasks.size(); ++i) {
      auto [it, inserted] = group_of.emplace(tasks[i].cache_key, groups.size());
      if (inserted) groups.emplace_back();
      groups[it->second].push_back(i);
    }
    return groups;
  }

  void ApplyToAll(const json& record, const std::vector<Task>& tasks, const std::vector<size_t>& group,
                  JudgeOutcome& out) const {
    for (size_t i : group) Apply(record, tasks[i], set_, out.images[tasks[i].slot.image]);
  }

  Status AskAll(const std::vector<Task>& tasks, const std::vector<std::vector<size_t>>& shared,
                const std::vector<size_t>& to_ask, JudgeOutcome& out) {
    Progress progress("judge", to_ask.size(), config_.progress);
    std::atomic<size_t> next{0};
    std::mutex mu;
    Status first_error;
    auto worker = [&] {
      while (!stop_.load()) {
        const size_t n = next.fetch_add(1);
        if (n >= to_ask.size()) return;
        const std::vector<size_t>& group = shared[to_ask[n]];
        const Task& t = tasks[group.front()];
        auto record = Ask(t, out.images[t.slot.image]);
        std::lock_guard<std::mutex> lock(mu);
        ++out.stats.asked;
        if (!record.ok()) {
          ++out.stats.failed;
          if (out.stats.errors.size() < kMaxErrorsKept) out.stats.errors.push_back(record.status().ToString());
          progress.Add(0, 1);
          continue;
        }
        Status st = store_.CachePut(kCacheNamespace, t.cache_key, record->dump());
        if (!st.ok() && first_error.ok()) first_error = st;
        if (!record->value("valid", false)) ++out.stats.invalid;
        ApplyToAll(*record, tasks, group, out);
        progress.Add(1, 0);
      }
    };
    const int threads = std::max(1, config_.concurrency);
    std::vector<std::thread> pool;
    for (int i = 0; i < threads; ++i) pool.emplace_back(worker);
    for (auto& th : pool) th.join();
    progress.Finish();
    out.stats.requests = requests_.load();
    out.stats.interrupted = stop_.load();
    return first_error;
  }

  // Asks one question until a parseable reply or max_reply_attempts; a transport failure is an error
  // (the question stays unanswered and uncached).
  Result<json> Ask(const Task& t, const JudgedImage& image) {
    VISALIGN_ASSIGN_OR_RETURN(std::string bytes, ReadFile(image.path));
    const json body = JudgeRequestBody(t.question, config_.settings, bytes, ExtensionOf(image.path));
    JudgeAnswer answer;
    std::string reply;
    const int max_attempts = std::max(1, config_.max_reply_attempts);
    for (int attempt = 1; attempt <= max_attempts; ++attempt) {
      auto failure = backends::RunWithRetries(
          config_.retry, &limiter_, stop_,
          [&]() -> std::optional<backends::AttemptError> {
            ++requests_;
            auto r = client_->ChatCompletion(body, &stop_);
            if (!r.ok()) return r.error;
            reply = *r.value;
            return std::nullopt;
          },
          [&](const backends::AttemptError& e, bool final) {
            spdlog::debug("judge {} {}: {}{}", image.ImageId(), t.question.key, e.message, final ? "" : " (retrying)");
          });
      if (failure)
        return Status::Unavailable("judge request failed: " + failure->message,
                                   image.ImageId() + " " + t.question.key, "a reachable judge endpoint");
      answer = ParseJudgeReply(t.question, reply);
      if (answer.valid) return AnswerRecord(answer, t.question, attempt, reply);
      spdlog::debug("judge {} {}: unparseable reply (attempt {}): {}", image.ImageId(), t.question.key, attempt,
                    answer.error);
    }
    answer.error = "no valid reply in " + std::to_string(max_attempts) + " attempts; last: " + answer.error;
    return AnswerRecord(answer, t.question, max_attempts, reply);
  }

  store::RunStore& store_;
  const ConceptSet& set_;
  const JudgeConfig& config_;
  const std::atomic<bool>& stop_;
  backends::RateLimiter limiter_;
  std::optional<backends::OpenAiClient> client_;
  std::atomic<size_t> requests_{0};
};

}  // namespace

json JudgeStats::ToJson() const {
  return {{"images", images},   {"questions", questions}, {"distinct", distinct}, {"cached", cached},  {"asked", asked},
          {"requests", requests}, {"invalid", invalid},   {"failed", failed},  {"missing", missing},
          {"errors", errors},   {"interrupted", interrupted}};
}

Result<JudgeOutcome> JudgeRuns(store::RunStore& store, const ConceptSet& set, const std::vector<std::string>& runs,
                               const JudgeConfig& config, std::shared_ptr<backends::HttpTransport> transport,
                               const std::atomic<bool>& stop) {
  if (config.settings.model.empty())
    return Status::InvalidArgument("no judge model", "judge model", "the judge model's name (part of every cache key)");
  if (transport && config.endpoint.empty())
    return Status::InvalidArgument("no judge endpoint", "judge endpoint", "the base URL of an OpenAI-compatible API");
  std::optional<backends::OpenAiClient> client;
  if (transport) {
    Result<std::string> key = backends::ApiKeyFromEnv(config.api_key_env);
    if (!key.ok()) return key.status().WithContext("judge");  // at "judge API key variable"
    client.emplace(backends::OpenAiEndpoint{config.endpoint, *key, {kConnectTimeout, config.timeout}},
                   std::move(transport));
  }
  return Judge(store, set, config, std::move(client), stop).Run(runs);
}

}  // namespace visalign::acva
