// The study store: what `visalign serve` collects from participants, kept beside the run store at
// the same location: in a folder, the SQLite database <folder>/study.db (WAL mode); at a server
// location (postgres://user@host:port/database), tables of that database next to the run store's,
// their schema version in visalign_meta (key study_schema_version). Every statement is
// parameterised. The tables:
//   participants  one per consenting session: who they said they are (language, gender, age band,
//                 self-reported colour-vision deficiency), the colour-vision screen's score kept
//                 apart from the self-report, the recruitment platform's URL parameters and the
//                 browser's session metadata (JSON), and when they completed
//   assignments   the items each participant was given, in order
//   hues_answers  one Hues and Cues answer per (participant, item); its client id is unique, so a
//                 replayed submission is recognised and never stored twice
//   events        what the page reported (tab blur/focus), with the client's time
//   records       a generic table for the other tools (region paintings "regions", ACVA ratings
//                 "acva_rating"): a JSON payload per (kind, participant, client id), unique
// Nothing is stored for a visitor who has not consented: a participant row exists only from the
// consent on. StudyStore is an interface; Open chooses the implementation from the location, and
// both return the same rows in the same order. Every method may be called from many threads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "visalign/core/json.h"
#include "visalign/core/status.h"
#include "visalign/store.h"

namespace visalign::store {

struct Participant {
  int64_t id = 0;                                       // the database's key
  std::string user_id;                                  // public id: the export's userId
  std::string created_at;                               // ISO-8601 UTC, when they consented
  std::string language, gender, age_range, colorblind;  // "" until onboarding
  std::optional<double> screen_score;  // share of screening plates read correctly; none if not screened
  Json screen = nullptr;               // the screen's answers as scored
  Json url_params = Json::object();    // PROLIFIC_PID, STUDY_ID, SESSION_ID, ...
  Json metadata = Json::object();      // user agent, viewport, devicePixelRatio, ...
  std::string completed_at;            // "" until the last item is answered
  bool onboarded() const { return !language.empty(); }
};

struct HuesAnswerRow {
  int64_t participant = 0;
  std::string user_id;  // filled in when read
  int item = 0;         // position in the participant's assignment
  int clue_id = 0;
  std::string word;        // as shown (the participant's language)
  std::string category;    // as published (clueCategory: ANIMAL, COMESTIBLE, FOOD, ...)
  std::string coordinate;  // "C12"
  std::string timestamp;   // ISO-8601 UTC, when the server accepted it
  std::string client_id;   // the page's id for this submission (unique)
};

struct StudyEvent {
  int64_t participant = 0;
  std::string type;  // "blur", "focus", "attention_check", ...
  double t = 0;      // the client's clock, ms since the page loaded
  std::string created_at;
};

struct StudyRecord {
  std::string kind;
  int64_t participant = 0;
  std::string user_id;
  std::string client_id;
  Json payload;
  std::string created_at;
};

// Whether an insert stored a new row or found the same unique key already there (a replay).
enum class Insert { kAdded, kDuplicate };

struct StudyCounts {
  int64_t participants = 0, onboarded = 0, completed = 0, answers = 0, events = 0;
  std::map<std::string, int64_t> records;  // per kind
};

class StudyStore {
 public:
  // Opens the study store at `location` (a folder, created if needed, or a PostgreSQL database;
  // `options.password_env` as for OpenStore), creating its tables on first use. A study schema
  // newer than this visalign's is refused (Unsupported); an unknown scheme is Unsupported at
  // "store location"; an unreachable server or a wrong password is Unavailable, never showing it.
  static Result<std::unique_ptr<StudyStore>> Open(const std::string& location, const StoreOptions& options = {});
  // Whether `location` holds a study store, creating nothing (for commands that must not create
  // one): <folder>/study.db, or the study tables in the database. Errors only for a server that
  // cannot be reached or refuses the user.
  static Result<bool> Exists(const std::string& location, const StoreOptions& options = {});
  virtual ~StudyStore() = default;
  StudyStore(const StudyStore&) = delete;
  StudyStore& operator=(const StudyStore&) = delete;

  // A new consenting participant with session token hash `session_hash` and a fresh user id.
  virtual Result<Participant> AddParticipant(const std::string& session_hash, const Json& url_params) = 0;
  virtual Result<std::optional<Participant>> FindSession(const std::string& session_hash) = 0;
  // Writes the participant's profile, screen, metadata and completion (by id).
  virtual Status UpdateParticipant(const Participant& p) = 0;
  // Sets completed_at to now unless it is set; the participant as stored afterwards.
  virtual Result<Participant> MarkCompleted(int64_t participant) = 0;
  virtual Result<std::vector<Participant>> Participants() = 0;

  // The participant's items (clue ids in order; 0 is free for a caller's own meaning). Set once:
  // InvalidArgument if already set.
  virtual Status SetAssignment(int64_t participant, const std::vector<int>& clue_ids) = 0;
  virtual Result<std::vector<int>> Assignment(int64_t participant) = 0;
  // How many participants were assigned each clue id (ids nobody got are absent).
  virtual Result<std::map<int, int64_t>> AssignmentCounts() = 0;

  // kDuplicate, storing nothing, when the client id or (participant, item) is already there. An
  // empty timestamp is set to now.
  virtual Result<Insert> AddAnswer(const HuesAnswerRow& answer) = 0;
  virtual Result<std::vector<HuesAnswerRow>> Answers() = 0;  // in the order accepted
  virtual Result<std::vector<HuesAnswerRow>> AnswersOf(int64_t participant) = 0;
  // Answers per coordinate for one clue (how earlier players answered it).
  virtual Result<std::map<std::string, int64_t>> CoordinateCounts(int clue_id) = 0;

  virtual Status AddEvents(int64_t participant, const std::vector<StudyEvent>& events) = 0;
  virtual Result<std::vector<StudyEvent>> Events(int64_t participant) = 0;

  // The generic records table: kDuplicate, storing nothing, for a (kind, participant, client id)
  // already there. Records(kind) in the order added.
  virtual Result<Insert> AddRecord(const std::string& kind, int64_t participant, const std::string& client_id,
                                   const Json& payload) = 0;
  virtual Result<std::vector<StudyRecord>> Records(const std::string& kind) = 0;
  virtual Result<std::vector<StudyRecord>> RecordsOf(const std::string& kind, int64_t participant) = 0;

  virtual Result<StudyCounts> Counts() = 0;
  // Deletes every participant and everything they gave; the next participant's id is 1 again.
  virtual Status Reset() = 0;

 protected:
  StudyStore() = default;
};

}  // namespace visalign::store
