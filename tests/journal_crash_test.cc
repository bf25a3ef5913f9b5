// Crash loop over the journal: a child process appends through group commit and is SIGKILLed
// at many different moments; after each kill the journal is reopened and checked:
//   - every append the child acknowledged is present (acknowledged = durable);
//   - no partial transaction is visible (events, run index, operation row and approval row of
//     each append agree);
//   - PRAGMA integrity_check says ok.
// The child resumes from the journal each time, so the history grows across kills.
// Kill points: every other one is timed from the start of the child (so some land while it
// opens the file), the others from its first acknowledged append (so that, however slow a
// loaded machine makes the child's start, some land deep in steady appends).
// RECKON_CRASH_ITERATIONS overrides the number of kill points (the heavy tier raises it).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

#include "reckon/storage/sqlite/sqlite_journal.h"
#include "reckon/storage/sqlite/sqlite.h"
#include "tests/support/temp_dir.h"

namespace reckon {
namespace {

using namespace storage;

constexpr int kRuns = 8;

struct Child {
  pid_t pid = -1;
  int stdout_fd = -1;
};

Child Spawn(const std::string& journal, int appends_per_run) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::string runs = std::to_string(kRuns), appends = std::to_string(appends_per_run);
    execl(RECKON_CRASH_CHILD, RECKON_CRASH_CHILD, journal.c_str(), runs.c_str(),
          appends.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  return {pid, fds[0]};
}

// Reads from the (running) child until its first acknowledgement line is whole, or the child
// ends, or 10 s pass; returns what it read, for CollectAcks.
std::string AwaitFirstAck(int fd) {
  std::string data;
  char buf[4096];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (data.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    data.append(buf, static_cast<std::size_t>(n));
  }
  return data;
}

// Reads everything the (dead) child wrote: its acknowledged appends, run -> highest seq.
// `data` holds what was read from `fd` before.
void CollectAcks(int fd, std::map<int, std::int64_t>& acked, std::string data = {}) {
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) data.append(buf, static_cast<std::size_t>(n));
  close(fd);
  std::istringstream lines(data);
  int run;
  std::int64_t seq;
  while (lines >> run >> seq) acked[run] = std::max(acked[run], seq);
}

int Iterations() {
  const char* env = std::getenv("RECKON_CRASH_ITERATIONS");
  return env ? std::atoi(env) : 40;
}

TEST(JournalCrashTest, AcknowledgedAppendsSurviveSigkillAtManyPoints) {
  testing::TempDir dir;
  const std::string path = dir.File("crash.db");
  std::map<int, std::int64_t> acked;  // run -> highest acknowledged seq, across all kills
  std::mt19937 rng(20261130);
  const int iterations = Iterations();
  int killed_mid_run = 0;
  for (int i = 0; i < iterations; ++i) {
    Child child = Spawn(path, 200);
    ASSERT_GT(child.pid, 0);
    // Kill points spread from "while opening the file" to "deep in steady appends".
    std::string read_before;
    if (i % 2 == 1) read_before = AwaitFirstAck(child.stdout_fd);
    std::uniform_int_distribution<int> delay_us(0, 2 + (i % 10) * 3000);
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    kill(child.pid, SIGKILL);
    int status = 0;
    waitpid(child.pid, &status, 0);
    if (WIFSIGNALED(status)) ++killed_mid_run;
    CollectAcks(child.stdout_fd, acked, std::move(read_before));

    auto journal = OpenSqliteJournal(path);
    ASSERT_TRUE(journal) << "iteration " << i << ": " << journal.error().ToString();
    auto integrity = journal.value()->IntegrityCheck();
    ASSERT_TRUE(integrity);
    ASSERT_EQ(integrity.value(), "ok") << "iteration " << i;
    for (int r = 0; r < kRuns; ++r) {
      const std::string id = "run-" + std::to_string(r);
      auto run = journal.value()->FindRun({id, "r1"});
      ASSERT_TRUE(run);
      const std::int64_t events_count = run.value() ? run.value()->next_seq - 1 : 0;
      // Every acknowledged append is there: its last event is at ack + 1.
      if (acked.count(r)) {
        ASSERT_GE(events_count, acked[r] + 1) << "iteration " << i << ", " << id
                                              << ": an acknowledged append was lost";
      }
      auto events = journal.value()->ReadEvents({id, "r1"});
      ASSERT_TRUE(events) << events.error().ToString();
      ASSERT_EQ(std::int64_t(events.value().size()), events_count) << id;
      ASSERT_EQ(events_count % 2, 0) << id << ": half a transaction is visible";
      auto op = journal.value()->FindOperation("op-" + id);
      ASSERT_TRUE(op);
      if (events_count == 0) {
        EXPECT_FALSE(op.value().has_value());
        continue;
      }
      ASSERT_TRUE(op.value().has_value()) << id;
      EXPECT_EQ(op.value()->attempt, events_count) << id << ": operation row out of step";
    }
    // No journal read lists approvals: count the rows in the file itself.
    auto db = SqliteDb::Open(path, /*read_only=*/true);
    ASSERT_TRUE(db) << db.error().ToString();
    auto approvals = db.value().QueryInt("SELECT count(*) FROM approvals");
    ASSERT_TRUE(approvals) << approvals.error().ToString();
    std::int64_t total_events = 0;
    auto runs = journal.value()->ListRuns();
    ASSERT_TRUE(runs);
    for (const RunRow& row : runs.value()) total_events += row.next_seq - 1;
    EXPECT_EQ(approvals.value() * 2, total_events)
        << "iteration " << i << ": approval rows out of step with events";
  }
  std::int64_t total_acked = 0;
  for (auto& [run, seq] : acked) total_acked += seq;
  RecordProperty("kill_points", iterations);
  RecordProperty("killed_mid_run", killed_mid_run);
  std::printf("kill points: %d (%d killed while running), acknowledged appends tracked: %lld\n",
              iterations, killed_mid_run, static_cast<long long>(total_acked));
  EXPECT_GT(total_acked, 0) << "the child never got to acknowledge an append";
}

}  // namespace
}  // namespace reckon
