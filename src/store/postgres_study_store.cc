// The PostgreSQL study store: the study tables (postgres_schema.cc) in a database, used by the
// server's threads through a pool of connections, each statement on one borrowed for it, so the
// requests of different participants run at once. A replayed answer or record is recognised by the
// tables' unique keys (INSERT ... ON CONFLICT DO NOTHING), whichever connection it comes on.
#include "store/postgres_study_store.h"

#include <map>
#include <optional>
#include <type_traits>
#include <vector>

#include "store/postgres_pool.h"
#include "store/postgres_schema.h"
#include "store/row_semantics.h"
#include "store/study_rows.h"

namespace visalign::store {
namespace {
using pg::Params;

// Enough that a loaded server's statements rarely wait for a connection (docs/performance.md,
// "visalign serve under load"), few enough for several servers on one database.
constexpr size_t kMaxConnections = 8;

// Row `row` of `rows`, read the way study_rows.h's readers read.
class RowOf {
 public:
  RowOf(const pg::Rows& rows, int row) : rows_(rows), row_(row) {}
  std::string Text(int col) const { return rows_.Text(row_, col); }
  int64_t Int(int col) const { return rows_.Int(row_, col); }
  double Real(int col) const { return rows_.Real(row_, col); }
  bool IsNull(int col) const { return rows_.IsNull(row_, col); }

 private:
  const pg::Rows& rows_;
  int row_;
};

template <typename T, typename ReadFn>
std::vector<T> ReadAll(const pg::Rows& rows, ReadFn&& read) {
  std::vector<T> out;
  for (int i = 0; i < rows.size(); ++i) out.push_back(read(RowOf(rows, i)));
  return out;
}

template <typename K>
std::map<K, int64_t> CountsByKey(const pg::Rows& rows) {
  std::map<K, int64_t> out;
  for (int i = 0; i < rows.size(); ++i) {
    if constexpr (std::is_same_v<K, std::string>)
      out[rows.Text(i, 0)] = rows.Int(i, 1);
    else
      out[static_cast<K>(rows.Int(i, 0))] = rows.Int(i, 1);
  }
  return out;
}

class PostgresStudyStore final : public StudyStore {
 public:
  PostgresStudyStore(std::unique_ptr<pg::Pool> pool, std::string where)
      : pool_(std::move(pool)), where_(std::move(where)) {}

  Result<Participant> AddParticipant(const std::string& session_hash, const Json& url_params) override {
    Participant p;
    p.user_id = RandomUuid();
    p.created_at = NowUtc();
    p.url_params = url_params;
    VISALIGN_ASSIGN_OR_RETURN(pg::Rows r,
                              Exec("INSERT INTO participants(user_id, session_hash, created_at, consent, url_params) "
                                   "VALUES ($1, $2, $3, 1, $4) RETURNING id",
                                   Params().Add(p.user_id).Add(session_hash).Add(p.created_at).Add(url_params.dump())));
    p.id = r.Int(0, 0);
    return p;
  }

  Result<std::optional<Participant>> FindSession(const std::string& session_hash) override {
    VISALIGN_ASSIGN_OR_RETURN(
        pg::Rows r, Exec(std::string(kSelectParticipants) + " WHERE session_hash = $1", Params().Add(session_hash)));
    if (r.size() == 0) return std::optional<Participant>();
    return std::optional<Participant>(ReadParticipant(RowOf(r, 0)));
  }

  Status UpdateParticipant(const Participant& p) override {
    Params params;
    params.Add(p.language).Add(p.gender).Add(p.age_range).Add(p.colorblind);
    if (p.screen_score)
      params.Add(*p.screen_score);
    else
      params.Add(std::optional<int64_t>());
    params.Add(p.screen.dump()).Add(p.metadata.dump()).Add(p.completed_at).Add(p.id);
    return Exec(
               "UPDATE participants SET language = $1, gender = $2, age_range = $3, colorblind = $4, "
               "screen_score = $5, screen = $6, metadata = $7, completed_at = $8 WHERE id = $9",
               params)
        .status();
  }

  Result<Participant> MarkCompleted(int64_t participant) override {
    VISALIGN_ASSIGN_OR_RETURN(pg::Pool::Lease db, pool_->Borrow());
    VISALIGN_RETURN_IF_ERROR(db->Exec("UPDATE participants SET completed_at = $1 WHERE id = $2 AND completed_at = ''",
                                      Params().Add(NowUtc()).Add(participant))
                                 .status());
    VISALIGN_ASSIGN_OR_RETURN(
        pg::Rows r, db->Exec((std::string(kSelectParticipants) + " WHERE id = $1").c_str(), Params().Add(participant)));
    if (r.size() == 0) return NoParticipant(participant, where_);
    return ReadParticipant(RowOf(r, 0));
  }

