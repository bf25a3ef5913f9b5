// journal_bench: journal appends per second, next to the disk's fsync floor.
//
//   single   one append per transaction, one caller (Journal::Append)
//   group N  N concurrent appenders (coroutines) through the GroupCommitter; commits run
//            either on the appenders' thread (inline) or on a dedicated commit thread
//
// Each append is what a typical engine transition writes: two events and one operation row.
// Every figure is printed with its ratio to the floor measured in the same run (4 KiB write +
// fdatasync in the same directory). Usage: journal_bench [--dir DIR] [--seconds S]
#include <CLI/CLI.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "bench/fsync_floor.h"
#include "bench/machine.h"
#include "reckon/storage/group_commit.h"
#include "reckon/storage/sqlite/sqlite_journal.h"

namespace {

namespace asio = boost::asio;
using namespace reckon::storage;
using Clock = std::chrono::steady_clock;

AppendRequest Transition(const std::string& workflow_id, std::int64_t seq) {
  AppendRequest request;
  request.run = {workflow_id, "r1"};
  request.expected_next_seq = seq;
  request.now_us = seq;
  request.events = {
      OperationCommitted{"op-" + workflow_id, 1, R"({"ok":true})", "ref",
                         CommitSource::kAttempt},
      OperationPrepared{"s", "op2-" + workflow_id, "noop", "ch", "fp",
                        reckon::SideEffect::kReadOnly, "{}"}};
  request.operations = {OperationRow{"op-" + workflow_id, "s", "noop",
                                     reckon::SideEffect::kReadOnly, "committed", 1, "fp", "ch",
                                     "ref", 0}};
  return request;
}

std::unique_ptr<Journal> OpenFresh(const std::string& path) {
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  auto journal = OpenSqliteJournal(path);
  if (!journal) {
    std::fprintf(stderr, "%s\n", journal.error().ToString().c_str());
    std::exit(1);
  }
  return std::move(journal).value();
}

double SingleAppends(const std::string& path, double seconds) {
  auto journal = OpenFresh(path);
  std::int64_t seq = 1, count = 0;
  auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  auto start = Clock::now();
  while (Clock::now() < end) {
    auto ack = journal->Append(Transition("w", seq));
    if (!ack) std::exit(1);
    seq = ack.value().next_seq;
    ++count;
  }
  return count / std::chrono::duration<double>(Clock::now() - start).count();
}

struct GroupResult {
  double appends_per_s = 0;
  double appends_per_commit = 0;
};

asio::awaitable<void> Appender(GroupCommitter& committer, std::string id, Clock::time_point end,
                               std::atomic<std::int64_t>& count) {
  std::int64_t seq = 1;
  while (Clock::now() < end) {
    auto ack = co_await committer.AsyncAppend(Transition(id, seq), asio::use_awaitable);
    if (!ack) std::exit(1);
    seq = ack.value().next_seq;
    count.fetch_add(1, std::memory_order_relaxed);
  }
}

GroupResult GroupAppends(const std::string& path, int concurrency, double seconds,
                         bool dedicated_commit_thread) {
  auto journal = OpenFresh(path);
  asio::io_context io;
  asio::thread_pool commit_thread(1);
  auto commit_executor =
      dedicated_commit_thread ? commit_thread.get_executor() : asio::any_io_executor(io.get_executor());
  GroupCommitter committer(*journal, commit_executor);
  std::atomic<std::int64_t> count{0};
  auto start = Clock::now();
  auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  for (int i = 0; i < concurrency; ++i) {
    asio::co_spawn(io, Appender(committer, "w" + std::to_string(i), end, count), asio::detached);
  }
  io.run();
  double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  commit_thread.join();
  auto stats = committer.stats();
  return {count.load() / elapsed, double(stats.appends) / double(std::max<std::uint64_t>(1, stats.commits))};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"journal_bench: journal appends/s as ratios to the fsync floor"};
  std::string dir = std::filesystem::current_path().string();
  double seconds = 3;
  app.add_option("--dir", dir, "directory for the scratch journal (use the disk you care about)");
  app.add_option("--seconds", seconds, "duration of each measurement");
  CLI11_PARSE(app, argc, argv);
  const std::string path = dir + "/journal_bench.db";

  std::printf("%s\n", reckon::bench::DescribeMachine(dir).c_str());
  auto floor = reckon::bench::MeasureFsyncFloor(dir, 2000);
  std::printf("floor: 4 KiB write + fdatasync: mean %.1f us, p50 %.1f us, p99 %.1f us = %.0f/s\n\n",
              floor.mean_us, floor.p50_us, floor.p99_us, floor.ops_per_s);
  std::printf("%-34s %12s %14s %16s\n", "journal (synchronous=FULL)", "appends/s",
              "x fsync floor", "appends/commit");
  double single = SingleAppends(path, seconds);
  std::printf("%-34s %12.0f %14.2f %16.1f\n", "single-append transactions", single,
              single / floor.ops_per_s, 1.0);
  for (bool dedicated : {false, true}) {
    for (int concurrency : {1, 8, 32}) {
      auto result = GroupAppends(path, concurrency, seconds, dedicated);
      char label[64];
      std::snprintf(label, sizeof label, "group commit, c=%d, %s", concurrency,
                    dedicated ? "commit thread" : "inline");
      std::printf("%-34s %12.0f %14.2f %16.1f\n", label, result.appends_per_s,
                  result.appends_per_s / floor.ops_per_s, result.appends_per_commit);
    }
  }
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  return 0;
}
