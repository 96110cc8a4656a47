// The Hues and Cues game (docs/serve.md "Game"): onboarding, the items each participant answers
// (least-assigned words first, one attention check), answers with replay protection, the reveal of
// earlier players' answers, page events, completion, and the admin export.
#include <algorithm>
#include <mutex>
#include <random>
#include <set>
#include <tuple>

#include "server/plates.h"
#include "server/routes.h"
#include "server/submission_id.h"
#include "visalign/core/untrusted.h"
#include "visalign/server/humans_export.h"

namespace visalign::server {
namespace {

using backends::HttpServer;
using backends::HttpServerRequest;
using backends::HttpServerResponse;

constexpr int kAttentionItem = 0;  // the clue id an assignment uses for the attention check
constexpr size_t kMaxEventsPerRequest = 100;
constexpr size_t kMaxMetadataBytes = 4096;
const std::set<std::string> kGenders = {"female", "male", "other", "prefer-not-to-say"};
const std::set<std::string> kAgeRanges = {"-10", "10-19", "20-29", "30-39", "40-49", "50-59", "60-69", "70"};
const std::set<std::string> kColorblind = {"yes", "no"};
const std::set<std::string> kEventTypes = {"blur", "focus", "hidden", "visible"};

Status OneOf(const Json& body, const char* field, const std::set<std::string>& allowed, std::string& out) {
  out = StringMember(body, field);
  if (allowed.count(out)) return Status::Ok();
  std::string list;
  for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
  return Status::InvalidArgument("value " + QuoteText(out), std::string("request body field ") + field,
                                 "one of " + list);
}

// What the game remembers across requests: the shipped answers per word (for the reveal) and the
// lock that keeps two participants from being balanced against the same counts.
struct Game {
  App& app;
  std::vector<std::map<std::string, int64_t>> shipped;  // per vocabulary word: coordinate -> answers
  std::mutex assign_mu;
  std::mt19937_64 rng{std::random_device{}()};

  explicit Game(App& a) : app(a) {
    shipped.resize(app.vocabulary().words().size());
    if (!app.options().words.empty()) return;  // the shipped answers are of the shipped words only
    hues::HumanLoadOptions all;
    all.include_colorblind = true;
    auto humans = hues::DefaultHumans(app.vocabulary(), all);
    if (!humans.ok()) return;
    for (const hues::HumanAnswer& h : humans->answers) ++shipped[static_cast<size_t>(h.word)][hues::CellName(h.cell)];
  }

  // N words, the least-assigned first (ties at random), shown in random order, with the
  // attention check at its position.
  Result<std::vector<int>> Assign() {
    std::lock_guard lock(assign_mu);
    VISALIGN_ASSIGN_OR_RETURN(auto counts, app.study_store().AssignmentCounts());
    std::vector<int> clues;
    for (const hues::Word& w : app.vocabulary().words()) clues.push_back(w.clue_id);
    std::shuffle(clues.begin(), clues.end(), rng);
    std::stable_sort(clues.begin(), clues.end(), [&](int a, int b) { return counts[a] < counts[b]; });
    clues.resize(std::min(clues.size(), static_cast<size_t>(app.study().words_per_participant)));
    std::shuffle(clues.begin(), clues.end(), rng);
    if (app.study().attention_check.enabled) {
      const size_t at = std::min(clues.size(), static_cast<size_t>(app.study().attention_check.position));
      clues.insert(clues.begin() + static_cast<std::ptrdiff_t>(at), kAttentionItem);
    }
    return clues;
  }

  // How many of the participant's items are answered (answers and the attention record).
  Result<size_t> Progress(const store::Participant& p) {
    VISALIGN_ASSIGN_OR_RETURN(auto answers, app.study_store().AnswersOf(p.id));
    VISALIGN_ASSIGN_OR_RETURN(auto checks, app.study_store().RecordsOf(kAttentionCheckRecord, p.id));
    return answers.size() + checks.size();
  }

  Json Completion(store::Participant& p, size_t items) {
    const StudyConfig& study = app.study();
    std::string code;
    if (!study.completion_codes.empty())
      code = study.completion_codes[static_cast<size_t>(p.id - 1) % study.completion_codes.size()];
    std::string redirect = study.completion_url;
    if (const size_t at = redirect.find("{code}"); at != std::string::npos) redirect.replace(at, 6, code);
    return {{"done", true}, {"total", items}, {"code", code}, {"redirect", redirect}};
  }

