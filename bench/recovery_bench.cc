// recovery_bench: W6 of issue 18, the restart of a `reckon server` killed with SIGKILL while N
// workflows each had one tool operation in flight (docs/PERFORMANCE.md).
//
// For each N of --runs:
//   1. Seeds the journal: a child process (this program, --seed-child) runs a real embedded
//      engine (host/embedded_host.h, the same engine and Decider as the server's) on a new
//      SQLite journal with synchronous=OFF, starts N "ten_calls" runs (bench/ten_calls.h) whose
//      first --committed-steps calls of "noop" succeed and whose next call never returns, waits
//      until every one of the N attempts has started (a tool runs only once its AttemptStarted is
//      committed), and SIGKILLs itself. The journal then holds exactly what a kill -9 leaves:
//      N running runs, each with one operation in_flight. The engine's clock does not move
//      (testkit/manual_clock.h), so no attempt deadline fires while it seeds. It also journals
//      the "noop" contract as a server does when a worker registers it (the contracts table).
//   2. Restarts: spawns `reckon server` on that journal (--insecure-dev --quiet) and measures
//      from the spawn to
//        (a) listening: the server has loaded, folded and queued every running run (it writes
//            --port-file once Engine::Recover has returned, api/server/server_host.cc);
//        (b) re-armed: every run's recovery batch committed (its in-flight attempt journaled
//            as OutcomeUnknown + RetryScheduled, the retry armed; read from runs.next_seq). Workflow code lives in workers: a run is re-armed once a worker replayed it;
//            --workers bench_worker processes connect as soon as the server listens (as workers
//            that reconnect at once);
//        (c) the first step committed after the restart (an operation's retry committed);
//        (d) with N <= --finish-max, every run completed.
//      (b)-(d) are read from the journal through a read-only connection of this program, polled
//      at an interval of twice the query's own time (at least 5 ms), so their resolution is
//      that interval (printed).
// With --perf-runs N the restart of that N runs under `perf record --call-graph dwarf` (file
// --perf-out): the
// figures of that round include perf's overhead.
//
//   recovery_bench --dir DIR [--runs 1000,10000,100000] [--committed-steps K] [--workers W]
//                  [--finish-max N] [--perf-runs N --perf-out FILE]
#include <CLI/CLI.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "bench/fsync_floor.h"
#include "bench/machine.h"
#include "bench/ten_calls.h"
#include "reckon/contract/contract_json.h"
#include "reckon/storage/sqlite/sqlite.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "reckon/testkit/manual_clock.h"
#include "reckon/host/embedded_host.h"
#include "tests/support/subprocess.h"

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace reckon;
using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

double Seconds(Steady::time_point from, Steady::time_point to = Steady::now()) {
  return std::chrono::duration<double>(to - from).count();
}

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "recovery_bench: %s\n", what.c_str());
  std::exit(1);
}

void RemoveJournal(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", ".lock", ".admin-token"}) {
    std::filesystem::remove(path + suffix);
  }
}

// --- the seeding child --------------------------------------------------------------------

