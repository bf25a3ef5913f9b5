#include "reckon/storage/group_commit.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <thread>

#include "reckon/storage/sqlite/sqlite_journal.h"
#include "reckon/storage/testing/journal_requests.h"
#include "tests/support/temp_dir.h"

namespace reckon::storage {
namespace {

namespace asio = boost::asio;


asio::awaitable<void> AppendMany(GroupCommitter& committer, std::string workflow_id, int count,
                                 int& acked) {
  for (int i = 1; i <= count; ++i) {
    Result<AppendAck> ack =
        co_await committer.AsyncAppend(MarkerStep(workflow_id, i), asio::use_awaitable);
    EXPECT_TRUE(ack) << ack.error().ToString();
    if (ack) ++acked;
  }
}

TEST(GroupCommitTest, ConcurrentCoroutinesShareCommits) {
  testing::TempDir dir;
  auto journal = OpenSqliteJournal(dir.File("j.db"));
  ASSERT_TRUE(journal);
  asio::io_context io;
  GroupCommitter committer(*journal.value(), io.get_executor());
  constexpr int kRuns = 16, kSteps = 20;
  int acked = 0;
  for (int r = 0; r < kRuns; ++r) {
    asio::co_spawn(io, AppendMany(committer, "wf-" + std::to_string(r), kSteps, acked),
                   asio::detached);
  }
  io.run();
  EXPECT_EQ(acked, kRuns * kSteps);
  auto stats = committer.stats();
  EXPECT_EQ(stats.appends, std::uint64_t(kRuns * kSteps));
  // Sixteen appenders that are all ready at once share each commit.
  EXPECT_LE(stats.commits, std::uint64_t(kSteps * 2));
  for (int r = 0; r < kRuns; ++r) {
    auto events = journal.value()->ReadEvents({"wf-" + std::to_string(r), "r1"});
    ASSERT_TRUE(events);
    EXPECT_EQ(events.value().size(), std::size_t(kSteps));
  }
}

// More appends pending than one group takes: the oldest max_group commit first, the rest in
// the next group, every one acknowledged (splitting the queue once crashed the process).
TEST(GroupCommitTest, MorePendingThanOneGroup) {
  testing::TempDir dir;
  auto journal = OpenSqliteJournal(dir.File("j.db"));
  ASSERT_TRUE(journal);
  asio::io_context io;
  GroupCommitter::Options options;
  options.max_group = 4;
  GroupCommitter committer(*journal.value(), io.get_executor(), options);
  constexpr int kRuns = 11;
  int acked = 0;
  for (int r = 0; r < kRuns; ++r) {
    asio::co_spawn(io, AppendMany(committer, "wf-" + std::to_string(r), 1, acked), asio::detached);
  }
  io.run();
  EXPECT_EQ(acked, kRuns);
  EXPECT_EQ(committer.stats().appends, std::uint64_t(kRuns));
  EXPECT_EQ(committer.stats().commits, 3u);  // 4 + 4 + 3
}

TEST(GroupCommitTest, BlockingAppendsFromThreads) {
  testing::TempDir dir;
  auto journal = OpenSqliteJournal(dir.File("j.db"));
  ASSERT_TRUE(journal);
  asio::thread_pool commit_thread(1);
  {
    GroupCommitter committer(*journal.value(), commit_thread.get_executor());
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&committer, t] {
        for (int i = 1; i <= 25; ++i) {
          auto ack = committer.Append(MarkerStep("t" + std::to_string(t), i));
          ASSERT_TRUE(ack) << ack.error().ToString();
        }
      });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(committer.stats().appends, 100u);
    // A conflict is reported to its own caller only.
    auto stale = committer.Append(MarkerStep("t0", 3));
    ASSERT_FALSE(stale);
    EXPECT_EQ(stale.error().code(), Errc::kConflict);
    EXPECT_TRUE(committer.Append(MarkerStep("t0", 26)));
  }
  commit_thread.join();
}

}  // namespace
}  // namespace reckon::storage
