// The study store (visalign/store/study_store.h): one SQLite database, study.db, in the store
// folder, shared by the server's threads through one connection behind a mutex.
#include "visalign/store/study_store.h"

#include <sqlite3.h>

#include <mutex>
#include <random>

#include <fmt/format.h>

#include "store/sqlite_statement.h"
#include "visalign/core/untrusted.h"

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

// A random (version 4) UUID.
std::string RandomUuid() {
  static thread_local std::mt19937_64 rng{std::random_device{}() ^ (static_cast<uint64_t>(std::random_device{}()) << 32)};
  uint64_t hi = rng(), lo = rng();
  hi = (hi & ~0xF000ull) | 0x4000ull;                                   // version 4
  lo = (lo & ~(0xC000ull << 48)) | (0x8000ull << 48);                   // variant 10
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xFFFF, hi & 0xFFFF, lo >> 48,
                     lo & 0xFFFFFFFFFFFFull);
}

nlohmann::json JsonColumn(const std::string& text) {
  auto parsed = ParseJson(text);
  return parsed.ok() ? *parsed : nlohmann::json();
}

constexpr const char* kParticipantColumns =
    "id, user_id, created_at, language, gender, age_range, colorblind, screen_score, screen, url_params, metadata, "
    "completed_at FROM participants";

Participant ReadParticipant(const Stmt& s) {
  Participant p;
  p.id = s.Int(0);
  p.user_id = s.Text(1);
  p.created_at = s.Text(2);
  p.language = s.Text(3);
  p.gender = s.Text(4);
  p.age_range = s.Text(5);
  p.colorblind = s.Text(6);
  if (!s.IsNull(7)) p.screen_score = s.Real(7);
  p.screen = JsonColumn(s.Text(8));
  p.url_params = JsonColumn(s.Text(9));
  p.metadata = JsonColumn(s.Text(10));
  p.completed_at = s.Text(11);
  return p;
}

constexpr const char* kAnswerColumns =
    "SELECT a.participant, p.user_id, a.item, a.clue_id, a.word, a.category, a.coordinate, a.timestamp, a.client_id "
    "FROM hues_answers a JOIN participants p ON p.id = a.participant";

HuesAnswerRow ReadAnswer(const Stmt& s) {
  return {s.Int(0), s.Text(1), static_cast<int>(s.Int(2)), static_cast<int>(s.Int(3)), s.Text(4), s.Text(5),
          s.Text(6), s.Text(7), s.Text(8)};
}

StudyRecord ReadRecord(const Stmt& s) {
  return {s.Text(0), s.Int(1), s.Text(2), s.Text(3), JsonColumn(s.Text(4)), s.Text(5)};
}

}  // namespace

struct StudyStore::Impl {
  sqlite3* db = nullptr;
  std::string where;
  std::mutex mu;
  ~Impl() { sqlite3_close_v2(db); }

  Status Exec(const char* sql) { return ExecSql(db, sql, where, "a writable, uncorrupted visalign study store"); }
  // Runs `sql` with `bind` applied; how many rows it changed.
  template <typename BindFn>
  Result<int> Change(const char* sql, BindFn&& bind) {
    Stmt s(db, sql, where);
    VISALIGN_RETURN_IF_ERROR(s.prepared());
    bind(s);
    VISALIGN_RETURN_IF_ERROR(s.Run());
    return sqlite3_changes(db);
  }
  // Collects `read(s)` for every row of `sql` with `bind` applied.
  template <typename T, typename BindFn, typename ReadFn>
  Result<std::vector<T>> Query(const char* sql, BindFn&& bind, ReadFn&& read) {
    Stmt s(db, sql, where);
    VISALIGN_RETURN_IF_ERROR(s.prepared());
    bind(s);
    std::vector<T> out;
    Status st;
    while (s.Step(st)) out.push_back(read(s));
    if (!st.ok()) return st;
    return out;
  }
};

StudyStore::StudyStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StudyStore::~StudyStore() = default;

bool StudyStore::Exists(const std::string& location) {
  std::error_code ec;
  return location.find("://") == std::string::npos && fs::is_regular_file(fs::path(location) / kDbFileName, ec);
}

