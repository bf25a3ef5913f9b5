#include "reckon/storage/backend/open_backend.h"

#include <gtest/gtest.h>

#include "reckon/storage/sqlite/schema.h"
#include "reckon/storage/testing/journal_requests.h"
#include "tests/support/temp_dir.h"

namespace reckon::storage {
namespace {

TEST(OpenBackendTest, TellsTheBackendByTheJournalArgument) {
  EXPECT_EQ(BackendOf("postgresql://reckon@db:5432/reckon"), BackendKind::kPostgres);
  EXPECT_EQ(BackendOf("postgres://db/reckon"), BackendKind::kPostgres);
  EXPECT_EQ(BackendOf("/var/lib/reckon/journal.db"), BackendKind::kSqlite);
  EXPECT_EQ(BackendOf("journal.db"), BackendKind::kSqlite);
  EXPECT_EQ(BackendOf("postgresql.db"), BackendKind::kSqlite);
}

TEST(OpenBackendTest, APathOpensTheSqliteJournalAndItsStores) {
  testing::TempDir dir;
  const std::string path = dir.File("journal.db");
  auto journal = OpenJournal(path);
  ASSERT_TRUE(journal) << journal.error().ToString();
  EXPECT_EQ(journal.value()->path(), path);
  EXPECT_EQ(journal.value()->schema_version(), JournalMigrations().back().version);
  ASSERT_TRUE(journal.value()->Append(MarkerStep("wf", 1)));
  OpenJournalOptions companion;
  companion.mode = OpenJournalOptions::Mode::kCompanion;
  auto reader = OpenJournal(path, companion);
  ASSERT_TRUE(reader) << reader.error().ToString();
  EXPECT_EQ(reader.value()->ReadEvents({"wf", "r1"}).value().size(), 1u);
  EXPECT_TRUE(OpenOutboxStore(path, nullptr));
  EXPECT_TRUE(OpenPrincipalStore(path));
}

// The PostgreSQL side against a server is the conformance suite (storage/postgres/); here, only
// that a connection string reaches libpq, and that its password never reaches a message.
TEST(OpenBackendTest, AConnectionStringOpensThePostgresBackend) {
  const std::string url = "postgresql://reckon:hunter2@127.0.0.1:1/reckon?connect_timeout=5";
  for (const std::string& journal : {url, "postgres" + url.substr(10)}) {
    auto opened = OpenJournal(journal);
    ASSERT_FALSE(opened);
    EXPECT_EQ(opened.error().code(), Errc::kUnavailable);
    EXPECT_NE(opened.error().message().find("PostgreSQL at 'postgresql://reckon@127.0.0.1:1"),
              std::string::npos)
        << opened.error().ToString();
    EXPECT_EQ(opened.error().message().find("hunter2"), std::string::npos);
  }
  auto outbox = OpenOutboxStore(url, nullptr);
  ASSERT_FALSE(outbox);
  EXPECT_EQ(outbox.error().code(), Errc::kUnavailable);
  auto principals = OpenPrincipalStore(url);
  ASSERT_FALSE(principals);
  EXPECT_EQ(principals.error().code(), Errc::kUnavailable);
}

}  // namespace
}  // namespace reckon::storage
