// CorruptionGuard over a real SQLite journal with one page flipped, or one byte inside a row
// changed: the reads that hit the damage come back as kCorruption naming the file (and, for the
// byte, the page whose checksum fails), unchanged, and the owner hears of it once.
#include "reckon/storage/corruption_guard.h"

#include <gtest/gtest.h>

#include "reckon/storage/sqlite/sqlite_journal.h"
#include "reckon/storage/testing/journal_requests.h"
#include "tests/support/file_damage.h"
#include "tests/support/temp_dir.h"

namespace reckon::storage {
namespace {


TEST(CorruptionGuardTest, ADamagedReadIsReportedOnceAndPassedOnUnchanged) {
  testing::TempDir dir;
  const std::string path = dir.File("j.db");
  SqliteJournalOptions options;
  options.sync = SqliteJournalOptions::Sync::kOff;
  {
    auto journal = OpenSqliteJournal(path, options);
    ASSERT_TRUE(journal) << journal.error().ToString();
    ASSERT_TRUE(FillRuns(*journal.value(), 100));
  }
  ASSERT_TRUE(testing::FlipMiddle(path));
  options.check_at_open = false;  // open it anyway, as a file damaged after the open would be
  auto journal = OpenSqliteJournal(path, options);
  ASSERT_TRUE(journal) << journal.error().ToString();

  std::vector<Error> reported;
  CorruptionGuard guarded(*journal.value(), [&reported](const Error& e) { reported.push_back(e); });
  EXPECT_EQ(guarded.path(), path);
  int corrupt_reads = 0;
  for (int i = 0; i < 100; ++i) {
    auto events = guarded.ReadEvents({"wf-" + std::to_string(i), "r1"}, 1);
    if (events) continue;
    EXPECT_EQ(events.error().code(), Errc::kCorruption) << events.error().ToString();
    EXPECT_NE(events.error().message().find(path), std::string::npos) << events.error().message();
    ++corrupt_reads;
  }
  auto runs = guarded.ListRuns(std::nullopt);
  if (!runs) ++corrupt_reads;
  ASSERT_GT(corrupt_reads, 0) << "the flipped page was never read; the test proves nothing";
  ASSERT_EQ(reported.size(), 1u) << "reported once, however many reads fail";
  EXPECT_EQ(reported[0].code(), Errc::kCorruption);
}

TEST(CorruptionGuardTest, AByteChangedInsideARowStopsTheOwnerAtTheFirstRead) {
  testing::TempDir dir;
  const std::string path = dir.File("j.db");
  SqliteJournalOptions options;
  options.sync = SqliteJournalOptions::Sync::kOff;
  const std::string value = "\"the-value-a-disk-fault-changes-on-disk\"";
  {
    auto journal = OpenSqliteJournal(path, options);
    ASSERT_TRUE(journal) << journal.error().ToString();
    ASSERT_TRUE(FillRuns(*journal.value(), 20));
    AppendRequest request = MarkerStep("wf-target", 1);
    request.events = {MarkerRecorded{"m1", "note", value}};
    ASSERT_TRUE(journal.value()->Append(request));
  }
  auto offset = testing::FlipByteInside(path, value);
  ASSERT_TRUE(offset) << offset.error().ToString();
  options.check_at_open = false;  // as a file damaged after the open would be
  auto journal = OpenSqliteJournal(path, options);
  ASSERT_TRUE(journal) << journal.error().ToString();
  std::vector<Error> reported;
  CorruptionGuard guarded(*journal.value(), [&reported](const Error& e) { reported.push_back(e); });
  auto events = guarded.ReadEvents({"wf-target", "r1"}, 1);
  ASSERT_FALSE(events) << "the changed event was read as if sound";
  ASSERT_EQ(reported.size(), 1u);
  EXPECT_EQ(reported[0].code(), Errc::kCorruption);
  EXPECT_NE(reported[0].message().find("page " + std::to_string(offset.value() / 4096 + 1) +
                                       " (in '" + path + "') fails its checksum"),
            std::string::npos)
      << reported[0].message();
}

TEST(CorruptionGuardTest, ASoundJournalIsNeverReported) {
  testing::TempDir dir;
  auto journal = OpenSqliteJournal(dir.File("j.db"));
  ASSERT_TRUE(journal) << journal.error().ToString();
  int reported = 0;
  CorruptionGuard guarded(*journal.value(), [&reported](const Error&) { ++reported; });
  ASSERT_TRUE(FillRuns(guarded, 3));
  auto runs = guarded.ListRuns(std::nullopt);
  ASSERT_TRUE(runs) << runs.error().ToString();
  EXPECT_EQ(runs.value().size(), 3u);
  auto stale = guarded.Append([] {
    AppendRequest request;
    request.run = {"wf-0", "r1"};
    request.expected_next_seq = 1;  // the run exists: a conflict, not a corruption
    request.events.push_back(WorkflowStarted{"refund", "{}", ""});
    return request;
  }());
  EXPECT_FALSE(stale);
  EXPECT_EQ(reported, 0);
}

}  // namespace
}  // namespace reckon::storage
