// One owner per journal, within a process (the multi-process cases are in
// tests/journal_owner_test.cc), the modes beside an owner, and refusing a damaged file.
#include "reckon/storage/sqlite/journal_lock.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "reckon/storage/sqlite/sqlite_journal.h"
#include "reckon/storage/sqlite/journal_check.h"
#include "reckon/storage/testing/journal_requests.h"
#include "tests/support/file_damage.h"
#include "tests/support/temp_dir.h"

namespace reckon::storage {
namespace {

SqliteJournalOptions WithMode(SqliteJournalOptions::Mode mode) {
  SqliteJournalOptions options;
  options.mode = mode;
  options.sync = SqliteJournalOptions::Sync::kOff;
  return options;
}


TEST(JournalLockTest, ASecondOwnerIsRefusedNamingTheHolder) {
  testing::TempDir dir;
  auto first = SqliteJournal::Open(dir.File("j.db"));
  ASSERT_TRUE(first) << first.error().ToString();
  auto second = SqliteJournal::Open(dir.File("j.db"));
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code(), Errc::kFailedPrecondition);
  const std::string& message = second.error().message();
  EXPECT_NE(message.find("pid=" + std::to_string(getpid())), std::string::npos) << message;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  EXPECT_NE(message.find(std::string("host=") + host), std::string::npos) << message;
  EXPECT_NE(message.find("since="), std::string::npos) << message;
  EXPECT_NE(message.find("stop that process"), std::string::npos) << message;
  EXPECT_NE(JournalLock::DescribeHolder(dir.File("j.db")).find("pid="), std::string::npos);

  first.value().reset();  // the lock dies with its owner; the lock file stays
  EXPECT_TRUE(std::filesystem::exists(dir.File("j.db.lock")));
  EXPECT_EQ(JournalLock::DescribeHolder(dir.File("j.db")), "");
  auto third = SqliteJournal::Open(dir.File("j.db"));
  EXPECT_TRUE(third) << third.error().ToString();
}

TEST(JournalLockTest, CompanionAndReadOnlyConnectionsWorkBesideTheOwner) {
  testing::TempDir dir;
  auto owner = SqliteJournal::Open(dir.File("j.db"), WithMode(SqliteJournalOptions::Mode::kOwner));
  ASSERT_TRUE(owner) << owner.error().ToString();
  auto companion = SqliteJournal::Open(dir.File("j.db"), WithMode(SqliteJournalOptions::Mode::kCompanion));
  ASSERT_TRUE(companion) << companion.error().ToString();
  auto reader = SqliteJournal::Open(dir.File("j.db"), WithMode(SqliteJournalOptions::Mode::kReadOnly));
  ASSERT_TRUE(reader) << reader.error().ToString();

  ASSERT_TRUE(FillRuns(*owner.value(), 3));
  auto runs = reader.value()->ListRuns();
  ASSERT_TRUE(runs) << runs.error().ToString();
  EXPECT_EQ(runs.value().size(), 3u);
  EXPECT_TRUE(companion.value()->PutContract({"noop", "h", "{}", 1}));
  AppendRequest write;
  write.run = {"wf-ro", "r1"};
  write.events = {WorkflowTaskScheduled{}};
  EXPECT_FALSE(reader.value()->Append(write)) << "a read-only connection must not write";
}

TEST(JournalLockTest, ReadOnlyRefusesAMissingFile) {
  testing::TempDir dir;
  auto reader = SqliteJournal::Open(dir.File("absent.db"), WithMode(SqliteJournalOptions::Mode::kReadOnly));
  ASSERT_FALSE(reader);
  EXPECT_EQ(reader.error().code(), Errc::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(dir.File("absent.db")));
}

TEST(JournalLockTest, AnOwnerRefusesADamagedJournalAndTheCheckNamesTheProblems) {
  testing::TempDir dir;
  const std::string path = dir.File("j.db");
  {
    auto journal = SqliteJournal::Open(path, WithMode(SqliteJournalOptions::Mode::kOwner));
    ASSERT_TRUE(journal) << journal.error().ToString();
    ASSERT_TRUE(FillRuns(*journal.value(), 100));
  }  // closing the last connection checkpoints the WAL into the file
  auto sound = CheckJournal(path);
  ASSERT_TRUE(sound) << sound.error().ToString();
  EXPECT_TRUE(sound.value().ok()) << sound.value().problems.front();
  EXPECT_EQ(sound.value().runs, 100);
  EXPECT_EQ(sound.value().events, 2000);
  EXPECT_EQ(sound.value().operations, 100);

  ASSERT_TRUE(testing::FlipMiddle(path));
  auto opened = SqliteJournal::Open(path);
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code(), Errc::kCorruption);
  EXPECT_NE(opened.error().message().find(path), std::string::npos) << opened.error().message();
  EXPECT_NE(opened.error().message().find("admin check"), std::string::npos)
      << opened.error().message();
  auto damaged = CheckJournal(path);
  ASSERT_TRUE(damaged) << damaged.error().ToString();
  EXPECT_FALSE(damaged.value().ok());
}

}  // namespace
}  // namespace reckon::storage
