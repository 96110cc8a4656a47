// The study store, on each implementation (SQLite in a folder, PostgreSQL on a real server this
// program starts): participants from consent on, one assignment each, answers and records that a
// replay cannot store twice, in the order accepted, events, counts and reset, many threads at once;
// then what only one of them does (reaching a server, schema versions, an unknown scheme).
#include "visalign/store/study_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <set>
#include <thread>

#include "testing/dirs.h"
#include "testing/postgres_database_test.h"
#include "testing/postgres_server.h"

namespace visalign::store {
namespace {
namespace fs = std::filesystem;
using visalign::testing::PostgresServer;

// Where a test's study store is: a location of its own for each test.
struct StudyLocation {
  std::string name;  // names the instantiation
  std::function<Result<std::string>(const fs::path& scratch)> make;
};
void PrintTo(const StudyLocation& l, std::ostream* os) { *os << l.name; }

StudyLocation SqliteLocation() {
  return {"sqlite", [](const fs::path& scratch) -> Result<std::string> { return (scratch / "store").string(); }};
}
StudyLocation PostgresLocation() {
  return {"postgres", [](const fs::path&) -> Result<std::string> {
            VISALIGN_ASSIGN_OR_RETURN(PostgresServer * server, PostgresServer::Shared());
            return server->CreateDatabase();
          }};
}

class StudyStoreContract : public ::testing::TestWithParam<StudyLocation> {
 protected:
  void SetUp() override {
    auto location = GetParam().make(scratch_.path());
    ASSERT_TRUE(location.ok()) << location.status().ToString();
    location_ = *location;
    store_ = Open();
    ASSERT_NE(store_, nullptr);
  }
  // Another connection to the test's store.
  std::unique_ptr<StudyStore> Open() const {
    auto opened = StudyStore::Open(location_);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(*opened) : nullptr;
  }
  HuesAnswerRow Answer(int64_t participant, int item, int clue, const std::string& cell, const std::string& client) {
    return {participant, "", item, clue, "SALMON", "ANIMAL", cell, "", client};
  }

  visalign::testing::TempDir scratch_;
  std::string location_;
  std::unique_ptr<StudyStore> store_;
};

TEST_P(StudyStoreContract, AParticipantIsFoundByTheirSessionAndKeepsTheirProfile) {
  auto p = store_->AddParticipant("hash-1", {{"PROLIFIC_PID", "abc"}});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->user_id.size(), 36u);  // a UUID
  EXPECT_FALSE(p->onboarded());
  EXPECT_FALSE(store_->FindSession("hash-1")->value().screen_score.has_value());
  p->language = "english", p->gender = "female", p->age_range = "20-29", p->colorblind = "no";
  p->screen_score = 0.1 + 0.2;  // not a short decimal: read back bit for bit
  p->screen = {{"answers", {nullptr, 3}}};
  p->metadata = {{"devicePixelRatio", 2}, {"user_agent", "Mozilla/5.0 \"quoted\" \u00e9"}};
  ASSERT_TRUE(store_->UpdateParticipant(*p).ok());
  auto found = store_->FindSession("hash-1");
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->id, p->id);
  EXPECT_EQ((*found)->user_id, p->user_id);
  EXPECT_EQ((*found)->created_at, p->created_at);
  EXPECT_EQ((*found)->language, "english");
  EXPECT_EQ((*found)->screen_score, 0.1 + 0.2);
  EXPECT_EQ((*found)->screen, p->screen);
  EXPECT_EQ((*found)->url_params["PROLIFIC_PID"], "abc");
  EXPECT_EQ((*found)->metadata, p->metadata);
  EXPECT_TRUE((*found)->completed_at.empty());
  EXPECT_FALSE(store_->FindSession("hash-2")->has_value());
  EXPECT_EQ(store_->AddParticipant("hash-1", {}).status().code(), StatusCode::kIoError)
      << "one participant per session";
}

TEST_P(StudyStoreContract, CompletionIsSetOnceAndAnUnknownParticipantIsNotFound) {
  auto p = store_->AddParticipant("a", {});
  auto done = store_->MarkCompleted(p->id);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_FALSE(done->completed_at.empty());
  EXPECT_EQ(store_->MarkCompleted(p->id)->completed_at, done->completed_at);
  EXPECT_EQ(store_->Counts()->completed, 1);
  EXPECT_EQ(store_->MarkCompleted(p->id + 100).status().code(), StatusCode::kNotFound);
}