  // The item at `index` of the participant's `items`, as the page shows it: its place among the
  // items (`index`, `total`, the attention check included) and among the words (`word_number`,
  // 1-based, of `words`; the attention check is not a word and has no number).
  Json Item(const store::Participant& p, const std::vector<int>& items, size_t index) {
    const int clue_id = items[index];
    const auto is_word = [](int clue) { return clue != kAttentionItem; };
    const auto before = items.begin() + static_cast<std::ptrdiff_t>(index);
    Json item = {{"done", false},
                 {"index", index},
                 {"total", items.size()},
                 {"words", std::count_if(items.begin(), items.end(), is_word)}};
    if (clue_id == kAttentionItem) {
      item["kind"] = "attention";
      item["cell"] = app.study().attention_check.cell;
      return item;
    }
    const hues::Word& w = app.vocabulary().words()[static_cast<size_t>(*app.vocabulary().IndexOfClue(clue_id))];
    item["kind"] = "word";
    item["word_number"] = std::count_if(items.begin(), before, is_word) + 1;
    item["clue_id"] = clue_id;
    item["word"] = p.language == "es" ? w.es : w.en;
    item["category"] =
        app.category_names().Display(w.category, p.language);  // shown; the answer stores the published code
    item["category_code"] = w.category;
    return item;
  }

