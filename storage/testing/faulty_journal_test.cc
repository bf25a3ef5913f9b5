#include "reckon/storage/testing/faulty_journal.h"
#include "reckon/storage/testing/journal_requests.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <chrono>

#include "reckon/storage/group_commit.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "tests/support/temp_dir.h"

namespace reckon::storage {
namespace {

using namespace std::chrono_literals;


class FaultyJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = OpenSqliteJournal(path());
    ASSERT_TRUE(opened) << opened.error().ToString();
    inner_ = std::move(opened).value();
  }
  std::string path() const { return dir_.File("journal.db"); }
  // How many events of `workflow_id` a fresh read-only connection finds in the file.
  std::size_t EventsOnDisk(const std::string& workflow_id) {
    SqliteJournalOptions read_only;
    read_only.mode = SqliteJournalOptions::Mode::kReadOnly;
    auto reopened = OpenSqliteJournal(path(), read_only);
    EXPECT_TRUE(reopened) << reopened.error().ToString();
    if (!reopened) return 0;
    auto events = reopened.value()->ReadEvents({workflow_id, "r1"});
    EXPECT_TRUE(events) << events.error().ToString();
    return events ? events.value().size() : 0;
  }

  testing::TempDir dir_;
  std::unique_ptr<Journal> inner_;
};

TEST_F(FaultyJournalTest, WithoutFaultsItIsTheInnerJournal) {
  FaultyJournal journal(*inner_);
  ASSERT_TRUE(journal.Append(MarkerStep("wf", 1)));
  auto stale = journal.Append(MarkerStep("wf", 1));
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code(), Errc::kConflict);
  EXPECT_FALSE(journal.poisoned()) << "a conflict is not a failed commit";
  ASSERT_TRUE(journal.Append(MarkerStep("wf", 2)));
  EXPECT_EQ(journal.commits(), 3);
  EXPECT_EQ(journal.ReadEvents({"wf", "r1"}).value().size(), 2u);
  EXPECT_EQ(journal.path(), inner_->path());
  EXPECT_EQ(EventsOnDisk("wf"), 2u);
}

TEST_F(FaultyJournalTest, TheNthCommitFailsUnwrittenAndPoisonsTheJournal) {
  FaultyJournal journal(*inner_, {.fail_commit = 2});
  ASSERT_TRUE(journal.Append(MarkerStep("wf", 1)));
  AppendRequest a = MarkerStep("wf", 2), b = MarkerStep("other", 1);
  const AppendRequest* group[] = {&a, &b};
  auto failed = journal.AppendGroup(group);
  ASSERT_EQ(failed.size(), 2u);
  for (const auto& result : failed) {
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code(), Errc::kUnavailable);
    EXPECT_NE(result.error().message().find("commit 2"), std::string::npos);
  }
  EXPECT_TRUE(journal.poisoned());
  // Refused from now on, although the inner journal would take it.
  auto refused = journal.Append(MarkerStep("wf", 2));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kUnavailable);
  EXPECT_NE(refused.error().message().find("reopen"), std::string::npos);
  EXPECT_EQ(journal.commits(), 3);
  // Nothing of the failed commit, nor of the refused one, reached the file.
  EXPECT_EQ(EventsOnDisk("wf"), 1u);
  EXPECT_EQ(EventsOnDisk("other"), 0u);
}

TEST_F(FaultyJournalTest, AFailedSyncWritesButReportsUnavailable) {
  ASSERT_TRUE(inner_->Append(MarkerStep("wf", 1)));
  FaultyJournal journal(*inner_, {.fail_sync = 1});
  AppendRequest ok = MarkerStep("other", 1), stale = MarkerStep("wf", 1);
  const AppendRequest* group[] = {&ok, &stale};
  auto results = journal.AppendGroup(group);
  ASSERT_EQ(results.size(), 2u);
  ASSERT_FALSE(results[0]);
  EXPECT_EQ(results[0].error().code(), Errc::kUnavailable);
  EXPECT_NE(results[0].error().message().find("sync"), std::string::npos);
  ASSERT_FALSE(results[1]);
  EXPECT_EQ(results[1].error().code(), Errc::kConflict) << "a refused request keeps its error";
  EXPECT_TRUE(journal.poisoned());
  EXPECT_FALSE(journal.Append(MarkerStep("wf", 2)));
  // The request reported as failed is durable all the same.
  EXPECT_EQ(EventsOnDisk("other"), 1u);
  EXPECT_EQ(EventsOnDisk("wf"), 1u);
}

TEST_F(FaultyJournalTest, FaultsCanBeArmedLater) {
  FaultyJournal journal(*inner_);
  std::vector<std::int64_t> seen;
  journal.OnCommit([&seen](std::int64_t commit) { seen.push_back(commit); });
  for (int seq = 1; seq <= 3; ++seq) ASSERT_TRUE(journal.Append(MarkerStep("wf", seq)));
  journal.set_faults({.fail_commit = journal.commits() + 1});
  EXPECT_FALSE(journal.Append(MarkerStep("wf", 4)));
  EXPECT_EQ(EventsOnDisk("wf"), 3u);
  EXPECT_EQ(seen, (std::vector<std::int64_t>{1, 2, 3, 4})) << "the hook sees every commit";
}

TEST_F(FaultyJournalTest, GroupCommitReportsAFailedCommitToEveryRequestOfItsGroup) {
  // The appends queued after the first commit form one group, which then fails whole.
  FaultyJournal journal(*inner_, {.fail_commit = 2, .commit_delay = 20ms});
  boost::asio::io_context io;
  const auto began = std::chrono::steady_clock::now();
  GroupCommitter committer(journal, io.get_executor());
  std::vector<Result<AppendAck>> results;
  auto record = [&results](Result<AppendAck> result) { results.push_back(std::move(result)); };
  committer.AsyncAppend(MarkerStep("first", 1), record);
  io.run_one();  // the first flush: commit 1, alone
  for (int r = 0; r < 5; ++r) committer.AsyncAppend(MarkerStep("wf-" + std::to_string(r), 1), record);
  io.restart();  // run_one ran out of work, which stops the io_context
  io.run();
  ASSERT_EQ(results.size(), 6u);
  EXPECT_TRUE(results[0]);
  for (std::size_t i = 1; i < results.size(); ++i) {
    ASSERT_FALSE(results[i]) << i;
    EXPECT_EQ(results[i].error().code(), Errc::kUnavailable);
  }
  EXPECT_EQ(journal.commits(), 2) << "the five appends shared commit 2";
  EXPECT_EQ(committer.stats().commits, 2u);
  // Each commit slept first (a lower bound only: sleeping never ends early).
  EXPECT_GE(std::chrono::steady_clock::now() - began, 40ms);
  EXPECT_EQ(EventsOnDisk("first"), 1u);
  EXPECT_EQ(EventsOnDisk("wf-0"), 0u);
}

}  // namespace
}  // namespace reckon::storage
