// The process that journal_crash_test kills. It appends to RUNS runs concurrently through a
// GroupCommitter and, after each acknowledged append, writes "RUN SEQ\n" to stdout (unbuffered),
// so the parent knows exactly which appends were acknowledged before the SIGKILL.
//
// Every append of run r at sequence s is one transaction that must be seen whole or not at
// all: two events (markers "a" and "b"), the operation row "op-r" whose attempt equals the
// number of events, and one approval row "r-s". journal_crash_test checks these invariants.
//
// Usage: journal_crash_child JOURNAL RUNS APPENDS_PER_RUN
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "reckon/storage/group_commit.h"
#include "reckon/storage/sqlite/sqlite_journal.h"

namespace {

namespace asio = boost::asio;
using namespace reckon::storage;

AppendRequest MakeAppend(int run, std::int64_t seq) {
  const std::string id = "run-" + std::to_string(run);
  AppendRequest request;
  request.run = {id, "r1"};
  request.expected_next_seq = seq;
  request.now_us = seq;
  request.workflow_type = "crash";
  request.events = {MarkerRecorded{"a", "step", std::to_string(seq)},
                    MarkerRecorded{"b", "step", std::to_string(seq)}};
  request.operations = {OperationRow{"op-" + id, "s", "tool", reckon::SideEffect::kReadOnly,
                                     "in_flight", seq + 1, "fp", "ch", "", 0}};
  request.approvals = {ApprovalRow{id + "-" + std::to_string(seq), "op-" + id, "ih",
                                   ApprovalState::kRequested}};
  return request;
}

void WriteAck(int run, std::int64_t seq) {
  std::string line = std::to_string(run) + " " + std::to_string(seq) + "\n";
  if (::write(STDOUT_FILENO, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    std::_Exit(3);  // the parent is gone
  }
}

asio::awaitable<void> AppendLoop(GroupCommitter& committer, int run, std::int64_t next_seq,
                                 int appends) {
  for (int i = 0; i < appends; ++i) {
    auto ack = co_await committer.AsyncAppend(MakeAppend(run, next_seq), asio::use_awaitable);
    if (!ack) {
      std::fprintf(stderr, "append failed: %s\n", ack.error().ToString().c_str());
      std::_Exit(4);
    }
    WriteAck(run, next_seq);
    next_seq = ack.value().next_seq;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: journal_crash_child JOURNAL RUNS APPENDS_PER_RUN\n");
    return 2;
  }
  const int runs = std::atoi(argv[2]);
  const int appends = std::atoi(argv[3]);
  auto journal = OpenSqliteJournal(argv[1]);
  if (!journal) {
    std::fprintf(stderr, "%s\n", journal.error().ToString().c_str());
    return 1;
  }
  asio::io_context io;
  GroupCommitter committer(*journal.value(), io.get_executor());
  for (int r = 0; r < runs; ++r) {
    auto run = journal.value()->FindRun({"run-" + std::to_string(r), "r1"});
    if (!run) return 1;
    std::int64_t next_seq = run.value() ? run.value()->next_seq : 1;
    asio::co_spawn(io, AppendLoop(committer, r, next_seq, appends), asio::detached);
  }
  io.run();
  return 0;
}