  // Earlier players' answers for the clue: the shipped data set's and this study's.
  Result<Json> Reveal(int clue_id) {
    VISALIGN_ASSIGN_OR_RETURN(auto counts, app.study_store().CoordinateCounts(clue_id));
    for (const auto& [cell, n] : shipped[static_cast<size_t>(*app.vocabulary().IndexOfClue(clue_id))])
      counts[cell] += n;
    int64_t total = 0;
    for (const auto& [cell, n] : counts) total += n;
    return Json{{"counts", counts}, {"answers", total}};
  }
};

// The onboarded participant with their assignment, or the reply already written.
struct Player {
  store::Participant participant;
  std::vector<int> items;
};
std::optional<Player> RequirePlayer(App& app, const HttpServerRequest& req, HttpServerResponse& res) {
  auto p = app.RequireSession(req);
  if (!p.ok()) {
    App::Fail(res, 401, p.status());
    return std::nullopt;
  }
  if (!p->onboarded()) {
    App::Fail(res, 409, Status::InvalidArgument("not onboarded", "session", "POST /api/profile first"));
    return std::nullopt;
  }
  auto items = app.study_store().Assignment(p->id);
  if (!items.ok()) {
    App::Fail(res, items.status());
    return std::nullopt;
  }
  return Player{std::move(*p), std::move(*items)};
}

// Replies with the item after the `done` answered ones (or the completion), and `extra`.
void NextItem(Game& game, Player& player, HttpServerResponse& res, int status, Json extra, Result<size_t> done) {
  if (!done.ok()) return App::Fail(res, done.status());
  Json next;
  if (*done >= player.items.size()) {
    if (player.participant.completed_at.empty()) {
      auto completed = game.app.study_store().MarkCompleted(player.participant.id);
      if (!completed.ok()) return App::Fail(res, completed.status());
      player.participant = std::move(*completed);
    }
    next = game.Completion(player.participant, player.items.size());
  } else {
    next = game.Item(player.participant, player.items, *done);
  }
  for (auto& [k, v] : extra.items()) next[k] = v;
  res.SetJson(status, next);
}

}  // namespace

Status AddGameRoutes(App& app, HttpServer& server) {
  auto game = std::make_shared<Game>(app);
  app.AddPage(server, "/", "game", "Hues and Cues");

  server.Route("POST", "/api/profile", [&app, game](const HttpServerRequest& req, HttpServerResponse& res) {
    auto p = app.RequireSession(req);
    if (!p.ok()) return App::Fail(res, 401, p.status());
    if (p->onboarded())
      return App::Fail(res, 409, Status::InvalidArgument("already onboarded", "session", "one profile per session"));
    auto body = App::JsonBody(req);
    if (!body.ok()) return App::Fail(res, body.status());
    const std::set<std::string> languages(app.study().languages.begin(), app.study().languages.end());
    std::string language;
    for (auto [field, allowed, out] :
         {std::tuple{"language", &languages, &language}, std::tuple{"gender", &kGenders, &p->gender},
          std::tuple{"age_range", &kAgeRanges, &p->age_range}, std::tuple{"colorblind", &kColorblind, &p->colorblind}})
      if (Status st = OneOf(*body, field, *allowed, *out); !st.ok()) return App::Fail(res, 400, st);
    if (auto m = body->find("metadata"); m != body->end()) {
      if (!m->is_object() || m->dump().size() > kMaxMetadataBytes)
        return App::Fail(res, 400,
                         Status::InvalidArgument("not an object of at most 4096 bytes", "request body field metadata",
                                                 "{\"user_agent\", \"viewport\", \"device_pixel_ratio\", ...}"));
      p->metadata = *m;
    }
    auto items = game->Assign();
    if (!items.ok()) return App::Fail(res, items.status());
    if (Status st = app.study_store().SetAssignment(p->id, *items); !st.ok()) return App::Fail(res, 409, st);
    p->language = language;
    if (Status st = app.study_store().UpdateParticipant(*p); !st.ok()) return App::Fail(res, st);
    res.SetJson(200, {{"items", items->size()}, {"cvd_screen", app.study().cvd_screen}});
  });

  server.Route("GET", "/api/screen", [&app](const HttpServerRequest& req, HttpServerResponse& res) {
    auto p = app.RequireSession(req);
    if (!p.ok()) return App::Fail(res, 401, p.status());
    if (!app.study().cvd_screen) return App::Fail(res, 404, Status::NotFound("no screen in this study", "/api/screen"));
    res.SetJson(200, PlatesJson(ScreeningPlates(static_cast<uint64_t>(p->id))));
  });
  server.Route("POST", "/api/screen", [&app](const HttpServerRequest& req, HttpServerResponse& res) {
    auto p = app.RequireSession(req);
    if (!p.ok()) return App::Fail(res, 401, p.status());
    if (!app.study().cvd_screen) return App::Fail(res, 404, Status::NotFound("no screen in this study", "/api/screen"));
    if (p->screen_score)
      return App::Fail(res, 409, Status::InvalidArgument("already screened", "session", "one screen per session"));
    auto body = App::JsonBody(req);
    if (!body.ok()) return App::Fail(res, body.status());
    auto scored = ScoreScreen(ScreeningPlates(static_cast<uint64_t>(p->id)), *body);
    if (!scored.ok()) return App::Fail(res, 400, scored.status());
    p->screen_score = scored->score;
    p->screen = scored->answers;
    if (Status st = app.study_store().UpdateParticipant(*p); !st.ok()) return App::Fail(res, st);
    res.SetJson(200, {{"recorded", true}});
  });

  server.Route("GET", "/api/next", [&app, game](const HttpServerRequest& req, HttpServerResponse& res) {
    auto player = RequirePlayer(app, req, res);
    if (player) NextItem(*game, *player, res, 200, Json::object(), game->Progress(player->participant));
  });

  server.Route("POST", "/api/answer", [&app, game](const HttpServerRequest& req, HttpServerResponse& res) {
    auto player = RequirePlayer(app, req, res);
    if (!player) return;
    auto body = App::JsonBody(req);
    if (!body.ok()) return App::Fail(res, body.status());
    Result<std::string> submission = SubmissionId(*body);
    if (!submission.ok()) return App::Fail(res, 400, submission.status());
    const std::string& client_id = *submission;
    auto index_field = body->find("index");
    if (index_field == body->end() || !index_field->is_number_unsigned() ||
        index_field->get<uint64_t>() >= player->items.size())
      return App::Fail(res, 400,
                       Status::InvalidArgument(
                           "item " + (index_field == body->end() ? std::string("missing") : QuoteJson(*index_field)),
                           "request body field index", "0 to " + std::to_string(player->items.size() - 1)));
    const size_t index = index_field->get<size_t>();
    const std::string coordinate = StringMember(*body, "coordinate");
    auto cell = hues::ParseCell(coordinate);
    if (!cell.ok())
      return App::Fail(
          res, 400,
          Status::InvalidArgument("cell " + QuoteText(coordinate), "request body field coordinate", "A1..P30"));
    auto done = game->Progress(player->participant);
    if (!done.ok()) return App::Fail(res, done.status());
    if (index != *done)
      return App::Fail(
          res, 409,
          Status::InvalidArgument(index < *done ? "item already answered" : "item not reached yet",
                                  "request body field index", "the current item, " + std::to_string(*done)));
    const int clue_id = player->items[index];
    if (auto clue = body->find("clue_id");
        clue != body->end() && (!clue->is_number_integer() || clue->get<int64_t>() != clue_id))
      return App::Fail(res, 400,
                       Status::InvalidArgument("clue " + QuoteJson(*clue), "request body field clue_id",
                                               "the current item's clue, " + std::to_string(clue_id)));
    const std::string name = hues::CellName(*cell);
    if (clue_id == kAttentionItem) {
      const bool passed = name == app.study().attention_check.cell;
      auto added =
          app.study_store().AddRecord(kAttentionCheckRecord, player->participant.id, "item-" + std::to_string(index),
                                      {{"expected", app.study().attention_check.cell},
                                       {"coordinate", name},
                                       {"passed", passed},
                                       {"client_id", client_id}});
      if (!added.ok()) return App::Fail(res, added.status());
      if (*added == store::Insert::kDuplicate)
        return App::Fail(
            res, 409, Status::InvalidArgument("item already answered", "request body field index", "the current item"));
      return NextItem(*game, *player, res, 201, {{"answered", {{"index", index}, {"coordinate", name}}}}, index + 1);
    }
    const hues::Word& w = app.vocabulary().words()[static_cast<size_t>(*app.vocabulary().IndexOfClue(clue_id))];
    const std::string& language = player->participant.language;
    store::HuesAnswerRow row{player->participant.id,
                             "",
                             static_cast<int>(index),
                             clue_id,
                             language == "es" ? w.es : w.en,
                             PublishedCategory(w.category, language),
                             name,
                             "",
                             client_id};
    auto added = app.study_store().AddAnswer(row);
    if (!added.ok()) return App::Fail(res, added.status());
    if (*added == store::Insert::kDuplicate)
      return App::Fail(res, 409,
                       Status::InvalidArgument("answer already recorded", "request body field client_id",
                                               "a new client id per answer"));
    auto reveal = game->Reveal(clue_id);
    if (!reveal.ok()) return App::Fail(res, reveal.status());
    NextItem(*game, *player, res, 201,
             {{"answered", {{"index", index}, {"coordinate", name}, {"clue_id", clue_id}}}, {"reveal", *reveal}},
             index + 1);
  });

  server.Route("POST", "/api/events", [&app](const HttpServerRequest& req, HttpServerResponse& res) {
    auto p = app.RequireSession(req);
    if (!p.ok()) return App::Fail(res, 401, p.status());
    auto body = App::JsonBody(req);
    if (!body.ok()) return App::Fail(res, body.status());
    auto list = body->find("events");
    if (list == body->end() || !list->is_array() || list->size() > kMaxEventsPerRequest)
      return App::Fail(res, 400,
                       Status::InvalidArgument("not a list of at most 100 events", "request body field events",
                                               "[{\"type\": \"blur\", \"t\": 1234.5}, ...]"));
    std::vector<store::StudyEvent> events;
    for (const Json& e : *list) {
      const std::string type = e.is_object() ? StringMember(e, "type") : "";
      auto t = e.is_object() ? e.find("t") : e.end();
      if (!kEventTypes.count(type) || t == e.end() || !t->is_number() || t->get<double>() < 0)
        return App::Fail(res, 400,
                         Status::InvalidArgument("event " + QuoteJson(e), "request body field events",
                                                 "{\"type\": blur|focus|hidden|visible, \"t\": ms >= 0}"));
      events.push_back({p->id, type, t->get<double>(), ""});
    }
    if (Status st = app.study_store().AddEvents(p->id, events); !st.ok()) return App::Fail(res, st);
    res.SetJson(201, {{"recorded", events.size()}});
  });

  server.Route("GET", "/api/admin/export", [&app](const HttpServerRequest& req, HttpServerResponse& res) {
    if (Status admin = app.RequireAdmin(req); !admin.ok()) return App::Fail(res, 403, admin);
    auto exported = ExportHumans(app.study_store(), app.vocabulary());
    if (!exported.ok()) return App::Fail(res, exported.status());
    res.Set(200, std::move(exported->csv), "text/csv; charset=utf-8");
  });
  return Status::Ok();
}

}  // namespace visalign::server