  Result<std::vector<Participant>> Participants() override {
    VISALIGN_ASSIGN_OR_RETURN(pg::Rows r, Exec(std::string(kSelectParticipants) + " ORDER BY id"));
    return ReadAll<Participant>(r, ReadParticipant<RowOf>);
  }

  Status SetAssignment(int64_t participant, const std::vector<int>& clue_ids) override {
    std::vector<std::optional<int64_t>> clues(clue_ids.begin(), clue_ids.end());
    VISALIGN_ASSIGN_OR_RETURN(pg::Pool::Lease db, pool_->Borrow());
    // The participant's row lock keeps two callers from both finding no items.
    return db->Transaction([&]() -> Status {
      VISALIGN_RETURN_IF_ERROR(
          db->Exec("SELECT 1 FROM participants WHERE id = $1 FOR UPDATE", Params().Add(participant)).status());
      VISALIGN_ASSIGN_OR_RETURN(
          pg::Rows has, db->Exec("SELECT COUNT(*) FROM assignments WHERE participant = $1", Params().Add(participant)));
      if (has.Int(0, 0) > 0) return AssignmentAlreadySet();
      return db
          ->Exec(
              "INSERT INTO assignments(participant, position, clue_id) "
              "SELECT $1, w.n - 1, w.clue_id FROM unnest($2::int8[]) WITH ORDINALITY AS w(clue_id, n)",
              Params().Add(participant).AddIntArray(clues))
          .status();
    });
  }

  Result<std::vector<int>> Assignment(int64_t participant) override {
    VISALIGN_ASSIGN_OR_RETURN(
        pg::Rows r,
        Exec("SELECT clue_id FROM assignments WHERE participant = $1 ORDER BY position", Params().Add(participant)));
    return ReadAll<int>(r, [](const RowOf& row) { return static_cast<int>(row.Int(0)); });
  }

  Result<std::map<int, int64_t>> AssignmentCounts() override {
    VISALIGN_ASSIGN_OR_RETURN(pg::Rows r, Exec("SELECT clue_id, COUNT(*) FROM assignments GROUP BY clue_id"));
    return CountsByKey<int>(r);
  }

  Result<Insert> AddAnswer(const HuesAnswerRow& answer) override {
    VISALIGN_ASSIGN_OR_RETURN(
        pg::Rows r,
        Exec("INSERT INTO hues_answers(participant, item, clue_id, word, category, coordinate, timestamp, client_id) "
             "VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING",
             Params()
                 .Add(answer.participant)
                 .Add(int64_t{answer.item})
                 .Add(int64_t{answer.clue_id})
                 .Add(answer.word)
                 .Add(answer.category)
                 .Add(answer.coordinate)
                 .Add(answer.timestamp.empty() ? NowUtc() : answer.timestamp)
                 .Add(answer.client_id)));
    return InsertOutcome(static_cast<int64_t>(r.affected()));
  }

  Result<std::vector<HuesAnswerRow>> Answers() override {
    VISALIGN_ASSIGN_OR_RETURN(pg::Rows r, Exec(std::string(kSelectAnswers) + " ORDER BY a.id"));
    return ReadAll<HuesAnswerRow>(r, ReadAnswer<RowOf>);
  }

  Result<std::vector<HuesAnswerRow>> AnswersOf(int64_t participant) override {
    VISALIGN_ASSIGN_OR_RETURN(
        pg::Rows r,
        Exec(std::string(kSelectAnswers) + " WHERE a.participant = $1 ORDER BY a.item", Params().Add(participant)));
    return ReadAll<HuesAnswerRow>(r, ReadAnswer<RowOf>);
  }

  Result<std::map<std::string, int64_t>> CoordinateCounts(int clue_id) override {
    VISALIGN_ASSIGN_OR_RETURN(pg::Rows r, Exec("SELECT coordinate, COUNT(*) FROM hues_answers WHERE clue_id = $1 "
                                               "GROUP BY coordinate",
                                               Params().Add(int64_t{clue_id})));
    return CountsByKey<std::string>(r);
  }

