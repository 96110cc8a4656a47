// What the SQLite and PostgreSQL study stores share (internal to the store module), so both return
// the same rows in the same order and decide the same: the columns every read selects and the
// order it returns, how a row becomes a Participant, answer, event or record (JSON columns parsed
// one way), the user ids handed out, and what an insert that met a unique key means.
#pragma once

#include <cstdint>
#include <string>

#include "visalign/core/json.h"
#include "visalign/store/study_store.h"

namespace visalign::store {

// A fresh random (version 4) UUID: a participant's public user id.
std::string RandomUuid();

// A JSON column as stored (dump()); null if it does not parse.
Json JsonColumn(const std::string& text);

// What each read selects (the readers below take the columns in this order) and from where. The
// ids are the order of acceptance: participants, answers, events and records are returned by id
// (AnswersOf by item), never by text.
inline constexpr char kSelectParticipants[] =
    "SELECT id, user_id, created_at, language, gender, age_range, colorblind, screen_score, screen, url_params, "
    "metadata, completed_at FROM participants";
inline constexpr char kSelectAnswers[] =
    "SELECT a.participant, p.user_id, a.item, a.clue_id, a.word, a.category, a.coordinate, a.timestamp, a.client_id "
    "FROM hues_answers a JOIN participants p ON p.id = a.participant";
inline constexpr char kSelectEvents[] = "SELECT participant, type, t, created_at FROM events";
inline constexpr char kSelectRecords[] =
    "SELECT r.kind, r.participant, p.user_id, r.client_id, r.payload, r.created_at FROM records r "
    "JOIN participants p ON p.id = r.participant";
// Counts(): the totals in StudyCounts order, then records per kind.
inline constexpr char kSelectTotals[] =
    "SELECT (SELECT COUNT(*) FROM participants), (SELECT COUNT(*) FROM participants WHERE language <> ''), "
    "(SELECT COUNT(*) FROM participants WHERE completed_at <> ''), (SELECT COUNT(*) FROM hues_answers), "
    "(SELECT COUNT(*) FROM events)";
inline constexpr char kSelectRecordCounts[] = "SELECT kind, COUNT(*) FROM records GROUP BY kind";

// Row is a result row of either database: Text(col), Int(col), Real(col), IsNull(col).
template <typename Row>
Participant ReadParticipant(const Row& r) {
  Participant p;
  p.id = r.Int(0);
  p.user_id = r.Text(1);
  p.created_at = r.Text(2);
  p.language = r.Text(3);
  p.gender = r.Text(4);
  p.age_range = r.Text(5);
  p.colorblind = r.Text(6);
  if (!r.IsNull(7)) p.screen_score = r.Real(7);
  p.screen = JsonColumn(r.Text(8));
  p.url_params = JsonColumn(r.Text(9));
  p.metadata = JsonColumn(r.Text(10));
  p.completed_at = r.Text(11);
  return p;
}
template <typename Row>
HuesAnswerRow ReadAnswer(const Row& r) {
  return {r.Int(0),  r.Text(1), static_cast<int>(r.Int(2)), static_cast<int>(r.Int(3)), r.Text(4), r.Text(5), r.Text(6),
          r.Text(7), r.Text(8)};
}
template <typename Row>
StudyEvent ReadEvent(const Row& r) {
  return {r.Int(0), r.Text(1), r.Real(2), r.Text(3)};
}
template <typename Row>
StudyRecord ReadRecord(const Row& r) {
  return {r.Text(0), r.Int(1), r.Text(2), r.Text(3), JsonColumn(r.Text(4)), r.Text(5)};
}
template <typename Row>
StudyCounts ReadTotals(const Row& r) {
  StudyCounts c;
  c.participants = r.Int(0), c.onboarded = r.Int(1), c.completed = r.Int(2), c.answers = r.Int(3), c.events = r.Int(4);
  return c;
}

// An insert that stored `rows` rows: one is new; none met a unique key already there (ON CONFLICT
// DO NOTHING), a replay.
inline Insert InsertOutcome(int64_t rows) { return rows == 1 ? Insert::kAdded : Insert::kDuplicate; }

// SetAssignment on a participant who has items.
Status AssignmentAlreadySet();
// MarkCompleted of an id no participant has.
Status NoParticipant(int64_t participant, const std::string& where);

}  // namespace visalign::store
