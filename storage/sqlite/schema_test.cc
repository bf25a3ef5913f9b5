#include "reckon/storage/sqlite/schema.h"

#include <gtest/gtest.h>

#include "reckon/storage/sqlite/sqlite_journal.h"
#include "tests/support/temp_dir.h"

namespace reckon::storage {
namespace {

TEST(SchemaTest, MigrationsAreOrderedAndStartAtOne) {
  auto migrations = JournalMigrations();
  ASSERT_FALSE(migrations.empty());
  EXPECT_EQ(migrations.front().version, 1);
  for (std::size_t i = 1; i < migrations.size(); ++i) {
    EXPECT_EQ(migrations[i].version, migrations[i - 1].version + 1);
  }
}

TEST(SchemaTest, MigratesForwardKeepingData) {
  testing::TempDir dir;
  const std::string path = dir.File("j.db");
  {
    auto journal = OpenSqliteJournal(path);
    ASSERT_TRUE(journal);
    AppendRequest start;
    start.run = {"wf", "r"};
    start.events = {WorkflowStarted{"t", "{}", ""}};
    ASSERT_TRUE(journal.value()->Append(start));
  }
  // A later release adds a column; its migration runs once, in order, keeping the rows.
  std::vector<Migration> next(JournalMigrations().begin(), JournalMigrations().end());
  const int v = next.back().version + 1;
  next.push_back({v, "test: add runs.labels", "ALTER TABLE runs ADD COLUMN labels TEXT"});
  auto db = SqliteDb::Open(path);
  ASSERT_TRUE(db);
  auto from = MigrateForward(db.value(), next);
  ASSERT_TRUE(from) << from.error().ToString();
  EXPECT_EQ(from.value(), v - 1);
  EXPECT_EQ(db.value().QueryInt("PRAGMA user_version").value(), v);
  EXPECT_EQ(db.value().QueryInt("SELECT count(*) FROM runs").value(), 1);
  EXPECT_EQ(db.value().QueryInt("SELECT count(*) FROM events").value(), 1);
  // Running it again is a no-op.
  auto again = MigrateForward(db.value(), next);
  ASSERT_TRUE(again);
  EXPECT_EQ(again.value(), v);
}

TEST(SchemaTest, AFailingMigrationLeavesTheOldVersion) {
  testing::TempDir dir;
  auto db = SqliteDb::Open(dir.File("j.db"));
  ASSERT_TRUE(db);
  ASSERT_TRUE(MigrateForward(db.value(), JournalMigrations()));
  std::vector<Migration> broken(JournalMigrations().begin(), JournalMigrations().end());
  const int v = broken.back().version;
  broken.push_back({v + 1, "broken", "CREATE TABLE half (x); SELECT * FROM no_such_table;"});
  auto result = MigrateForward(db.value(), broken);
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message().find("schema version " + std::to_string(v + 1)),
            std::string::npos);
  EXPECT_EQ(db.value().QueryInt("PRAGMA user_version").value(), v);
  EXPECT_EQ(
      db.value().QueryInt("SELECT count(*) FROM sqlite_master WHERE name = 'half'").value(), 0);
}

TEST(SchemaTest, RefusesAJournalFromANewerRelease) {
  testing::TempDir dir;
  const std::string path = dir.File("j.db");
  {
    auto db = SqliteDb::Open(path);
    ASSERT_TRUE(db);
    ASSERT_TRUE(db.value().Exec("PRAGMA user_version = 999"));
  }
  auto journal = OpenSqliteJournal(path);
  ASSERT_FALSE(journal);
  EXPECT_EQ(journal.error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(journal.error().message().find("999"), std::string::npos);
  EXPECT_NE(journal.error().message().find("newer reckon"), std::string::npos);
}

}  // namespace
}  // namespace reckon::storage
