// One row per participant of a study: ids, profile, screen, attention check, progress, metadata.
#include "visalign/server/participants_export.h"

#include <map>

#include "visalign/core/io.h"
#include "visalign/server/humans_export.h"

namespace visalign::server {
namespace {

// The recruitment platforms' URL parameters the page captures (Prolific, then MTurk).
const std::vector<std::string> kUrlParams = {"PROLIFIC_PID", "STUDY_ID",     "SESSION_ID",
                                             "workerId",     "assignmentId", "hitId"};

// A metadata or parameter value as one CSV field: a string as it is, [w, h] as "WxH", a number or
// a boolean as JSON writes it, anything else (an object the page never sends) as JSON text.
std::string Field(const Json& doc, const std::string& key) {
  if (!doc.is_object()) return "";
  auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_array() && it->size() == 2 && (*it)[0].is_number() && (*it)[1].is_number())
    return (*it)[0].dump() + "x" + (*it)[1].dump();
  return it->dump();
}

std::string Attention(const ParticipantRow& r) {
  if (!r.attention_passed) return "none";
  return *r.attention_passed ? "passed" : "failed";
}

// The columns after the URL parameters: the page's session metadata (game.js screenMetadata).
const std::vector<std::pair<std::string, std::string>> kMetadata = {{"user_agent", "user_agent"},
                                                                    {"viewport", "viewport"},
                                                                    {"screen", "screen"},
                                                                    {"device_pixel_ratio", "device_pixel_ratio"},
                                                                    {"color_gamut", "color_gamut"},
                                                                    {"dynamic_range", "dynamic_range"},
                                                                    {"browser_language", "language"}};

}  // namespace

Result<std::vector<ParticipantRow>> ExportParticipants(store::StudyStore& study) {
  VISALIGN_ASSIGN_OR_RETURN(std::vector<store::Participant> participants, study.Participants());
  VISALIGN_ASSIGN_OR_RETURN(std::vector<store::HuesAnswerRow> answers, study.Answers());
  VISALIGN_ASSIGN_OR_RETURN(std::vector<store::StudyRecord> checks, study.Records(kAttentionCheckRecord));
  std::map<int64_t, size_t> answered;
  for (const store::HuesAnswerRow& a : answers) ++answered[a.participant];
  std::map<int64_t, const store::StudyRecord*> check_of;
  for (const store::StudyRecord& c : checks) check_of.emplace(c.participant, &c);
  std::vector<ParticipantRow> rows;
  for (store::Participant& p : participants) {
    ParticipantRow row;
    row.colorblind = p.onboarded() ? ExportedColorblind(p) : "";
    if (auto c = check_of.find(p.id); c != check_of.end()) {
      const Json& payload = c->second->payload;
      const auto passed = payload.is_object() ? payload.find("passed") : payload.end();
      row.attention_passed = passed != payload.end() && passed->is_boolean() && passed->get<bool>();
      row.attention_expected = Field(payload, "expected");
      row.attention_answer = Field(payload, "coordinate");
    }
    VISALIGN_ASSIGN_OR_RETURN(std::vector<int> items, study.Assignment(p.id));
    VISALIGN_ASSIGN_OR_RETURN(std::vector<store::StudyEvent> events, study.Events(p.id));
    row.items = items.size();
    row.answers = answered[p.id];
    row.events = events.size();
    row.participant = std::move(p);
    rows.push_back(std::move(row));
  }
  return rows;
}

const std::vector<std::string>& ParticipantsCsvHeader() {
  static const std::vector<std::string> kHeader = [] {
    std::vector<std::string> h = {
        "userId",          "consented_at",        "completed_at",     "language",      "gender",
        "ageRange",        "colorblind_reported", "plate_score",      "plate_control", "colorblind",
        "attention_check", "attention_expected",  "attention_answer", "items",         "answers",
        "events"};
    h.insert(h.end(), kUrlParams.begin(), kUrlParams.end());
    for (const auto& [column, key] : kMetadata) h.push_back(column);
    return h;
  }();
  return kHeader;
}

std::string ParticipantsCsv(const std::vector<ParticipantRow>& rows) {
  std::string csv;
  for (const std::string& h : ParticipantsCsvHeader()) csv += (csv.empty() ? "" : ",") + CsvField(h);
  csv += "\n";
  for (const ParticipantRow& r : rows) {
    const store::Participant& p = r.participant;
    std::vector<std::string> fields = {p.user_id,
                                       p.created_at,
                                       p.completed_at,
                                       p.language,
                                       p.gender,
                                       p.age_range,
                                       p.colorblind,
                                       p.screen_score ? Json(*p.screen_score).dump() : "",
                                       Field(p.screen, "control_correct"),
                                       r.colorblind,
                                       Attention(r),
                                       r.attention_expected,
                                       r.attention_answer,
                                       std::to_string(r.items),
                                       std::to_string(r.answers),
                                       std::to_string(r.events)};
    for (const std::string& param : kUrlParams) fields.push_back(Field(p.url_params, param));
    for (const auto& [column, key] : kMetadata) fields.push_back(Field(p.metadata, key));
    for (size_t i = 0; i < fields.size(); ++i) csv += (i ? "," : "") + CsvField(fields[i]);
    csv += "\n";
  }
  return csv;
}

Json ParticipantsJson(const std::vector<ParticipantRow>& rows) {
  Json list = Json::array();
  for (const ParticipantRow& r : rows) {
    const store::Participant& p = r.participant;
    list.push_back({{"user_id", p.user_id},
                    {"consented_at", p.created_at},
                    {"completed_at", p.completed_at.empty() ? Json() : Json(p.completed_at)},
                    {"language", p.language},
                    {"gender", p.gender},
                    {"age_range", p.age_range},
                    {"colorblind_reported", p.colorblind},
                    {"plate_score", p.screen_score ? Json(*p.screen_score) : Json()},
                    {"screen", p.screen},
                    {"colorblind", r.colorblind},
                    {"attention_check", r.attention_passed ? Json({{"passed", *r.attention_passed},
                                                                   {"expected", r.attention_expected},
                                                                   {"answer", r.attention_answer}})
                                                           : Json()},
                    {"items", r.items},
                    {"answers", r.answers},
                    {"events", r.events},
                    {"url_params", p.url_params},
                    {"metadata", p.metadata}});
  }
  return {{"participants", std::move(list)}};
}

}  // namespace visalign::server
