// The SQLite study store: one database, study.db, in the store folder, shared by the server's
// threads through one connection behind a mutex.
#include "store/sqlite_study_store.h"

#include <sqlite3.h>

#include <mutex>

#include <fmt/format.h>

#include "store/sqlite_statement.h"
#include "store/study_rows.h"

namespace visalign::store {
namespace {
namespace fs = std::filesystem;

constexpr const char* kDbFileName = "study.db";
constexpr int kSchemaVersion = 1;
constexpr int kBusyTimeoutMs = 30000;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS participants(
  id INTEGER PRIMARY KEY,
  user_id TEXT NOT NULL UNIQUE,
  session_hash TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  consent INTEGER NOT NULL CHECK (consent = 1),
  language TEXT NOT NULL DEFAULT '',
  gender TEXT NOT NULL DEFAULT '',
  age_range TEXT NOT NULL DEFAULT '',
  colorblind TEXT NOT NULL DEFAULT '',
  screen_score REAL,
  screen TEXT NOT NULL DEFAULT 'null',
  url_params TEXT NOT NULL DEFAULT '{}',
  metadata TEXT NOT NULL DEFAULT '{}',
  completed_at TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS assignments(
  participant INTEGER NOT NULL REFERENCES participants(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  clue_id INTEGER NOT NULL,
  PRIMARY KEY (participant, position));
CREATE TABLE IF NOT EXISTS hues_answers(
  id INTEGER PRIMARY KEY,
  participant INTEGER NOT NULL REFERENCES participants(id) ON DELETE CASCADE,
  item INTEGER NOT NULL,
  clue_id INTEGER NOT NULL,
  word TEXT NOT NULL,
  category TEXT NOT NULL,
  coordinate TEXT NOT NULL,
  timestamp TEXT NOT NULL,
  client_id TEXT NOT NULL UNIQUE,
  UNIQUE (participant, item));
CREATE INDEX IF NOT EXISTS hues_answers_by_clue ON hues_answers(clue_id, coordinate);
CREATE TABLE IF NOT EXISTS events(
  id INTEGER PRIMARY KEY,
  participant INTEGER NOT NULL REFERENCES participants(id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  t REAL NOT NULL,
  created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records(
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  participant INTEGER NOT NULL REFERENCES participants(id) ON DELETE CASCADE,
  client_id TEXT NOT NULL,
  payload TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (kind, participant, client_id));
CREATE INDEX IF NOT EXISTS records_by_participant ON records(participant, kind);
)sql";

class SqliteStudyStore final : public StudyStore {
 public:
  explicit SqliteStudyStore(std::string where) : where_(std::move(where)) {}
  ~SqliteStudyStore() override { sqlite3_close_v2(db_); }
  Status Open();

  Result<Participant> AddParticipant(const std::string& session_hash, const Json& url_params) override;
  Result<std::optional<Participant>> FindSession(const std::string& session_hash) override;
  Status UpdateParticipant(const Participant& p) override;
  Result<Participant> MarkCompleted(int64_t participant) override;
  Result<std::vector<Participant>> Participants() override;
  Status SetAssignment(int64_t participant, const std::vector<int>& clue_ids) override;
  Result<std::vector<int>> Assignment(int64_t participant) override;
  Result<std::map<int, int64_t>> AssignmentCounts() override;
  Result<Insert> AddAnswer(const HuesAnswerRow& answer) override;
  Result<std::vector<HuesAnswerRow>> Answers() override;
  Result<std::vector<HuesAnswerRow>> AnswersOf(int64_t participant) override;
  Result<std::map<std::string, int64_t>> CoordinateCounts(int clue_id) override;
  Status AddEvents(int64_t participant, const std::vector<StudyEvent>& events) override;
  Result<std::vector<StudyEvent>> Events(int64_t participant) override;
  Result<Insert> AddRecord(const std::string& kind, int64_t participant, const std::string& client_id,
                           const Json& payload) override;
  Result<std::vector<StudyRecord>> Records(const std::string& kind) override;
  Result<std::vector<StudyRecord>> RecordsOf(const std::string& kind, int64_t participant) override;
  Result<StudyCounts> Counts() override;
  Status Reset() override;

 private:
  Status Exec(const char* sql) { return ExecSql(db_, sql, where_, "a writable, uncorrupted visalign study store"); }
  // Runs `sql` with `bind` applied; how many rows it changed.
  template <typename BindFn>
  Result<int> Change(const char* sql, BindFn&& bind) {
    Stmt s(db_, sql, where_);
    VISALIGN_RETURN_IF_ERROR(s.prepared());
    bind(s);
    VISALIGN_RETURN_IF_ERROR(s.Run());
    return sqlite3_changes(db_);
  }
  // Collects `read(s)` for every row of `sql` with `bind` applied.
  template <typename T, typename BindFn, typename ReadFn>
  Result<std::vector<T>> Query(const char* sql, BindFn&& bind, ReadFn&& read) {
    Stmt s(db_, sql, where_);
    VISALIGN_RETURN_IF_ERROR(s.prepared());
    bind(s);
    std::vector<T> out;
    Status st;
    while (s.Step(st)) out.push_back(read(s));
    if (!st.ok()) return st;
    return out;
  }

  sqlite3* db_ = nullptr;
  const std::string where_;
  std::mutex mu_;
};

Status SqliteStudyStore::Open() {
  if (sqlite3_open_v2(where_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK)
    return Status::IoError("cannot open database", where_, "a writable folder");
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
  VISALIGN_RETURN_IF_ERROR(Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"));
  {
    Stmt v(db_, "PRAGMA user_version", where_);
    VISALIGN_RETURN_IF_ERROR(v.prepared());
    Status st;
    const int64_t version = v.Step(st) ? v.Int(0) : 0;
    VISALIGN_RETURN_IF_ERROR(st);
    if (version > kSchemaVersion)
      return Status::Unsupported(
          fmt::format("study store schema version {} is newer than this visalign's {}", version, kSchemaVersion),
          where_, "a newer visalign, or another store location");
  }
  VISALIGN_RETURN_IF_ERROR(Exec(kSchema));
  return Exec(fmt::format("PRAGMA user_version = {}", kSchemaVersion).c_str());
}

Result<Participant> SqliteStudyStore::AddParticipant(const std::string& session_hash, const Json& url_params) {
  std::lock_guard lock(mu_);
  Participant p;
  p.user_id = RandomUuid();
  p.created_at = NowUtc();
  p.url_params = url_params;
  VISALIGN_RETURN_IF_ERROR(
      Change("INSERT INTO participants(user_id, session_hash, created_at, consent, url_params) VALUES (?, ?, ?, 1, ?)",
             [&](Stmt& s) { s.Bind(p.user_id).Bind(session_hash).Bind(p.created_at).Bind(url_params.dump()); })
          .status());
  p.id = sqlite3_last_insert_rowid(db_);
  return p;
}

Result<std::optional<Participant>> SqliteStudyStore::FindSession(const std::string& session_hash) {
  std::lock_guard lock(mu_);
  const std::string sql = std::string(kSelectParticipants) + " WHERE session_hash = ?";
  VISALIGN_ASSIGN_OR_RETURN(auto rows, Query<Participant>(
                                           sql.c_str(), [&](Stmt& s) { s.Bind(session_hash); }, ReadParticipant<Stmt>));
  if (rows.empty()) return std::optional<Participant>();
  return std::optional<Participant>(std::move(rows.front()));
}

Status SqliteStudyStore::UpdateParticipant(const Participant& p) {
  std::lock_guard lock(mu_);
  return Change(
             "UPDATE participants SET language = ?, gender = ?, age_range = ?, colorblind = ?, screen_score = ?, "
             "screen = ?, metadata = ?, completed_at = ? WHERE id = ?",
             [&](Stmt& s) {
               s.Bind(p.language).Bind(p.gender).Bind(p.age_range).Bind(p.colorblind);
               if (p.screen_score)
                 s.Bind(*p.screen_score);
               else
                 s.Bind(std::optional<int64_t>());
               s.Bind(p.screen.dump()).Bind(p.metadata.dump()).Bind(p.completed_at).Bind(p.id);
             })
      .status();
}

Result<Participant> SqliteStudyStore::MarkCompleted(int64_t participant) {
  std::lock_guard lock(mu_);
  VISALIGN_RETURN_IF_ERROR(
      Change("UPDATE participants SET completed_at = ? WHERE id = ? AND completed_at = ''", [&](Stmt& s) {
        s.Bind(NowUtc()).Bind(participant);
      }).status());
  const std::string sql = std::string(kSelectParticipants) + " WHERE id = ?";
  VISALIGN_ASSIGN_OR_RETURN(auto rows, Query<Participant>(
                                           sql.c_str(), [&](Stmt& s) { s.Bind(participant); }, ReadParticipant<Stmt>));
  if (rows.empty()) return NoParticipant(participant, where_);
  return std::move(rows.front());
}

Result<std::vector<Participant>> SqliteStudyStore::Participants() {
  std::lock_guard lock(mu_);
  const std::string sql = std::string(kSelectParticipants) + " ORDER BY id";
  return Query<Participant>(
      sql.c_str(), [](Stmt&) {}, ReadParticipant<Stmt>);
}

Status SqliteStudyStore::SetAssignment(int64_t participant, const std::vector<int>& clue_ids) {
  std::lock_guard lock(mu_);
  Stmt count(db_, "SELECT COUNT(*) FROM assignments WHERE participant = ?", where_);
  VISALIGN_RETURN_IF_ERROR(count.prepared());
  count.Bind(participant);
  Status st;
  if (count.Step(st) && count.Int(0) > 0) return AssignmentAlreadySet();
  VISALIGN_RETURN_IF_ERROR(st);
  VISALIGN_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  for (size_t i = 0; i < clue_ids.size(); ++i) {
    auto added = Change("INSERT INTO assignments(participant, position, clue_id) VALUES (?, ?, ?)", [&](Stmt& s) {
      s.Bind(participant).Bind(static_cast<int64_t>(i)).Bind(static_cast<int64_t>(clue_ids[i]));
    });
    if (!added.ok()) {
      (void)Exec("ROLLBACK");
      return added.status();
    }
  }
  return Exec("COMMIT");
}

Result<std::vector<int>> SqliteStudyStore::Assignment(int64_t participant) {
  std::lock_guard lock(mu_);
  return Query<int>(
      "SELECT clue_id FROM assignments WHERE participant = ? ORDER BY position", [&](Stmt& s) { s.Bind(participant); },
      [](const Stmt& s) { return static_cast<int>(s.Int(0)); });
}

Result<std::map<int, int64_t>> SqliteStudyStore::AssignmentCounts() {
  std::lock_guard lock(mu_);
  VISALIGN_ASSIGN_OR_RETURN(
      auto rows, (Query<std::pair<int, int64_t>>(
                     "SELECT clue_id, COUNT(*) FROM assignments GROUP BY clue_id", [](Stmt&) {},
                     [](const Stmt& s) { return std::pair<int, int64_t>(static_cast<int>(s.Int(0)), s.Int(1)); })));
  return std::map<int, int64_t>(rows.begin(), rows.end());
}

Result<Insert> SqliteStudyStore::AddAnswer(const HuesAnswerRow& answer) {
  std::lock_guard lock(mu_);
  HuesAnswerRow a = answer;
  if (a.timestamp.empty()) a.timestamp = NowUtc();
  VISALIGN_ASSIGN_OR_RETURN(
      int changed,
      Change(
          "INSERT INTO hues_answers(participant, item, clue_id, word, category, coordinate, timestamp, client_id) "
          "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
          [&](Stmt& s) {
            s.Bind(a.participant).Bind(static_cast<int64_t>(a.item)).Bind(static_cast<int64_t>(a.clue_id)).Bind(a.word);
            s.Bind(a.category).Bind(a.coordinate).Bind(a.timestamp).Bind(a.client_id);
          }));
  return InsertOutcome(changed);
}

Result<std::vector<HuesAnswerRow>> SqliteStudyStore::Answers() {
  std::lock_guard lock(mu_);
  const std::string sql = std::string(kSelectAnswers) + " ORDER BY a.id";
  return Query<HuesAnswerRow>(
      sql.c_str(), [](Stmt&) {}, ReadAnswer<Stmt>);
}

Result<std::vector<HuesAnswerRow>> SqliteStudyStore::AnswersOf(int64_t participant) {
  std::lock_guard lock(mu_);
  const std::string sql = std::string(kSelectAnswers) + " WHERE a.participant = ? ORDER BY a.item";
  return Query<HuesAnswerRow>(
      sql.c_str(), [&](Stmt& s) { s.Bind(participant); }, ReadAnswer<Stmt>);
}

Result<std::map<std::string, int64_t>> SqliteStudyStore::CoordinateCounts(int clue_id) {
  std::lock_guard lock(mu_);
  VISALIGN_ASSIGN_OR_RETURN(auto rows,
                            (Query<std::pair<std::string, int64_t>>(
                                "SELECT coordinate, COUNT(*) FROM hues_answers WHERE clue_id = ? GROUP BY coordinate",
                                [&](Stmt& s) { s.Bind(static_cast<int64_t>(clue_id)); },
                                [](const Stmt& s) { return std::pair<std::string, int64_t>(s.Text(0), s.Int(1)); })));
  return std::map<std::string, int64_t>(rows.begin(), rows.end());
}

Status SqliteStudyStore::AddEvents(int64_t participant, const std::vector<StudyEvent>& events) {
  std::lock_guard lock(mu_);
  const std::string now = NowUtc();
  VISALIGN_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  for (const StudyEvent& e : events) {
    auto added = Change("INSERT INTO events(participant, type, t, created_at) VALUES (?, ?, ?, ?)",
                        [&](Stmt& s) { s.Bind(participant).Bind(e.type).Bind(e.t).Bind(now); });
    if (!added.ok()) {
      (void)Exec("ROLLBACK");
      return added.status();
    }
  }
  return Exec("COMMIT");
}

Result<std::vector<StudyEvent>> SqliteStudyStore::Events(int64_t participant) {
  std::lock_guard lock(mu_);
  const std::string sql = std::string(kSelectEvents) + " WHERE participant = ? ORDER BY id";
  return Query<StudyEvent>(
      sql.c_str(), [&](Stmt& s) { s.Bind(participant); }, ReadEvent<Stmt>);
}

Result<Insert> SqliteStudyStore::AddRecord(const std::string& kind, int64_t participant, const std::string& client_id,
                                           const Json& payload) {
  std::lock_guard lock(mu_);
  VISALIGN_ASSIGN_OR_RETURN(
      int changed,
      Change("INSERT INTO records(kind, participant, client_id, payload, created_at) VALUES (?, ?, ?, ?, ?) "
             "ON CONFLICT DO NOTHING",
             [&](Stmt& s) { s.Bind(kind).Bind(participant).Bind(client_id).Bind(payload.dump()).Bind(NowUtc()); }));
  return InsertOutcome(changed);
}

Result<std::vector<StudyRecord>> SqliteStudyStore::Records(const std::string& kind) {
  std::lock_guard lock(mu_);
  const std::string sql = std::string(kSelectRecords) + " WHERE r.kind = ? ORDER BY r.id";
  return Query<StudyRecord>(
      sql.c_str(), [&](Stmt& s) { s.Bind(kind); }, ReadRecord<Stmt>);
}

Result<std::vector<StudyRecord>> SqliteStudyStore::RecordsOf(const std::string& kind, int64_t participant) {
  std::lock_guard lock(mu_);
  const std::string sql = std::string(kSelectRecords) + " WHERE r.kind = ? AND r.participant = ? ORDER BY r.id";
  return Query<StudyRecord>(
      sql.c_str(), [&](Stmt& s) { s.Bind(kind).Bind(participant); }, ReadRecord<Stmt>);
}

Result<StudyCounts> SqliteStudyStore::Counts() {
  std::lock_guard lock(mu_);
  VISALIGN_ASSIGN_OR_RETURN(auto totals, Query<StudyCounts>(
                                             kSelectTotals, [](Stmt&) {}, ReadTotals<Stmt>));
  StudyCounts c = totals.front();
  VISALIGN_ASSIGN_OR_RETURN(auto kinds,
                            (Query<std::pair<std::string, int64_t>>(
                                kSelectRecordCounts, [](Stmt&) {},
                                [](const Stmt& s) { return std::pair<std::string, int64_t>(s.Text(0), s.Int(1)); })));
  c.records = std::map<std::string, int64_t>(kinds.begin(), kinds.end());
  return c;
}

Status SqliteStudyStore::Reset() {
  std::lock_guard lock(mu_);
  return Exec(
      "BEGIN IMMEDIATE; DELETE FROM records; DELETE FROM events; DELETE FROM hues_answers; DELETE FROM assignments; "
      "DELETE FROM participants; COMMIT;");
}

}  // namespace

bool SqliteStudyStoreExists(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / kDbFileName, ec);
}

Result<std::unique_ptr<StudyStore>> OpenSqliteStudyStore(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return Status::IoError("cannot create folder: " + ec.message(), "store location " + dir.string(),
                           "a writable folder");
  auto store = std::make_unique<SqliteStudyStore>((dir / kDbFileName).string());
  VISALIGN_RETURN_IF_ERROR(store->Open());
  return std::unique_ptr<StudyStore>(std::move(store));
}

}  // namespace visalign::store