TEST_P(StudyStoreContract, ParticipantsAreInTheOrderTheyConsented) {
  std::vector<std::string> users;
  for (const char* hash : {"z", "a", "m"}) users.push_back(store_->AddParticipant(hash, {})->user_id);
  auto all = store_->Participants();
  ASSERT_EQ(all->size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ((*all)[i].user_id, users[i]);
  EXPECT_LT((*all)[0].id, (*all)[1].id);
  EXPECT_LT((*all)[1].id, (*all)[2].id);
}

TEST_P(StudyStoreContract, AssignmentsAreSetOnceAndCountedPerClue) {
  auto a = store_->AddParticipant("a", {}), b = store_->AddParticipant("b", {});
  ASSERT_TRUE(store_->SetAssignment(a->id, {3, 1, 0}).ok());
  ASSERT_TRUE(store_->SetAssignment(b->id, {3}).ok());
  Status again = store_->SetAssignment(a->id, {2});
  EXPECT_EQ(again.code(), StatusCode::kInvalidArgument) << again.ToString();
  EXPECT_EQ(*store_->Assignment(a->id), (std::vector<int>{3, 1, 0}));
  EXPECT_EQ(*store_->Assignment(b->id), (std::vector<int>{3}));
  EXPECT_TRUE(store_->Assignment(b->id + 100)->empty());
  EXPECT_EQ(*store_->AssignmentCounts(), (std::map<int, int64_t>{{0, 1}, {1, 1}, {3, 2}}));
}

TEST_P(StudyStoreContract, AReplayedAnswerOrASecondAnswerToAnItemIsADuplicateAndStoresNothing) {
  auto p = store_->AddParticipant("a", {});
  HuesAnswerRow answer = Answer(p->id, 0, 1, "E11", "c1");
  answer.timestamp = "2025-01-01T00:00:00.000Z";
  EXPECT_EQ(*store_->AddAnswer(answer), Insert::kAdded);
  EXPECT_EQ(*store_->AddAnswer(answer), Insert::kDuplicate);
  EXPECT_EQ(*store_->AddAnswer(Answer(p->id, 0, 1, "A1", "c2")), Insert::kDuplicate) << "the same item";
  EXPECT_EQ(*store_->AddAnswer(Answer(p->id, 1, 2, "A1", "c1")), Insert::kDuplicate) << "the same client id";
  auto answers = store_->Answers();
  ASSERT_EQ(answers->size(), 1u);
  EXPECT_EQ(answers->front().user_id, p->user_id);
  EXPECT_EQ(answers->front().coordinate, "E11");
  EXPECT_EQ(answers->front().timestamp, "2025-01-01T00:00:00.000Z");
  EXPECT_EQ(*store_->CoordinateCounts(1), (std::map<std::string, int64_t>{{"E11", 1}}));
  EXPECT_EQ(store_->Counts()->answers, 1);
}

TEST_P(StudyStoreContract, AnswersAreInTheOrderAcceptedAndPerParticipantByItem) {
  auto a = store_->AddParticipant("a", {}), b = store_->AddParticipant("b", {});
  // Accepted: b item 1, a item 2, b item 0, a item 0 (coordinates sort otherwise).
  ASSERT_EQ(*store_->AddAnswer(Answer(b->id, 1, 7, "P30", "b1")), Insert::kAdded);
  ASSERT_EQ(*store_->AddAnswer(Answer(a->id, 2, 7, "a9", "a2")), Insert::kAdded);
  ASSERT_EQ(*store_->AddAnswer(Answer(b->id, 0, 8, "B2", "b0")), Insert::kAdded);
  ASSERT_EQ(*store_->AddAnswer(Answer(a->id, 0, 7, "A10", "a0")), Insert::kAdded);
  std::vector<std::string> order;
  auto answers = store_->Answers();
  for (const HuesAnswerRow& r : *answers) order.push_back(r.client_id);
  EXPECT_EQ(order, (std::vector<std::string>{"b1", "a2", "b0", "a0"}));
  auto of_b = store_->AnswersOf(b->id);
  ASSERT_EQ(of_b->size(), 2u);
  EXPECT_EQ((*of_b)[0].item, 0);
  EXPECT_EQ((*of_b)[1].item, 1);
  EXPECT_EQ((*of_b)[1].user_id, b->user_id);
  EXPECT_FALSE((*of_b)[0].timestamp.empty()) << "an empty timestamp is set to now";
  EXPECT_EQ(*store_->CoordinateCounts(7), (std::map<std::string, int64_t>{{"A10", 1}, {"P30", 1}, {"a9", 1}}));
  EXPECT_TRUE(store_->CoordinateCounts(99)->empty());
}

TEST_P(StudyStoreContract, RecordsAreUniquePerKindParticipantAndClientIdInTheOrderAdded) {
  auto p = store_->AddParticipant("a", {}), q = store_->AddParticipant("b", {});
  EXPECT_EQ(*store_->AddRecord("regions", p->id, "r1", {{"cells", {1, 2}}}), Insert::kAdded);
  EXPECT_EQ(*store_->AddRecord("regions", p->id, "r1", {{"cells", {3}}}), Insert::kDuplicate);
  EXPECT_EQ(*store_->AddRecord("regions", q->id, "r1", {{"cells", {4}}}), Insert::kAdded);
  EXPECT_EQ(*store_->AddRecord("regions", p->id, "r0", {{"cells", {5}}}), Insert::kAdded);
  EXPECT_EQ(*store_->AddRecord("acva_rating", p->id, "r1", {{"score", 4}}), Insert::kAdded);
  auto regions = store_->Records("regions");
  ASSERT_EQ(regions->size(), 3u);
  EXPECT_EQ((*regions)[0].payload, Json({{"cells", {1, 2}}}));
  EXPECT_EQ((*regions)[0].user_id, p->user_id);
  EXPECT_EQ((*regions)[0].kind, "regions");
  EXPECT_FALSE((*regions)[0].created_at.empty());
  EXPECT_EQ((*regions)[1].user_id, q->user_id);
  EXPECT_EQ((*regions)[2].client_id, "r0");
  auto of_p = store_->RecordsOf("regions", p->id);
  ASSERT_EQ(of_p->size(), 2u);
  EXPECT_EQ((*of_p)[0].client_id, "r1");
  EXPECT_EQ((*of_p)[1].client_id, "r0");
  EXPECT_TRUE(store_->Records("nothing")->empty());
  EXPECT_EQ(store_->Counts()->records, (std::map<std::string, int64_t>{{"acva_rating", 1}, {"regions", 3}}));
}

TEST_P(StudyStoreContract, EventsAreKeptInOrderPerParticipant) {
  auto p = store_->AddParticipant("a", {}), q = store_->AddParticipant("b", {});
  ASSERT_TRUE(store_->AddEvents(p->id, {{p->id, "blur", 1500.25, ""}, {p->id, "focus", 2500, ""}}).ok());
  ASSERT_TRUE(store_->AddEvents(q->id, {{q->id, "hidden", 1, ""}}).ok());
  ASSERT_TRUE(store_->AddEvents(p->id, {{p->id, "blur", 3000, ""}}).ok());
  ASSERT_TRUE(store_->AddEvents(p->id, {}).ok());
  auto events = store_->Events(p->id);
  ASSERT_EQ(events->size(), 3u);
  EXPECT_EQ((*events)[0].type, "blur");
  EXPECT_EQ((*events)[0].t, 1500.25);
  EXPECT_EQ((*events)[0].participant, p->id);
  EXPECT_FALSE((*events)[0].created_at.empty());
  EXPECT_EQ((*events)[1].type, "focus");
  EXPECT_EQ((*events)[2].t, 3000);
  EXPECT_EQ(store_->Counts()->events, 4);
}

TEST_P(StudyStoreContract, CountsSayHowFarParticipantsGot) {
  auto a = store_->AddParticipant("a", {});
  auto b = store_->AddParticipant("b", {});
  ASSERT_TRUE(store_->AddParticipant("c", {}).ok());
  b->language = "english";
  ASSERT_TRUE(store_->UpdateParticipant(*b).ok());
  ASSERT_TRUE(store_->MarkCompleted(a->id).ok());
  ASSERT_EQ(*store_->AddAnswer(Answer(a->id, 0, 1, "A1", "c1")), Insert::kAdded);
  auto c = store_->Counts();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->participants, 3);
  EXPECT_EQ(c->onboarded, 1);
  EXPECT_EQ(c->completed, 1);
  EXPECT_EQ(c->answers, 1);
  EXPECT_EQ(c->events, 0);
  EXPECT_TRUE(c->records.empty());
}