// Starts `runs` ten_calls runs on a new journal at `path`; each commits `committed` noop calls
// and then waits forever in the next one. Once all `runs` attempts are in flight (journaled),
// prints "seeded" and kills itself with SIGKILL. Never returns.
[[noreturn]] void SeedChild(const std::string& path, int runs, int committed) {
  const auto start = Steady::now();
  storage::SqliteJournalOptions journal_options;
  journal_options.sync = storage::SqliteJournalOptions::Sync::kOff;
  auto journal = storage::OpenSqliteJournal(path, journal_options);
  if (!journal) Fail("seeding: " + journal.error().ToString());
  testkit::ManualClock clock;  // never moves: no deadline, retry or timer fires while seeding
  EmbeddedHostOptions options;
  options.clock = &clock;
  EmbeddedHost host(std::move(journal).value(), options);
  // The contract row a server journals when a worker first registers the tool.
  const ToolContract contract = bench::NoopContract();
  auto hash = ContractHash(contract);
  if (!hash) Fail("seeding: " + hash.error().ToString());
  if (auto put = host.journal().PutContract(storage::ContractRow{
          contract.name, hash.value(), json::serialize(ContractToJson(contract)),
          clock.NowMicros()});
      !put) {
    Fail("seeding: " + put.error().ToString());
  }
  std::map<std::string, int> calls;  // per run
  int in_flight = 0;
  auto noop = [&](json::value, ToolCallContext ctx) -> asio::awaitable<AttemptOutcome> {
    if (calls[ctx.workflow_id]++ < committed) co_return ToolSucceeded(json::object{{"ok", true}});
    if (++in_flight == runs) {
      std::printf("seeded %d runs with an attempt in flight in %.2f s\n", runs, Seconds(start));
      std::fflush(stdout);
      ::kill(::getpid(), SIGKILL);
    }
    asio::steady_timer never(co_await asio::this_coro::executor, std::chrono::hours(24 * 365));
    co_await never.async_wait(asio::use_awaitable);
    co_return ToolSucceeded(json::object{{"ok", true}});
  };
  (void)host.tools().Register(Tool{contract, noop, {}});
  (void)host.workflows().Register("ten_calls", bench::TenCalls);
  int next = 0;
  auto starter = [&]() -> asio::awaitable<void> {
    while (next < runs) {
      const std::string id = "w6-" + std::to_string(next++);
      auto started = host.engine().Start(id, "ten_calls", json::object{});
      auto ref = co_await std::move(started);
      if (!ref) Fail("seeding: start " + id + ": " + ref.error().ToString());
    }
  };
  auto main = [&]() -> asio::awaitable<Result<void>> {
    auto recovered = host.Recover();
    RECKON_CO_TRY(co_await std::move(recovered));
    for (int i = 0; i < 64; ++i) asio::co_spawn(host.io(), starter(), asio::detached);
    asio::steady_timer forever(host.io(), std::chrono::hours(24));
    co_await forever.async_wait(asio::use_awaitable);
    co_return Ok();
  };
  auto ran = host.Run(main());
  Fail("seeding ended before every attempt was in flight: " +
       (ran ? std::string("?") : ran.error().ToString()));
}

// --- the parent ---------------------------------------------------------------------------

// The runs table, one scan: every seeded run has the same history, so the same next_seq (S)
// before the restart. Its recovery batch (OutcomeUnknown, RetryScheduled) makes it S + 2; the
// retry's AttemptStarted S + 3; the retry's OperationCommitted (with the next call) >= S + 4.
struct JournalCounts {
  std::int64_t min_next_seq = 0;
  std::int64_t max_next_seq = 0;
  std::int64_t completed = 0;  // runs completed
};

class JournalWatch {
 public:
  explicit JournalWatch(const std::string& path) {
    auto db = storage::SqliteDb::Open(path, /*read_only=*/true);
    if (!db) Fail("read-only connection: " + db.error().ToString());
    db_.emplace(std::move(db).value());
    db_->SetBusyWait(5000ms);
  }
  JournalCounts Read() {
    JournalCounts c;
    auto runs = db_->Prepare(
        "SELECT min(next_seq), max(next_seq), coalesce(sum(status = 'completed'), 0) FROM runs");
    if (!runs) Fail(runs.error().ToString());
    auto row = runs.value().Step();
    if (!row) Fail(row.error().ToString());
    c.min_next_seq = runs.value().ColumnInt(0);
    c.max_next_seq = runs.value().ColumnInt(1);
    c.completed = runs.value().ColumnInt(2);
    return c;
  }

 private:
  std::optional<storage::SqliteDb> db_;
};

int WaitPort(const std::string& port_file, testing::Subprocess& server, const std::string& log) {
  for (int i = 0; i < 600000; ++i) {
    std::ifstream file(port_file);
    int port = 0;
    if (file >> port && port > 0) return port;
    if (server.WaitFor(0ms)) Fail("the server exited; see " + log);
    std::this_thread::sleep_for(1ms);
  }
  Fail("the server did not listen within 10 minutes; see " + log);
}

// The child of `pid` (perf's workload), or 0.
pid_t ChildOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  pid_t child = 0;
  in >> child;
  return child;
}

