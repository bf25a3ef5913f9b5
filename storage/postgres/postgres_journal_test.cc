// PostgreSQL-only behaviour of PostgresJournal: the schema version in the database, the owner
// lock, values PostgreSQL refuses, and a server that dies under the journal. What every backend
// shares is in the conformance suite (postgres_conformance_test.cc).
#include "reckon/storage/postgres/postgres_journal.h"

#include <gtest/gtest.h>

#include <vector>

#include "reckon/storage/postgres/pg.h"
#include "reckon/storage/postgres/postgres_outbox_store.h"
#include "reckon/storage/postgres/postgres_principal_store.h"
#include "reckon/storage/postgres/schema.h"
#include "reckon/storage/testing/journal_requests.h"
#include "reckon/storage/testing/postgres_test_env.h"

namespace reckon::storage {
namespace {

class PostgresJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(TestPostgres(), nullptr) << TestPostgresStartError();
    auto conninfo = FreshDatabase();
    ASSERT_TRUE(conninfo) << conninfo.error().ToString();
    conninfo_ = conninfo.value();
  }
  std::int64_t QueryInt(const std::string& sql) {
    auto conn = PgConnection::Connect(conninfo_);
    EXPECT_TRUE(conn) << conn.error().ToString();
    if (!conn) return -1;
    auto result = conn.value().Query(sql);
    EXPECT_TRUE(result) << result.error().ToString();
    return result && result.value().rows() == 1 ? result.value().Int(0, 0) : -1;
  }
  void Exec(const std::string& sql) {
    auto conn = PgConnection::Connect(conninfo_);
    ASSERT_TRUE(conn) << conn.error().ToString();
    auto done = conn.value().Exec(sql);
    ASSERT_TRUE(done) << done.error().ToString();
  }
  std::string conninfo_;
};

TEST_F(PostgresJournalTest, KeepsItsSchemaVersionInTheDatabase) {
  {
    auto journal = OpenPostgresJournal(conninfo_);
    ASSERT_TRUE(journal) << journal.error().ToString();
    EXPECT_EQ(journal.value()->schema_version(), PgJournalMigrations().back().version);
    EXPECT_EQ(journal.value()->path(), conninfo_);
  }
  EXPECT_EQ(QueryInt("SELECT max(version)::bigint FROM reckon_schema"),
            PgJournalMigrations().back().version);
  // Opening again applies nothing twice.
  auto again = OpenPostgresJournal(conninfo_);
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(QueryInt("SELECT count(*) FROM reckon_schema"),
            static_cast<std::int64_t>(PgJournalMigrations().size()));
}

TEST_F(PostgresJournalTest, MigratesForwardKeepingDataAndOnlyOnce) {
  {
    auto journal = OpenPostgresJournal(conninfo_);
    ASSERT_TRUE(journal);
    ASSERT_TRUE(journal.value()->Append(MarkerStep("wf", 1)));
  }
  std::vector<PgMigration> next(PgJournalMigrations().begin(), PgJournalMigrations().end());
  const int v = next.back().version + 1;
  next.push_back({v, "test: add runs.labels", "ALTER TABLE runs ADD COLUMN labels TEXT"});
  auto conn = PgConnection::Connect(conninfo_);
  ASSERT_TRUE(conn);
  auto from = PgMigrateForward(conn.value(), next);
  ASSERT_TRUE(from) << from.error().ToString();
  EXPECT_EQ(from.value(), v - 1);
  EXPECT_EQ(PgSchemaVersion(conn.value()).value(), v);
  EXPECT_EQ(QueryInt("SELECT count(*) FROM runs WHERE labels IS NULL"), 1);
  auto again = PgMigrateForward(conn.value(), next);
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(again.value(), v);
}

TEST_F(PostgresJournalTest, AFailingMigrationLeavesTheOldVersion) {
  auto conn = PgConnection::Connect(conninfo_);
  ASSERT_TRUE(conn);
  ASSERT_TRUE(PgMigrateForward(conn.value(), PgJournalMigrations()));
  std::vector<PgMigration> broken(PgJournalMigrations().begin(), PgJournalMigrations().end());
  const int v = broken.back().version;
  broken.push_back({v + 1, "broken", "CREATE TABLE half (x int); SELECT * FROM no_such_table;"});
  auto result = PgMigrateForward(conn.value(), broken);
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message().find("schema version " + std::to_string(v + 1)),
            std::string::npos)
      << result.error().ToString();
  EXPECT_EQ(PgSchemaVersion(conn.value()).value(), v);
  EXPECT_EQ(QueryInt("SELECT count(*) FROM pg_tables WHERE tablename = 'half'"), 0);
}

TEST_F(PostgresJournalTest, RefusesADatabaseFromANewerRelease) {
  { ASSERT_TRUE(OpenPostgresJournal(conninfo_)); }
  Exec("INSERT INTO reckon_schema (version, summary) VALUES (999, 'from the future')");
  auto journal = OpenPostgresJournal(conninfo_);
  ASSERT_FALSE(journal);
  EXPECT_EQ(journal.error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(journal.error().message().find("999"), std::string::npos);
  EXPECT_NE(journal.error().message().find("newer reckon"), std::string::npos);
}

TEST_F(PostgresJournalTest, ASecondOwnerIsRefusedAndACompanionSeesTheSameRuns) {
  auto owner = OpenPostgresJournal(conninfo_);
  ASSERT_TRUE(owner) << owner.error().ToString();
  auto second = OpenPostgresJournal(conninfo_);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(second.error().message().find("reckon pid="), std::string::npos)
      << second.error().ToString();

  PostgresJournalOptions companion_options;
  companion_options.mode = PostgresJournalOptions::Mode::kCompanion;
  auto companion = OpenPostgresJournal(conninfo_, companion_options);
  ASSERT_TRUE(companion) << companion.error().ToString();
  ASSERT_TRUE(owner.value()->Append(MarkerStep("wf", 1)));
  auto seen = companion.value()->ReadEvents({"wf", "r1"});
  ASSERT_TRUE(seen);
  EXPECT_EQ(seen.value().size(), 1u);
  // The conditional append holds across connections.
  auto stale = companion.value()->Append(MarkerStep("wf", 1));
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code(), Errc::kConflict);
  ASSERT_TRUE(companion.value()->Append(MarkerStep("wf", 2)));
  auto late = owner.value()->Append(MarkerStep("wf", 2));
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().code(), Errc::kConflict);

  // The lock goes with the owner's connection.
  owner.value().reset();
  EXPECT_TRUE(OpenPostgresJournal(conninfo_));
}