TEST_P(StudyStoreContract, ResetDeletesEverythingAndIdsStartAgain) {
  auto p = store_->AddParticipant("a", {});
  ASSERT_TRUE(store_->AddParticipant("b", {}).ok());
  ASSERT_TRUE(store_->SetAssignment(p->id, {1, 2}).ok());
  ASSERT_EQ(*store_->AddAnswer(Answer(p->id, 0, 1, "A1", "c1")), Insert::kAdded);
  ASSERT_TRUE(store_->AddEvents(p->id, {{p->id, "blur", 1, ""}}).ok());
  ASSERT_EQ(*store_->AddRecord("regions", p->id, "r1", {}), Insert::kAdded);
  ASSERT_TRUE(store_->Reset().ok());
  auto c = store_->Counts();
  EXPECT_EQ(c->participants, 0);
  EXPECT_EQ(c->answers, 0);
  EXPECT_EQ(c->events, 0);
  EXPECT_TRUE(c->records.empty());
  EXPECT_TRUE(store_->AssignmentCounts()->empty());
  EXPECT_FALSE(store_->FindSession("a")->has_value());
  EXPECT_EQ(store_->AddParticipant("a", {})->id, 1) << "completion codes go by id";
  EXPECT_EQ(*store_->AddAnswer(Answer(1, 0, 1, "A1", "c1")), Insert::kAdded) << "a client id from before is new again";
}