struct Round {
  int runs = 0;
  double seed_s = 0, listen_s = 0, rearmed_s = 0, first_commit_s = 0, done_s = -1;
  double poll_ms = 0;
};

Round RunRound(const std::string& self, const std::string& dir, int runs, int committed,
               int workers, int finish_max, const std::string& perf_out) {
  Round r;
  r.runs = runs;
  const std::string journal = dir + "/recovery.db";
  RemoveJournal(journal);
  {
    testing::SubprocessOptions seed;
    seed.args = {"--seed-child", journal, "--runs", std::to_string(runs), "--committed-steps",
                 std::to_string(committed)};
    seed.stderr_path = dir + "/seed.log";
    const auto start = Steady::now();
    auto child = testing::Subprocess::Start(self, seed);
    if (!child) Fail(child.error().ToString());
    auto line = child.value().ReadLine(std::chrono::minutes(30));
    auto status = child.value().Wait();
    r.seed_s = Seconds(start);
    if (!line || !status || !status.value().KilledBy(SIGKILL)) {
      Fail("seeding failed; see " + dir + "/seed.log");
    }
    std::printf("  %s (child process, %.2f s in all)\n", line.value().c_str(), r.seed_s);
  }
  JournalWatch watch(journal);
  const JournalCounts before = watch.Read();
  if (before.min_next_seq != before.max_next_seq || before.completed != 0) {
    Fail("the seeded runs do not all have the same history");
  }
  const std::int64_t seeded_next = before.max_next_seq;
  const std::string port_file = dir + "/recovery-port";
  const std::string log = dir + "/recovery-server.log";
  std::filesystem::remove(port_file);
  std::filesystem::remove(log);
  testing::SubprocessOptions server_options;
  server_options.args = {"server",      "--journal",   journal,     "--listen",
                         "127.0.0.1:0", "--port-file", port_file,   "--insecure-dev",
                         "--trace",     "/dev/null",   "--quiet"};
  server_options.stderr_path = log;
  std::string program = RECKON_CLI_PATH;
  if (!perf_out.empty()) {
    server_options.args.insert(server_options.args.begin(),
                               {"record", "--call-graph", "dwarf,16384", "-F", "250", "-o", perf_out, "--",
                                RECKON_CLI_PATH});
    program = "/usr/bin/perf";
  }
  const auto spawn = Steady::now();
  auto server = testing::Subprocess::Start(program, server_options);
  if (!server) Fail(server.error().ToString());
  const int port = WaitPort(port_file, server.value(), log);
  r.listen_s = Seconds(spawn);
  std::vector<testing::Subprocess> worker_processes;
  for (int i = 0; i < workers; ++i) {
    testing::SubprocessOptions w;
    w.args = {"--server", "127.0.0.1:" + std::to_string(port), "--id", "w6-" + std::to_string(i)};
    w.stderr_path = dir + "/recovery-worker.log";
    auto started = testing::Subprocess::Start(BENCH_WORKER_PATH, w);
    if (!started) Fail(started.error().ToString());
    worker_processes.push_back(std::move(started).value());
  }
  double slowest_poll = 0;
  const auto give_up = spawn + std::chrono::minutes(30);
  while (Steady::now() < give_up) {
    const auto t = Steady::now();
    const JournalCounts c = watch.Read();
    const double query_s = Seconds(t);
    if (r.first_commit_s == 0 && c.max_next_seq >= seeded_next + 4) r.first_commit_s = Seconds(spawn);
    if (r.rearmed_s == 0 && c.min_next_seq >= seeded_next + 2) r.rearmed_s = Seconds(spawn);
    if (c.completed == runs) r.done_s = Seconds(spawn);
    const bool finished = r.first_commit_s > 0 && r.rearmed_s > 0 &&
                          (runs > finish_max || r.done_s > 0);
    if (finished) break;
    if (server.value().WaitFor(0ms)) Fail("the server exited; see " + log);
    const auto pause = std::max<std::chrono::duration<double>>(5ms, 2 * (Steady::now() - t));
    slowest_poll = std::max(slowest_poll, query_s + pause.count());
    std::this_thread::sleep_for(pause);
  }
  r.poll_ms = slowest_poll * 1000;
  if (r.rearmed_s == 0 || r.first_commit_s == 0) Fail("the runs were not re-armed in 30 minutes");
  worker_processes.clear();
  if (perf_out.empty()) {
    (void)server.value().Terminate();
  } else if (pid_t child = ChildOf(server.value().pid()); child > 0) {
    ::kill(child, SIGTERM);  // perf writes its file once its workload exits
    (void)server.value().Wait();
  }
  RemoveJournal(journal);
  return r;
}