TEST_F(PostgresJournalTest, AValuePostgresRefusesFailsItsRequestOnly) {
  auto journal = OpenPostgresJournal(conninfo_);
  ASSERT_TRUE(journal);
  // PostgreSQL texts hold no NUL byte: the id is refused, not cut short at the NUL.
  AppendRequest nul = MarkerStep(std::string("wf\0x", 4), 1);
  AppendRequest fine = MarkerStep("wf-ok", 1);
  const AppendRequest* group[] = {&nul, &fine};
  auto results = journal.value()->AppendGroup(group);
  ASSERT_FALSE(results[0]);
  EXPECT_EQ(results[0].error().code(), Errc::kInvalidArgument) << results[0].error().ToString();
  EXPECT_TRUE(results[1]);
  EXPECT_EQ(QueryInt("SELECT count(*) FROM runs"), 1);
  auto alone = journal.value()->Append(nul);
  ASSERT_FALSE(alone);
  EXPECT_EQ(alone.error().code(), Errc::kInvalidArgument);
  EXPECT_TRUE(journal.value()->Append(MarkerStep("wf-ok", 2)));
}

TEST_F(PostgresJournalTest, StoresRefuseADatabaseWithoutAJournal) {
  auto outbox = PostgresOutboxStore::Open(conninfo_, nullptr);
  ASSERT_FALSE(outbox);
  EXPECT_EQ(outbox.error().code(), Errc::kFailedPrecondition);
  auto principals = PostgresPrincipalStore::Open(conninfo_);
  ASSERT_FALSE(principals);
  EXPECT_EQ(principals.error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(principals.error().message().find("open it with this release"), std::string::npos);
}

TEST_F(PostgresJournalTest, AnUnreachableServerIsUnavailable) {
  const std::string conninfo =
      "postgresql://nobody:secret@127.0.0.1:1/none?connect_timeout=5";
  auto journal = OpenPostgresJournal(conninfo);
  ASSERT_FALSE(journal);
  EXPECT_EQ(journal.error().code(), Errc::kUnavailable);
  EXPECT_NE(journal.error().message().find("127.0.0.1:1"), std::string::npos)
      << journal.error().ToString();
  EXPECT_EQ(journal.error().message().find("secret"), std::string::npos);
}

// Runs last in this binary's order of declaration; it restarts the server it crashed.
TEST_F(PostgresJournalTest, ALostConnectionPoisonsTheJournalUntilReopened) {
  auto journal = OpenPostgresJournal(conninfo_);
  ASSERT_TRUE(journal);
  ASSERT_TRUE(journal.value()->Append(MarkerStep("wf", 1)));
  ASSERT_TRUE(journal.value()->Append(MarkerStep("wf", 2)));
  auto outbox = PostgresOutboxStore::Open(conninfo_, nullptr);
  ASSERT_TRUE(outbox) << outbox.error().ToString();

  ASSERT_TRUE(TestPostgres()->Crash());
  auto lost = journal.value()->Append(MarkerStep("wf", 3));
  ASSERT_FALSE(lost);
  EXPECT_EQ(lost.error().code(), Errc::kUnavailable) << lost.error().ToString();
  auto read = journal.value()->FindRun({"wf", "r1"});
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code(), Errc::kUnavailable);

  // The server is back, but this journal stays poisoned: it cannot know what the server kept.
  ASSERT_TRUE(TestPostgres()->Restart()) << TestPostgres()->LogTail();
  AppendRequest step3 = MarkerStep("wf", 3);
  AppendRequest other = MarkerStep("wf-other", 1);
  const AppendRequest* group[] = {&step3, &other};
  auto refused = journal.value()->AppendGroup(group);
  ASSERT_EQ(refused.size(), 2u);
  for (const auto& result : refused) {
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code(), Errc::kUnavailable);
    EXPECT_NE(result.error().message().find("restart the process"), std::string::npos)
        << result.error().ToString();
  }

  // The stores make their connection again: the first call after the loss fails, the next
  // one works.
  auto failed = outbox.value()->List(false, 10);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code(), Errc::kUnavailable);
  auto listed = outbox.value()->List(false, 10);
  EXPECT_TRUE(listed) << listed.error().ToString();

  // Reopened, it finds every acknowledged append (recovered from the server's WAL) and goes on.
  journal.value().reset();
  auto reopened = OpenPostgresJournal(conninfo_);
  ASSERT_TRUE(reopened) << reopened.error().ToString();
  auto events = reopened.value()->ReadEvents({"wf", "r1"});
  ASSERT_TRUE(events) << events.error().ToString();
  EXPECT_EQ(events.value().size(), 2u);
  EXPECT_TRUE(reopened.value()->Append(MarkerStep("wf", 3)));
  auto integrity = reopened.value()->IntegrityCheck();
  ASSERT_TRUE(integrity);
  EXPECT_EQ(integrity.value(), "ok");
}

}  // namespace
}  // namespace reckon::storage