TEST_P(StudyStoreContract, WhatOneConnectionStoredAnotherReads) {
  auto p = store_->AddParticipant("a", {{"STUDY_ID", "s"}});
  ASSERT_EQ(*store_->AddAnswer(Answer(p->id, 0, 1, "A1", "c1")), Insert::kAdded);
  auto other = Open();
  ASSERT_NE(other, nullptr);
  EXPECT_EQ((*other->FindSession("a"))->user_id, p->user_id);
  EXPECT_EQ(*other->AddAnswer(Answer(p->id, 0, 1, "A1", "c1")), Insert::kDuplicate);
  EXPECT_EQ(other->Answers()->size(), 1u);
}

TEST_P(StudyStoreContract, ManyThreadsAddingAnswersAtOnceLoseNoneAndDoubleNone) {
  constexpr int kThreads = 8, kPlayersPerThread = 4, kItems = 10;
  std::atomic<int> added{0}, duplicates{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int n = 0; n < kPlayersPerThread; ++n) {
        auto p = store_->AddParticipant("t" + std::to_string(t) + "-" + std::to_string(n), {});
        if (!p.ok() || !store_->SetAssignment(p->id, std::vector<int>(kItems, 1)).ok()) {
          ++failed;
          continue;
        }
        for (int item = 0; item < kItems; ++item) {
          const std::string client = "c" + std::to_string(p->id) + "-" + std::to_string(item);
          // Each answer twice (a page retrying), and a replay of the thread's previous answer.
          for (const HuesAnswerRow& a :
               {Answer(p->id, item, 1 + item, "A1", client), Answer(p->id, item, 1 + item, "B2", client)}) {
            auto r = store_->AddAnswer(a);
            if (!r.ok())
              ++failed;
            else if (*r == Insert::kAdded)
              ++added;
            else
              ++duplicates;
          }
          if (!store_->AddEvents(p->id, {{p->id, "blur", 1.0 * item, ""}}).ok()) ++failed;
          if (!store_->AnswersOf(p->id).ok() || !store_->CoordinateCounts(1 + item).ok()) ++failed;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failed.load(), 0);
  constexpr int kAnswers = kThreads * kPlayersPerThread * kItems;
  EXPECT_EQ(added.load(), kAnswers);
  EXPECT_EQ(duplicates.load(), kAnswers);
  auto answers = store_->Answers();
  ASSERT_EQ(answers->size(), static_cast<size_t>(kAnswers));
  std::set<std::string> clients;
  for (const HuesAnswerRow& a : *answers) {
    clients.insert(a.client_id);
    EXPECT_EQ(a.coordinate, "A1") << "the first of the two is kept";
  }
  EXPECT_EQ(clients.size(), static_cast<size_t>(kAnswers));
  auto c = store_->Counts();
  EXPECT_EQ(c->participants, kThreads * kPlayersPerThread);
  EXPECT_EQ(c->events, kAnswers);
  std::set<int64_t> ids;
  auto participants = store_->Participants();
  for (const Participant& p : *participants) ids.insert(p.id);
  EXPECT_EQ(ids.size(), static_cast<size_t>(kThreads * kPlayersPerThread));
}

TEST_P(StudyStoreContract, ExistsOnceOpened) {
  auto fresh = GetParam().make(scratch_.path() / "other");
  ASSERT_TRUE(fresh.ok());
  EXPECT_FALSE(*StudyStore::Exists(*fresh));
  EXPECT_FALSE(*StudyStore::Exists(*fresh)) << "asking created nothing";
  ASSERT_TRUE(StudyStore::Open(*fresh).ok());
  EXPECT_TRUE(*StudyStore::Exists(*fresh));
  EXPECT_TRUE(*StudyStore::Exists(location_));
}

INSTANTIATE_TEST_SUITE_P(Stores, StudyStoreContract, ::testing::Values(SqliteLocation(), PostgresLocation()),
                         [](const ::testing::TestParamInfo<StudyLocation>& info) { return info.param.name; });

TEST(StudyStore, AnUnknownSchemeIsRefusedWithoutShowingThePassword) {
  for (bool exists : {false, true}) {
    Status st = exists ? StudyStore::Exists("mysql://user:secret@db/visalign").status()
                       : StudyStore::Open("mysql://user:secret@db/visalign").status();
    EXPECT_EQ(st.code(), StatusCode::kUnsupported);
    EXPECT_EQ(st.where(), "store location");
    EXPECT_EQ(st.ToString().find("secret"), std::string::npos) << st.ToString();
  }
}

TEST(StudyStore, ASqliteStudyOfANewerSchemaIsRefused) {
  visalign::testing::TempDir dir;
  ASSERT_TRUE(StudyStore::Open((dir / "store").string()).ok());
  // The SQLite file header keeps PRAGMA user_version big-endian at offset 60.
  std::fstream db(dir / "store" / "study.db", std::ios::in | std::ios::out | std::ios::binary);
  db.seekp(60);
  db.write("\0\0\0\x63", 4);
  db.close();
  Status st = StudyStore::Open((dir / "store").string()).status();
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_NE(st.what().find("study store schema version 99 is newer than this visalign's 1"), std::string::npos)
      << st.ToString();
}

class PostgresStudyStore : public visalign::testing::PostgresDatabaseTest {
 protected:
  // Fails when `table` exists in the test's database.
  Status Absent(const std::string& table) const {
    return server_->Execute(
        database_, "DO $$ BEGIN IF to_regclass('" + table + "') IS NOT NULL THEN RAISE 'exists'; END IF; END $$");
  }
};

TEST_F(PostgresStudyStore, AnUnreachableServerIsOneLineWithoutThePassword) {
  const std::string url = "postgres://visalign:s3cret@127.0.0.1:1/nowhere";
  for (bool exists : {false, true}) {
    Status st = exists ? StudyStore::Exists(url).status() : StudyStore::Open(url).status();
    EXPECT_EQ(st.code(), StatusCode::kUnavailable);
    EXPECT_EQ(st.where(), "postgres://visalign@127.0.0.1:1/nowhere");
    EXPECT_NE(st.what().find("cannot connect to PostgreSQL"), std::string::npos) << st.ToString();
    EXPECT_EQ(st.ToString().find("s3cret"), std::string::npos) << st.ToString();
    EXPECT_EQ(st.ToString().find('\n'), std::string::npos) << st.ToString();
  }
}

TEST_F(PostgresStudyStore, AWrongPasswordFromTheVariableIsRefusedAndNeverShown) {
  const std::string wrong = "wr0ng-Study-Pa55";
  ::setenv("VISALIGN_TEST_WRONG_STUDY_PASSWORD", wrong.c_str(), 1);
  StoreOptions options;
  options.password_env = "VISALIGN_TEST_WRONG_STUDY_PASSWORD";
  Status st = StudyStore::Open(url_, options).status();
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.what().find("password authentication failed"), std::string::npos) << st.ToString();
  EXPECT_EQ(st.ToString().find(wrong), std::string::npos) << st.ToString();
  options.password_env = "VISALIGN_TEST_NO_SUCH_VARIABLE";
  EXPECT_EQ(StudyStore::Open(url_, options).status().where(), "store password variable");
  ::setenv("VISALIGN_TEST_RIGHT_STUDY_PASSWORD", server_->password().c_str(), 1);
  options.password_env = "VISALIGN_TEST_RIGHT_STUDY_PASSWORD";
  EXPECT_TRUE(StudyStore::Open(url_, options).ok());
}