Result<std::unique_ptr<StudyStore>> StudyStore::Open(const std::string& location) {
  const size_t scheme = location.find("://");
  if (scheme != std::string::npos)
    return Status::Unsupported("the study store is SQLite only; scheme \"" + location.substr(0, scheme) + "\"",
                               "store location", "a folder (the study store is kept in <folder>/study.db)");
  std::error_code ec;
  fs::create_directories(location, ec);
  if (ec) return Status::IoError("cannot create folder: " + ec.message(), "store location " + location, "a writable folder");
  auto impl = std::make_unique<Impl>();
  impl->where = (fs::path(location) / kDbFileName).string();
  if (sqlite3_open_v2(impl->where.c_str(), &impl->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK)
    return Status::IoError("cannot open database", impl->where, "a writable folder");
  sqlite3_busy_timeout(impl->db, kBusyTimeoutMs);
  VISALIGN_RETURN_IF_ERROR(impl->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"));
  {
    Stmt v(impl->db, "PRAGMA user_version", impl->where);
    VISALIGN_RETURN_IF_ERROR(v.prepared());
    Status st;
    const int64_t version = v.Step(st) ? v.Int(0) : 0;
    VISALIGN_RETURN_IF_ERROR(st);
    if (version > kSchemaVersion)
      return Status::Unsupported(fmt::format("study store schema {} is newer than this visalign's {}", version, kSchemaVersion),
                                 impl->where, "a newer visalign");
  }
  VISALIGN_RETURN_IF_ERROR(impl->Exec(kSchema));
  VISALIGN_RETURN_IF_ERROR(impl->Exec(fmt::format("PRAGMA user_version = {}", kSchemaVersion).c_str()));
  return std::unique_ptr<StudyStore>(new StudyStore(std::move(impl)));
}

Result<Participant> StudyStore::AddParticipant(const std::string& session_hash, const nlohmann::json& url_params) {
  std::lock_guard lock(impl_->mu);
  Participant p;
  p.user_id = RandomUuid();
  p.created_at = NowUtc();
  p.url_params = url_params;
  VISALIGN_RETURN_IF_ERROR(impl_->Change(
      "INSERT INTO participants(user_id, session_hash, created_at, consent, url_params) VALUES (?, ?, ?, 1, ?)",
      [&](Stmt& s) { s.Bind(p.user_id).Bind(session_hash).Bind(p.created_at).Bind(url_params.dump()); }).status());
  p.id = sqlite3_last_insert_rowid(impl_->db);
  return p;
}

Result<std::optional<Participant>> StudyStore::FindSession(const std::string& session_hash) {
  std::lock_guard lock(impl_->mu);
  const std::string sql = std::string("SELECT ") + kParticipantColumns + " WHERE session_hash = ?";
  VISALIGN_ASSIGN_OR_RETURN(auto rows, impl_->Query<Participant>(sql.c_str(), [&](Stmt& s) { s.Bind(session_hash); },
                                                                 ReadParticipant));
  if (rows.empty()) return std::optional<Participant>();
  return std::optional<Participant>(std::move(rows.front()));
}

Status StudyStore::UpdateParticipant(const Participant& p) {
  std::lock_guard lock(impl_->mu);
  return impl_->Change(
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

Result<Participant> StudyStore::MarkCompleted(int64_t participant) {
  std::lock_guard lock(impl_->mu);
  VISALIGN_RETURN_IF_ERROR(impl_->Change("UPDATE participants SET completed_at = ? WHERE id = ? AND completed_at = ''",
                                         [&](Stmt& s) { s.Bind(NowUtc()).Bind(participant); }).status());
  const std::string sql = std::string("SELECT ") + kParticipantColumns + " WHERE id = ?";
  VISALIGN_ASSIGN_OR_RETURN(auto rows, impl_->Query<Participant>(sql.c_str(), [&](Stmt& s) { s.Bind(participant); },
                                                                 ReadParticipant));
  if (rows.empty()) return Status::NotFound("no participant " + std::to_string(participant), impl_->where);
  return std::move(rows.front());
}

Result<std::vector<Participant>> StudyStore::Participants() {
  std::lock_guard lock(impl_->mu);
  const std::string sql = std::string("SELECT ") + kParticipantColumns + " ORDER BY id";
  return impl_->Query<Participant>(sql.c_str(), [](Stmt&) {}, ReadParticipant);
}

Status StudyStore::SetAssignment(int64_t participant, const std::vector<int>& clue_ids) {
  std::lock_guard lock(impl_->mu);
  Stmt count(impl_->db, "SELECT COUNT(*) FROM assignments WHERE participant = ?", impl_->where);
  VISALIGN_RETURN_IF_ERROR(count.prepared());
  count.Bind(participant);
  Status st;
  if (count.Step(st) && count.Int(0) > 0)
    return Status::InvalidArgument("the participant already has items", "assignment", "one assignment per participant");
  VISALIGN_RETURN_IF_ERROR(st);
  VISALIGN_RETURN_IF_ERROR(impl_->Exec("BEGIN IMMEDIATE"));
  for (size_t i = 0; i < clue_ids.size(); ++i) {
    auto added = impl_->Change("INSERT INTO assignments(participant, position, clue_id) VALUES (?, ?, ?)", [&](Stmt& s) {
      s.Bind(participant).Bind(static_cast<int64_t>(i)).Bind(static_cast<int64_t>(clue_ids[i]));
    });
    if (!added.ok()) {
      (void)impl_->Exec("ROLLBACK");
      return added.status();
    }
  }
  return impl_->Exec("COMMIT");
}

Result<std::vector<int>> StudyStore::Assignment(int64_t participant) {
  std::lock_guard lock(impl_->mu);
  return impl_->Query<int>("SELECT clue_id FROM assignments WHERE participant = ? ORDER BY position",
                           [&](Stmt& s) { s.Bind(participant); }, [](const Stmt& s) { return static_cast<int>(s.Int(0)); });
}

Result<std::map<int, int64_t>> StudyStore::AssignmentCounts() {
  std::lock_guard lock(impl_->mu);
  VISALIGN_ASSIGN_OR_RETURN(auto rows, (impl_->Query<std::pair<int, int64_t>>(
                                           "SELECT clue_id, COUNT(*) FROM assignments GROUP BY clue_id", [](Stmt&) {},
                                           [](const Stmt& s) { return std::pair<int, int64_t>(static_cast<int>(s.Int(0)), s.Int(1)); })));
  return std::map<int, int64_t>(rows.begin(), rows.end());
}

Result<Insert> StudyStore::AddAnswer(const HuesAnswerRow& answer) {
  std::lock_guard lock(impl_->mu);
  HuesAnswerRow a = answer;
  if (a.timestamp.empty()) a.timestamp = NowUtc();
  VISALIGN_ASSIGN_OR_RETURN(int changed, impl_->Change(
      "INSERT INTO hues_answers(participant, item, clue_id, word, category, coordinate, timestamp, client_id) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
      [&](Stmt& s) {
        s.Bind(a.participant).Bind(static_cast<int64_t>(a.item)).Bind(static_cast<int64_t>(a.clue_id)).Bind(a.word);
        s.Bind(a.category).Bind(a.coordinate).Bind(a.timestamp).Bind(a.client_id);
      }));
  return changed == 1 ? Insert::kAdded : Insert::kDuplicate;
}

Result<std::vector<HuesAnswerRow>> StudyStore::Answers() {
  std::lock_guard lock(impl_->mu);
  const std::string sql = std::string(kAnswerColumns) + " ORDER BY a.id";
  return impl_->Query<HuesAnswerRow>(sql.c_str(), [](Stmt&) {}, ReadAnswer);
}

Result<std::vector<HuesAnswerRow>> StudyStore::AnswersOf(int64_t participant) {
  std::lock_guard lock(impl_->mu);
  const std::string sql = std::string(kAnswerColumns) + " WHERE a.participant = ? ORDER BY a.item";
  return impl_->Query<HuesAnswerRow>(sql.c_str(), [&](Stmt& s) { s.Bind(participant); }, ReadAnswer);
}

Result<std::map<std::string, int64_t>> StudyStore::CoordinateCounts(int clue_id) {
  std::lock_guard lock(impl_->mu);
  VISALIGN_ASSIGN_OR_RETURN(
      auto rows, (impl_->Query<std::pair<std::string, int64_t>>(
                     "SELECT coordinate, COUNT(*) FROM hues_answers WHERE clue_id = ? GROUP BY coordinate",
                     [&](Stmt& s) { s.Bind(static_cast<int64_t>(clue_id)); },
                     [](const Stmt& s) { return std::pair<std::string, int64_t>(s.Text(0), s.Int(1)); })));
  return std::map<std::string, int64_t>(rows.begin(), rows.end());
}

Status StudyStore::AddEvents(int64_t participant, const std::vector<StudyEvent>& events) {
  std::lock_guard lock(impl_->mu);
  const std::string now = NowUtc();
  VISALIGN_RETURN_IF_ERROR(impl_->Exec("BEGIN IMMEDIATE"));
  for (const StudyEvent& e : events) {
    auto added = impl_->Change("INSERT INTO events(participant, type, t, created_at) VALUES (?, ?, ?, ?)",
                               [&](Stmt& s) { s.Bind(participant).Bind(e.type).Bind(e.t).Bind(now); });
    if (!added.ok()) {
      (void)impl_->Exec("ROLLBACK");
      return added.status();
    }
  }
  return impl_->Exec("COMMIT");
}

Result<std::vector<StudyEvent>> StudyStore::Events(int64_t participant) {
  std::lock_guard lock(impl_->mu);
  return impl_->Query<StudyEvent>("SELECT participant, type, t, created_at FROM events WHERE participant = ? ORDER BY id",
                                  [&](Stmt& s) { s.Bind(participant); },
                                  [](const Stmt& s) { return StudyEvent{s.Int(0), s.Text(1), s.Real(2), s.Text(3)}; });
}

Result<Insert> StudyStore::AddRecord(const std::string& kind, int64_t participant, const std::string& client_id,
                                     const nlohmann::json& payload) {
  std::lock_guard lock(impl_->mu);
  VISALIGN_ASSIGN_OR_RETURN(int changed, impl_->Change(
      "INSERT INTO records(kind, participant, client_id, payload, created_at) VALUES (?, ?, ?, ?, ?) "
      "ON CONFLICT DO NOTHING",
      [&](Stmt& s) { s.Bind(kind).Bind(participant).Bind(client_id).Bind(payload.dump()).Bind(NowUtc()); }));
  return changed == 1 ? Insert::kAdded : Insert::kDuplicate;
}

Result<std::vector<StudyRecord>> StudyStore::Records(const std::string& kind) {
  std::lock_guard lock(impl_->mu);
  return impl_->Query<StudyRecord>(
      "SELECT r.kind, r.participant, p.user_id, r.client_id, r.payload, r.created_at FROM records r "
      "JOIN participants p ON p.id = r.participant WHERE r.kind = ? ORDER BY r.id",
      [&](Stmt& s) { s.Bind(kind); }, ReadRecord);
}

Result<std::vector<StudyRecord>> StudyStore::RecordsOf(const std::string& kind, int64_t participant) {
  std::lock_guard lock(impl_->mu);
  return impl_->Query<StudyRecord>(
      "SELECT r.kind, r.participant, p.user_id, r.client_id, r.payload, r.created_at FROM records r "
      "JOIN participants p ON p.id = r.participant WHERE r.kind = ? AND r.participant = ? ORDER BY r.id",
      [&](Stmt& s) { s.Bind(kind).Bind(participant); }, ReadRecord);
}

Result<StudyCounts> StudyStore::Counts() {
  std::lock_guard lock(impl_->mu);
  StudyCounts c;
  VISALIGN_ASSIGN_OR_RETURN(
      auto totals, (impl_->Query<std::vector<int64_t>>(
                       "SELECT (SELECT COUNT(*) FROM participants), (SELECT COUNT(*) FROM participants WHERE language != ''), "
                       "(SELECT COUNT(*) FROM participants WHERE completed_at != ''), (SELECT COUNT(*) FROM hues_answers), "
                       "(SELECT COUNT(*) FROM events)",
                       [](Stmt&) {}, [](const Stmt& s) { return std::vector<int64_t>{s.Int(0), s.Int(1), s.Int(2), s.Int(3), s.Int(4)}; })));
  const std::vector<int64_t>& t = totals.front();
  c.participants = t[0], c.onboarded = t[1], c.completed = t[2], c.answers = t[3], c.events = t[4];
  VISALIGN_ASSIGN_OR_RETURN(auto kinds, (impl_->Query<std::pair<std::string, int64_t>>(
                                            "SELECT kind, COUNT(*) FROM records GROUP BY kind", [](Stmt&) {},
                                            [](const Stmt& s) { return std::pair<std::string, int64_t>(s.Text(0), s.Int(1)); })));
  c.records = std::map<std::string, int64_t>(kinds.begin(), kinds.end());
  return c;
}

Status StudyStore::Reset() {
  std::lock_guard lock(impl_->mu);
  return impl_->Exec(
      "BEGIN IMMEDIATE; DELETE FROM records; DELETE FROM events; DELETE FROM hues_answers; DELETE FROM assignments; "
      "DELETE FROM participants; COMMIT;");
}

}  // namespace visalign::store