  Status AddEvents(int64_t participant, const std::vector<StudyEvent>& events) override {
    std::vector<std::string> types;
    std::vector<double> times;
    for (const StudyEvent& e : events) {
      types.push_back(e.type);
      times.push_back(e.t);
    }
    // One statement: all of them or none, in the order given.
    return Exec(
               "INSERT INTO events(participant, type, t, created_at) SELECT $1, w.type, w.t, $4 "
               "FROM unnest($2::text[], $3::float8[]) WITH ORDINALITY AS w(type, t, n) ORDER BY w.n",
               Params().Add(participant).AddTextArray(types).AddRealArray(times).Add(NowUtc()))
        .status();
  }

  Result<std::vector<StudyEvent>> Events(int64_t participant) override {
    VISALIGN_ASSIGN_OR_RETURN(pg::Rows r, Exec(std::string(kSelectEvents) + " WHERE participant = $1 ORDER BY id",
                                               Params().Add(participant)));
    return ReadAll<StudyEvent>(r, ReadEvent<RowOf>);
  }

  Result<Insert> AddRecord(const std::string& kind, int64_t participant, const std::string& client_id,
                           const Json& payload) override {
    VISALIGN_ASSIGN_OR_RETURN(
        pg::Rows r, Exec("INSERT INTO records(kind, participant, client_id, payload, created_at) "
                         "VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
                         Params().Add(kind).Add(participant).Add(client_id).Add(payload.dump()).Add(NowUtc())));
    return InsertOutcome(static_cast<int64_t>(r.affected()));
  }

  Result<std::vector<StudyRecord>> Records(const std::string& kind) override {
    VISALIGN_ASSIGN_OR_RETURN(
        pg::Rows r, Exec(std::string(kSelectRecords) + " WHERE r.kind = $1 ORDER BY r.id", Params().Add(kind)));
    return ReadAll<StudyRecord>(r, ReadRecord<RowOf>);
  }

  Result<std::vector<StudyRecord>> RecordsOf(const std::string& kind, int64_t participant) override {
    VISALIGN_ASSIGN_OR_RETURN(
        pg::Rows r, Exec(std::string(kSelectRecords) + " WHERE r.kind = $1 AND r.participant = $2 ORDER BY r.id",
                         Params().Add(kind).Add(participant)));
    return ReadAll<StudyRecord>(r, ReadRecord<RowOf>);
  }

  Result<StudyCounts> Counts() override {
    VISALIGN_ASSIGN_OR_RETURN(pg::Rows totals, Exec(kSelectTotals));
    StudyCounts c = ReadTotals(RowOf(totals, 0));
    VISALIGN_ASSIGN_OR_RETURN(pg::Rows kinds, Exec(kSelectRecordCounts));
    c.records = CountsByKey<std::string>(kinds);
    return c;
  }

  Status Reset() override {
    return Exec("TRUNCATE records, events, hues_answers, assignments, participants RESTART IDENTITY").status();
  }

 private:
  // `sql` on a connection borrowed for it.
  Result<pg::Rows> Exec(const std::string& sql, const Params& params = {}) {
    VISALIGN_ASSIGN_OR_RETURN(pg::Pool::Lease db, pool_->Borrow());
    return db->Exec(sql.c_str(), params);
  }

  std::unique_ptr<pg::Pool> pool_;
  const std::string where_;
};

}  // namespace

Result<std::unique_ptr<StudyStore>> OpenPostgresStudyStore(const std::string& location, const StoreOptions& options) {
  const std::string where = DisplayLocation(location);
  VISALIGN_ASSIGN_OR_RETURN(std::string password, pg::PasswordFromEnvironment(options.password_env));
  VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<pg::Pool> pool, pg::Pool::Open(location, password, where, kMaxConnections));
  {
    VISALIGN_ASSIGN_OR_RETURN(pg::Pool::Lease db, pool->Borrow());
    VISALIGN_RETURN_IF_ERROR(PrepareStudySchema(*db, where));
  }
  return std::unique_ptr<StudyStore>(std::make_unique<PostgresStudyStore>(std::move(pool), where));
}

Result<bool> PostgresStudyStoreExists(const std::string& location, const StoreOptions& options) {
  const std::string where = DisplayLocation(location);
  VISALIGN_ASSIGN_OR_RETURN(std::string password, pg::PasswordFromEnvironment(options.password_env));
  VISALIGN_ASSIGN_OR_RETURN(std::unique_ptr<pg::Connection> db, pg::Connection::Open(location, password, where));
  return HasStudySchema(*db);
}

}  // namespace visalign::store