TEST_F(PostgresStudyStore, ConnectionsTheServerDroppedAreReplaced) {
  auto store = StudyStore::Open(url_);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE((*store)->AddParticipant("a", {}).ok());
  ASSERT_TRUE(server_
                  ->Execute(database_,
                            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                            "WHERE datname = current_database() AND pid <> pg_backend_pid()")
                  .ok());
  EXPECT_FALSE((*store)->Participants().ok()) << "the statement on the dropped connection";
  auto participants = (*store)->Participants();
  ASSERT_TRUE(participants.ok()) << participants.status().ToString();
  EXPECT_EQ(participants->size(), 1u);
  EXPECT_TRUE((*store)->AddParticipant("b", {}).ok());
}

TEST_F(PostgresStudyStore, ExistsCreatesNothing) {
  EXPECT_FALSE(*StudyStore::Exists(url_));
  EXPECT_TRUE(Absent("visalign_meta").ok());
  ASSERT_TRUE(StudyStore::Open(url_).ok());
  EXPECT_FALSE(Absent("participants").ok());
  EXPECT_TRUE(Absent("runs").ok()) << "the study store makes no run tables";
}

TEST_F(PostgresStudyStore, AStudySchemaNewerThanThisBuildIsRefusedAndTheRunStoreStillOpens) {
  ASSERT_TRUE(StudyStore::Open(url_).ok());
  ASSERT_TRUE(
      server_->Execute(database_, "UPDATE visalign_meta SET value = '99' WHERE key = 'study_schema_version'").ok());
  Status st = StudyStore::Open(url_).status();
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_NE(st.what().find("study store schema version 99 is newer than this visalign's 1"), std::string::npos)
      << st.ToString();
  EXPECT_TRUE(OpenStore(url_).ok()) << "the run store's version is its own";
  Status migrate = MigrateStore(url_).status();
  EXPECT_NE(migrate.what().find("study store schema version 99 is newer"), std::string::npos)
      << "store migrate, which brings a study up to date too, leaves a newer one alone: " << migrate.ToString();
}

TEST_F(PostgresStudyStore, RunsAndAStudyShareADatabaseWhicheverComesFirst) {
  auto other = server_->CreateDatabase();
  ASSERT_TRUE(other.ok());
  for (bool study_first : {true, false}) {
    const std::string& url = study_first ? url_ : *other;
    for (int i = 0; i < 2; ++i) {
      if ((i == 0) == study_first) {
        auto study = StudyStore::Open(url);
        ASSERT_TRUE(study.ok()) << study.status().ToString();
        EXPECT_TRUE((*study)->AddParticipant("s" + std::to_string(i), {}).ok());
      } else {
        auto runs = OpenStore(url);
        ASSERT_TRUE(runs.ok()) << runs.status().ToString();
        EXPECT_TRUE((*runs)->ListRuns().ok());
      }
    }
    EXPECT_TRUE(MigrateStore(url).ok());
    EXPECT_EQ(StudyStore::Open(url).value()->Counts()->participants, 1);
  }
}

}  // namespace
}  // namespace visalign::store
