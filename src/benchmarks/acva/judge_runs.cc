// Judging the done images of generation runs: every question looked up in the store cache or asked
// (concurrently, rate-limited, with retries), answers cached as soon as they arrive. Judges on one
// store lease the questions they ask, so several processes judging the same runs ask each once.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <deque>
#include <mutex>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "visalign/benchmarks/acva/pipeline.h"
#include "visalign/core/benchmarks.h"
#include "visalign/core/io.h"
#include "visalign/core/parallel.h"
#include "visalign/core/progress.h"
#include "visalign/core/untrusted.h"

namespace visalign::acva {
namespace {

constexpr const char* kCacheNamespace = "acva.judge";
constexpr size_t kMaxErrorsKept = 5;
constexpr backends::Millis kConnectTimeout{10'000};
// How often questions another judge holds are asked for again: a tenth of the lease, within these.
constexpr backends::Millis kMinBusyPoll{20}, kMaxBusyPoll{1000};
constexpr backends::Millis kRenewerPoll{20};
constexpr int kRenewalsPerLease = 3;

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
Json AnswerRecord(const JudgeAnswer& a, const JudgeQuestion& q, int attempts, const std::string& raw) {
  Json j = {{"valid", a.valid}, {"attempts", attempts}, {"question", q.text}, {"reply", raw}};
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

// The answer in a cached record, checked as a judge's reply is: the store may have been edited or
// damaged since this code wrote it. kCorrupt (naming the store and key) for anything AnswerRecord
// does not write.
Result<JudgeAnswer> AnswerFromRecord(std::string_view text, const Task& t, const std::filesystem::path& store_root) {
  const auto corrupt = [&](const std::string& what) {
    return Status::Corrupt("cached judge answer " + what,
                           fmt::format("{} (cache {}, key {})", store_root.string(), kCacheNamespace, t.cache_key),
                           "an answer record as `visalign acva judge` writes it");
  };
  Result<Json> record = ParseJson(text);
  if (!record.ok()) return corrupt("is " + record.status().what());
  if (!record->is_object()) return corrupt("is not a JSON object: " + QuoteJson(*record));
  const auto valid = record->find("valid");
  if (valid == record->end() || !valid->is_boolean())
    return corrupt("without a boolean \"valid\": " + QuoteJson(*record));
  if (!valid->get<bool>()) {
    const auto error = record->find("error");
    if (error == record->end() || !error->is_string())
      return corrupt("without a string \"error\": " + QuoteJson(*record));
    JudgeAnswer answer;
    answer.error = error->get<std::string>();
    return answer;
  }
  JudgeAnswer answer = JudgeAnswerFromJson(t.question, *record);
  if (!answer.valid) return corrupt("for " + QuoteText(t.question.key) + ": " + answer.error);
  return answer;
}

// Fills the image's slot from an answer.
void Apply(const JudgeAnswer& answer, const Task& t, JudgedImage& image) {
  switch (t.slot.task) {
    case JudgeTask::kRubric: {
      RubricAnswer& a = image.answers[t.slot.index];
      if (answer.valid) {
        a.rating = answer.rating;
        a.evidence = answer.evidence;
      } else {
        a.error = answer.error;
      }
      break;
    }
    case JudgeTask::kMetaphor:
      if (answer.valid)
        image.metaphor = answer.description;
      else
        image.metaphor_error = answer.error;
      break;
    case JudgeTask::kAfc: {
      AfcTrial& trial = image.afc[t.slot.index];
      // The question's options are the first and second concept's words, in that order.
      if (answer.valid)
        trial.choice = answer.choice == 0 ? trial.first : trial.second;
      else
        trial.error = answer.error;
      break;
    }
  }
}

// A fresh answer and the record cached for it.
struct Asked {
  JudgeAnswer answer;
  Json record;
};

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
    VISALIGN_ASSIGN_OR_RETURN(out.images, RunImages(store_, set_, runs));
    for (size_t i = 0; i < out.images.size(); ++i)
      AddTasks(i, set_.concepts[*set_.IndexOf(out.images[i].concept_id)], out.images[i], tasks);
    out.stats.images = out.images.size();
    out.stats.questions = tasks.size();

    const std::vector<std::vector<size_t>> shared = TasksByKey(tasks);
    out.stats.distinct = shared.size();
    std::vector<size_t> to_ask;  // indices into `shared`
    for (size_t k = 0; k < shared.size(); ++k) {
      VISALIGN_ASSIGN_OR_RETURN(std::optional<JudgeAnswer> cached, UsableAnswer(tasks[shared[k].front()]));
      if (cached) {
        UseCached(*cached, tasks, shared[k], out);
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

  static void ApplyToAll(const JudgeAnswer& answer, const std::vector<Task>& tasks, const std::vector<size_t>& group,
                         JudgeOutcome& out) {
    for (size_t i : group) Apply(answer, tasks[i], out.images[tasks[i].slot.image]);
  }

  // The cached answer to `t` if there is one this invocation keeps (not an invalid one that is to
  // be asked again).
  Result<std::optional<JudgeAnswer>> UsableAnswer(const Task& t) {
    VISALIGN_ASSIGN_OR_RETURN(auto cached, store_.CacheGet(kCacheNamespace, t.cache_key));
    if (!cached) return std::optional<JudgeAnswer>();
    VISALIGN_ASSIGN_OR_RETURN(JudgeAnswer answer, AnswerFromRecord(*cached, t, store_.root()));
    if (!answer.valid && config_.rejudge_invalid) return std::optional<JudgeAnswer>();
    return std::optional<JudgeAnswer>(std::move(answer));
  }

  static void UseCached(const JudgeAnswer& answer, const std::vector<Task>& tasks, const std::vector<size_t>& group,
                        JudgeOutcome& out) {
    ++out.stats.cached;
    if (!answer.valid) ++out.stats.invalid;
    ApplyToAll(answer, tasks, group, out);
  }

  Status AskAll(const std::vector<Task>& tasks, const std::vector<std::vector<size_t>>& shared,
                const std::vector<size_t>& to_ask, JudgeOutcome& out) {
    Progress progress("judge", to_ask.size(), config_.progress);
    const std::string owner = store::MakeOwnerId();
    const backends::Millis busy_poll = std::clamp(config_.lease / 10, kMinBusyPoll, kMaxBusyPoll);
    const int threads = std::max(1, config_.concurrency);
    std::mutex mu;               // guards the claim state, out and first_error
    size_t next = 0;             // to_ask[next..] not claimed yet
    std::deque<size_t> claimed;  // indices into `shared`, leased to this judge, not asked yet
    std::vector<size_t> busy;    // held by other judges when last asked for
    std::chrono::steady_clock::time_point busy_asked;
    Status first_error;
    std::atomic<bool> finished{false};
    // Leases the groups `wanted`: those answered meanwhile by another judge are used from the cache.
    auto claim_locked = [&](const std::vector<size_t>& wanted) -> Status {
      std::unordered_map<std::string, size_t> group_of;
      std::vector<std::string> keys;
      for (size_t g : wanted) {
        keys.push_back(tasks[shared[g].front()].cache_key);
        group_of[keys.back()] = g;
      }
      VISALIGN_ASSIGN_OR_RETURN(store::CacheClaim claim,
                                store_.ClaimCacheKeys(kCacheNamespace, owner, keys, config_.lease));
      for (const std::string& key : claim.busy) busy.push_back(group_of.at(key));
      for (const std::string& key : claim.claimed) {
        const size_t g = group_of.at(key);
        VISALIGN_ASSIGN_OR_RETURN(std::optional<JudgeAnswer> cached, UsableAnswer(tasks[shared[g].front()]));
        if (!cached) {
          claimed.push_back(g);
          continue;
        }
        UseCached(*cached, tasks, shared[g], out);
        progress.Add(1, 0);
      }
      return Status::Ok();
    };
    // The next group to ask: a batch of `threads` is claimed at a time; the groups other judges
    // held are asked for again every busy_poll. nullopt with `wait` set: nothing free yet.
    auto take = [&](bool& wait) -> std::optional<size_t> {
      std::lock_guard<std::mutex> lock(mu);
      wait = false;
      Status st;
      while (st.ok() && claimed.empty() && next < to_ask.size()) {
        const size_t end = std::min(to_ask.size(), next + static_cast<size_t>(threads));
        st = claim_locked(std::vector<size_t>(to_ask.begin() + static_cast<std::ptrdiff_t>(next),
                                              to_ask.begin() + static_cast<std::ptrdiff_t>(end)));
        next = end;
      }
      if (st.ok() && claimed.empty() && !busy.empty() && std::chrono::steady_clock::now() - busy_asked >= busy_poll) {
        busy_asked = std::chrono::steady_clock::now();
        std::vector<size_t> again;
        again.swap(busy);
        st = claim_locked(again);
      }
      if (!st.ok()) {
        if (first_error.ok()) first_error = st;
        return std::nullopt;
      }
      if (claimed.empty()) {
        wait = !busy.empty();
        return std::nullopt;
      }
      const size_t g = claimed.front();
      claimed.pop_front();
      return g;
    };
    // Stop-early rules (JudgeConfig::stop_after_invalid, and an unreachable judge): `halt_` ends the
    // asking; what was answered is cached and the reason is the command's error.
    size_t invalid_streak = 0;
    auto stop_early_locked = [&](Status why) {
      if (first_error.ok()) first_error = std::move(why);
      halt_ = true;
    };
    auto worker = [&] {
      while (!halt_.load()) {
        bool wait = false;
        const std::optional<size_t> g = take(wait);
        if (!g) {
          if (!wait) return;
          std::this_thread::sleep_for(busy_poll);
          continue;
        }
        const std::vector<size_t>& group = shared[*g];
        const Task& t = tasks[group.front()];
        auto asked = Ask(t, out.images[t.slot.image]);
        std::lock_guard<std::mutex> lock(mu);
        if (unreachable_) {
          stop_early_locked(
              Status::Unavailable("cannot reach the judge: " + *unreachable_, "judge endpoint " + config_.endpoint,
                                  "a running OpenAI-compatible server at --judge-endpoint (check the host and port)"));
        }
        if (asked.ok() && !*asked) continue;  // stopped before it was asked: stays unasked
        ++out.stats.asked;
        if (!asked.ok()) {
          ++out.stats.failed;
          if (out.stats.errors.size() < kMaxErrorsKept) out.stats.errors.push_back(asked.status().ToString());
          progress.Add(0, 1);
          continue;
        }
        const Asked& a = **asked;
        Status st = store_.CachePut(kCacheNamespace, t.cache_key, a.record.dump());
        if (!st.ok() && first_error.ok()) first_error = st;
        if (a.answer.valid) {
          any_valid_ = true;
        } else {
          ++out.stats.invalid;
          if (!any_valid_ && config_.stop_after_invalid > 0 &&
              ++invalid_streak >= static_cast<size_t>(config_.stop_after_invalid))
            stop_early_locked(Status::InvalidArgument(
                fmt::format("stopped after the first {} questions asked got no valid answer; last: {}", invalid_streak,
                            a.answer.error),
                "judge " + config_.settings.model + " at " + config_.endpoint,
                "a judge model that answers in the requested JSON (see docs/acva.md; the invalid answers are "
                "cached: --rejudge-invalid asks them again)"));
        }
        ApplyToAll(a.answer, tasks, group, out);
        progress.Add(1, 0);
      }
    };
    std::thread renewer([&] {
      auto renewed = std::chrono::steady_clock::now();
      while (!finished.load()) {
        std::this_thread::sleep_for(kRenewerPoll);
        if (stop_.load()) halt_ = true;  // an interrupt: no new question; those in flight are awaited
        if (std::chrono::steady_clock::now() - renewed < config_.lease / kRenewalsPerLease) continue;
        renewed = std::chrono::steady_clock::now();
        Status st = store_.RenewCacheLeases(kCacheNamespace, owner, config_.lease);
        std::lock_guard<std::mutex> lock(mu);
        if (!st.ok() && first_error.ok()) first_error = st;
      }
    });
    const Status crashed = RunWorkers(threads, worker);
    finished = true;
    renewer.join();
    progress.Finish();
    // Questions not asked (interrupted, failed) are free for other judges at once.
    Status released = store_.ReleaseCacheLeases(kCacheNamespace, owner);
    out.stats.requests = requests_.load();
    out.stats.interrupted = stop_.load();
    VISALIGN_RETURN_IF_ERROR(crashed);
    VISALIGN_RETURN_IF_ERROR(first_error);
    return released;
  }

  // Asks one question until a parseable reply or max_reply_attempts; a transport failure is an error
  // (the question stays unanswered and uncached); nullopt when the run stopped before an answer. A
  // request in flight is never cancelled (it is paid for): its answer is awaited, bounded by the
  // timeout. A connection failure before any answer of this invocation sets unreachable_ and halts.
  Result<std::optional<Asked>> Ask(const Task& t, const JudgedImage& image) {
    VISALIGN_ASSIGN_OR_RETURN(std::string bytes, ReadFile(image.path));
    const Json body = JudgeRequestBody(t.question, config_.settings, bytes, ExtensionOf(image.path));
    JudgeAnswer answer;
    std::string reply;
    const int max_attempts = std::max(1, config_.max_reply_attempts);
    for (int attempt = 1; attempt <= max_attempts; ++attempt) {
      auto failure = backends::RunWithRetries(
          config_.retry, &limiter_, halt_,
          [&]() -> std::optional<backends::AttemptError> {
            ++requests_;
            auto r = client_->ChatCompletion(body, nullptr);
            if (!r.ok()) {
              if (r.error.kind == backends::ErrorKind::kConnection && !any_answer_.load()) {
                std::lock_guard<std::mutex> lock(unreachable_mu_);
                if (!unreachable_) unreachable_ = r.error.message;
                halt_ = true;
              }
              return r.error;
            }
            any_answer_ = true;
            reply = *r.value;
            return std::nullopt;
          },
          [&](const backends::AttemptError& e, bool final) {
            spdlog::debug("judge {} {}: {}{}", image.ImageId(), t.question.key, e.message, final ? "" : " (retrying)");
          });
      if (failure && failure->kind == backends::ErrorKind::kCancelled) return std::optional<Asked>();
      if (failure)
        return Status::Unavailable("judge request failed: " + failure->message, image.ImageId() + " " + t.question.key,
                                   "a reachable judge endpoint");
      answer = ParseJudgeReply(t.question, reply);
      if (answer.valid) return std::optional<Asked>(Asked{answer, AnswerRecord(answer, t.question, attempt, reply)});
      spdlog::debug("judge {} {}: unparseable reply (attempt {}): {}", image.ImageId(), t.question.key, attempt,
                    answer.error);
    }
    answer.error = "no valid reply in " + std::to_string(max_attempts) + " attempts; last: " + answer.error;
    return std::optional<Asked>(Asked{answer, AnswerRecord(answer, t.question, max_attempts, reply)});
  }

  store::RunStore& store_;
  const ConceptSet& set_;
  const JudgeConfig& config_;
  const std::atomic<bool>& stop_;
  backends::RateLimiter limiter_;
  std::optional<backends::OpenAiClient> client_;
  std::atomic<size_t> requests_{0};
  std::atomic<bool> halt_{false};        // no new question (interrupt or a stop-early rule)
  std::atomic<bool> any_answer_{false};  // some request got an HTTP answer in this invocation
  bool any_valid_ = false;               // some answer was valid (guarded by AskAll's mutex)
  std::mutex unreachable_mu_;
  std::optional<std::string> unreachable_;  // the connection error that halted the run
};

}  // namespace

Result<std::vector<JudgedImage>> RunImages(store::RunStore& store, const ConceptSet& set,
                                           const std::vector<std::string>& runs) {
  std::vector<JudgedImage> images;
  for (const std::string& run : runs) {
    VISALIGN_ASSIGN_OR_RETURN(auto info, store.FindRun(run));
    if (!info)
      return Status::NotFound("run \"" + run + "\" not in the store", store.root().string(),
                              "a run made by `visalign acva generate --run " + run + "`");
    if (info->benchmark != benchmarks::kAcva)
      return Status::InvalidArgument("run \"" + run + "\" is a " + info->benchmark + " run", "run name",
                                     "an ACVA generation run");
    VISALIGN_ASSIGN_OR_RETURN(auto done, store.DoneImages(run));
    for (const store::DoneImage& d : done) {
      if (!set.IndexOf(d.item_id))
        return Status::InvalidArgument("run \"" + run + "\" has an image of concept \"" + d.item_id + "\"",
                                       "concept set", "the concept set the run was generated from");
      JudgedImage image;
      image.model = run;
      image.concept_id = d.item_id;
      image.k = d.k;
      image.path = d.image_path.string();
      image.sha256 = d.sha256;
      images.push_back(std::move(image));
    }
  }
  return images;
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