std::vector<int> ParseList(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(std::stoi(item));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"recovery_bench: W6, a server's restart after kill -9 with runs in flight"};
  std::string dir = std::filesystem::current_path().string();
  std::string runs_list = "1000,10000,100000";
  std::string seed_child, perf_out;
  int committed = 3, workers = 2, finish_max = 10000, perf_runs = 0;
  app.add_option("--dir", dir, "scratch directory (on the disk to measure, not tmpfs)");
  app.add_option("--runs", runs_list, "the N of each round, comma-separated");
  app.add_option("--committed-steps", committed,
                 "noop calls each run commits before the one left in flight (0-9)")
      ->check(CLI::Range(0, 9));
  app.add_option("--workers", workers, "bench_worker processes after the restart");
  app.add_option("--finish-max", finish_max, "wait for every run to complete up to this N");
  app.add_option("--perf-runs", perf_runs, "restart this N under perf record -g");
  app.add_option("--perf-out", perf_out, "perf's data file (with --perf-runs)");
  app.add_option("--seed-child", seed_child, "internal: seed this journal and SIGKILL itself");
  CLI11_PARSE(app, argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (!seed_child.empty()) {
    int n = 0;
    try {
      n = ParseList(runs_list).at(0);
    } catch (const std::exception&) {
      Fail("--runs");
    }
    SeedChild(seed_child, n, committed);
  }
  if (perf_runs > 0 && perf_out.empty()) perf_out = dir + "/recovery-perf.data";
  std::printf("%s\n", bench::DescribeMachine(dir).c_str());
  const bench::FsyncFloor floor = bench::MeasureFsyncFloor(dir, 200);
  std::printf("floor: 4 KiB write + fdatasync: mean %.1f us, p50 %.1f us, p99 %.1f us\n",
              floor.mean_us, floor.p50_us, floor.p99_us);
  std::printf("W6: ten_calls runs, %d noop call(s) committed and the next in flight, kill -9, "
              "restart; %d bench_worker(s) connect when the server listens\n",
              committed, workers);
  const std::string self = std::filesystem::canonical("/proc/self/exe").string();
  std::vector<Round> rounds;
  for (int n : ParseList(runs_list)) {
    std::printf("N = %d\n", n);
    Round r = RunRound(self, dir, n, committed, workers, finish_max,
                       n == perf_runs ? perf_out : std::string());
    std::printf("  listening %.3f s, re-armed %.3f s, first step committed %.3f s", r.listen_s,
                r.rearmed_s, r.first_commit_s);
    if (r.done_s > 0) std::printf(", all completed %.3f s", r.done_s);
    std::printf("  (poll <= %.0f ms)%s\n", r.poll_ms, n == perf_runs ? "  [under perf]" : "");
    rounds.push_back(r);
  }
  std::printf("%-8s %10s %12s %12s %14s %14s %12s\n", "N", "seed s", "listen s", "re-armed s",
              "first step s", "re-armed us/run", "all done s");
  for (const Round& r : rounds) {
    std::printf("%-8d %10.2f %12.3f %12.3f %14.3f %14.1f", r.runs, r.seed_s, r.listen_s,
                r.rearmed_s, r.first_commit_s, r.rearmed_s * 1e6 / r.runs);
    if (r.done_s > 0) {
      std::printf(" %12.3f\n", r.done_s);
    } else {
      std::printf(" %12s\n", "-");
    }
  }
  std::printf("target: re-armed <= 5 s at N = 10,000\n");
  return 0;
}
