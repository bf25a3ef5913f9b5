// large_journal_bench: W8 of issue 18, a `reckon server --http` on a journal of 1,000,000
// finished runs: the runs list, one run's history and `reckon show` must each answer in
// <= 20 ms of server time (docs/PERFORMANCE.md).
//
// The runs are real ten_calls runs (bench/ten_calls.h: 10 sequential calls of the read_only
// tool "noop"), copied: one run is first executed by a real embedded engine on a scratch
// journal, and its events and operation rows are the template. The template's commits (its
// events grouped by their commit time) are replayed for every run with the run's own ids
// (workflow id "run-NNNNNNN", run id and operation ids with their last 8 characters replaced
// by the run's number in hex, same lengths): 11 commits per run, 32 events and 10 operation
// rows. Runs advance in groups of --interleave (default 32, W3's concurrency): commit k of
// every run of a group before commit k+1 of any, so the B-trees fill as they do when that
// many runs interleave, not as a bulk load would. Each transaction holds about 2,000 commits
// (AppendGroup) and the journal is written with synchronous=OFF: seeding only. --interleave 0
// instead appends each run's whole history at once (a bulk load: faster, denser pages).
//
// Then it prints the journal's size (database + WAL) per step, checkpoints (closing the last
// connection), prints it again, starts the real `reckon server --http` on it (its default
// checks, --insecure-dev), and times over HTTP on 127.0.0.1 with the server's own time from the
// Server-Timing header:
//   - the runs list, first page, and a page in the middle of the journal (cursor = run_pk
//     N/2: the cursor is a run_pk, api/server/queries.cc);
//   - a run's detail (GET /api/v1/runs/ID: the describeWorkflow request, the one request
//     `reckon show` makes) and its history;
// and `reckon show ID` as a CLI process (its wall time, beside `reckon auth whoami`'s, the floor of
// a CLI process that makes one request). The floor of the HTTP figures: GET /api/v1/whoami.
//
//   large_journal_bench --dir DIR [--runs N] [--repeat R] [--cli-repeat C] [--interleave G]
//                       [--keep]
//   (--keep: leave the journal in DIR/large.db, and reuse it if it is there)
#include <CLI/CLI.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "bench/fsync_floor.h"
#include "bench/machine.h"
#include "bench/server_timing_client.h"
#include "bench/ten_calls.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "reckon/host/embedded_host.h"
#include "tests/support/subprocess.h"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using namespace reckon;
using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "large_journal_bench: %s\n", what.c_str());
  std::exit(1);
}

double Seconds(Steady::time_point from) {
  return std::chrono::duration<double>(Steady::now() - from).count();
}

void RemoveJournal(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", ".lock", ".admin-token", ".trace.jsonl"}) {
    std::filesystem::remove(path + suffix);
  }
}

std::uintmax_t FileSize(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : size;
}

// --- the template run -----------------------------------------------------------------------

struct Commit {
  std::vector<storage::EventBody> events;
  std::vector<std::string> operations;  // touched by this commit, in order
  bool last = false;
};

struct Template {
  storage::RunRef ref;
  std::vector<Commit> commits;
  std::map<std::string, storage::OperationRow> final_rows;  // by operation id
  std::set<std::string> committed_by;  // "k/op": op is committed once commit k is applied
  int events = 0;
};

const std::string* OperationIdOf(const storage::EventBody& body) {
  return std::visit(
      [](const auto& e) -> const std::string* {
        if constexpr (requires { e.operation_id; }) {
          return &e.operation_id;
        } else {
          return nullptr;
        }
      },
      body);
}

Template MakeTemplate(const std::string& dir) {
  const std::string path = dir + "/template.db";
  RemoveJournal(path);
  storage::SqliteJournalOptions options;
  options.sync = storage::SqliteJournalOptions::Sync::kOff;
  auto journal = storage::OpenSqliteJournal(path, options);
  if (!journal) Fail(journal.error().ToString());
  EmbeddedHost host(std::move(journal).value());
  (void)host.tools().Register(Tool{bench::NoopContract(), bench::Noop, {}});
  (void)host.workflows().Register("ten_calls", bench::TenCalls);
  Template t;
  auto main = [&]() -> asio::awaitable<Result<void>> {
    auto recovered = host.Recover();
    RECKON_CO_TRY(co_await std::move(recovered));
    auto started = host.engine().Start("run-0000000", "ten_calls", json::object{});
    auto ref = co_await std::move(started);
    if (!ref) co_return ref.error();
    t.ref = ref.value();
    auto settled = host.UntilSettled("run-0000000");
    RECKON_CO_TRY(co_await std::move(settled));
    co_return Ok();
  };
  if (auto ran = host.Run(main()); !ran) Fail("template run: " + ran.error().ToString());
  auto events = host.journal().ReadEvents(t.ref, 1);
  auto row = host.journal().FindRun(t.ref);
  if (!events || !row || !row.value()) Fail("template run: cannot read it back");
  auto operations = host.journal().ListOperations(row.value()->run_pk);
  if (!operations) Fail(operations.error().ToString());
  if (row.value()->status != storage::RunStatus::kCompleted) Fail("template run did not complete");
  for (const auto& op : operations.value()) t.final_rows[op.operation_id] = op;
  std::int64_t at = -1;
  for (const storage::Event& e : events.value()) {
    if (e.recorded_at_us != at) t.commits.emplace_back();
    at = e.recorded_at_us;
    Commit& c = t.commits.back();
    c.events.push_back(e.body);
    if (const std::string* op = OperationIdOf(e.body)) {
      if (std::find(c.operations.begin(), c.operations.end(), *op) == c.operations.end()) {
        c.operations.push_back(*op);
      }
      if (std::holds_alternative<storage::OperationCommitted>(e.body)) {
        t.committed_by.insert(std::to_string(t.commits.size() - 1) + "/" + *op);
      }
    }
  }
  t.commits.back().last = true;
  t.events = static_cast<int>(events.value().size());
  RemoveJournal(path);
  return t;
}

// `id` with its last 8 characters replaced by `n` in hex (appended, if it is shorter).
std::string Stamp(const std::string& id, int n) {
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", n);
  if (id.size() < 16) return id + hex;
  return id.substr(0, id.size() - 8) + hex;
}

std::string RunId(int n) {
  char id[16];
  std::snprintf(id, sizeof id, "run-%07d", n);
  return id;
}

// The append of commit `k` of the template for run `n`.
storage::AppendRequest Instantiate(const Template& t, int k, int n, std::int64_t next_seq,
                                   std::int64_t now_us) {
  storage::AppendRequest r;
  r.run = {RunId(n), Stamp(t.ref.run_id, n)};
  r.expected_next_seq = next_seq;
  r.now_us = now_us;
  const Commit& c = t.commits[k];
  if (k == 0) r.workflow_type = "ten_calls";
  if (c.last) r.status = storage::RunStatus::kCompleted;
  r.events = c.events;
  for (auto& body : r.events) {
    std::visit(
        [n](auto& e) {
          if constexpr (requires { e.operation_id; }) e.operation_id = Stamp(e.operation_id, n);
        },
        body);
  }
  for (const std::string& op : c.operations) {
    storage::OperationRow row = t.final_rows.at(op);
    row.operation_id = Stamp(op, n);
    bool committed = false;
    for (int j = 0; j <= k && !committed; ++j) {
      committed = t.committed_by.count(std::to_string(j) + "/" + op) != 0;
    }
    if (!committed) {
      row.state = "in_flight";
      row.provider_ref.clear();
    }
    r.operations.push_back(std::move(row));
  }
  return r;
}

void Seed(const std::string& path, const Template& t, int runs, int interleave) {
  storage::SqliteJournalOptions options;
  options.sync = storage::SqliteJournalOptions::Sync::kOff;
  options.cache_kib = 2 << 20;  // the random inserts of operations_by_id stay in memory
  auto journal = storage::SqliteJournal::Open(path, options);
  if (!journal) Fail(journal.error().ToString());
  const auto start = Steady::now();
  const int commits = static_cast<int>(t.commits.size());
  std::vector<std::int64_t> seq_after(commits + 1, 1);
  for (int k = 0; k < commits; ++k) seq_after[k + 1] = seq_after[k] + t.commits[k].events.size();
  constexpr std::size_t kPerTransaction = 2000;
  std::int64_t now_us = 1'750'000'000'000'000;
  std::vector<storage::AppendRequest> batch;
  auto flush = [&] {
    std::vector<const storage::AppendRequest*> pointers;
    for (const auto& r : batch) pointers.push_back(&r);
    for (auto& result : journal.value()->AppendGroup(pointers)) {
      if (!result) Fail("seeding: " + result.error().ToString());
    }
    batch.clear();
  };
  if (interleave == 0) {
    // Bulk: each run's whole history in one append (its final operation rows).
    for (int n = 0; n < runs; ++n) {
      storage::AppendRequest whole = Instantiate(t, 0, n, 1, now_us += 97);
      for (int k = 1; k < commits; ++k) {
        storage::AppendRequest part = Instantiate(t, k, n, 1, now_us);
        for (auto& e : part.events) whole.events.push_back(std::move(e));
        for (auto& op : part.operations) {
          auto same = std::find_if(whole.operations.begin(), whole.operations.end(),
                                   [&](const auto& o) { return o.operation_id == op.operation_id; });
          if (same != whole.operations.end()) *same = op;
          else whole.operations.push_back(std::move(op));
        }
      }
      whole.status = storage::RunStatus::kCompleted;
      batch.push_back(std::move(whole));
      if (batch.size() == kPerTransaction / 8) flush();
      if (n % 100000 == 99999) std::printf("  %d runs in %.0f s\n", n + 1, Seconds(start));
    }
  }
  for (int first = 0; interleave > 0 && first < runs; first += interleave) {
    const int end = std::min(runs, first + interleave);
    for (int k = 0; k < commits; ++k) {
      for (int n = first; n < end; ++n) {
        batch.push_back(Instantiate(t, k, n, seq_after[k], now_us += 97));
        if (batch.size() == kPerTransaction) flush();
      }
    }
    if (end / 100000 != first / 100000) std::printf("  %d runs in %.0f s\n", end, Seconds(start));
  }
  flush();
  const double bytes = FileSize(path) + FileSize(path + "-wal");
  std::printf("journal before checkpoint: %.0f MiB (database + WAL), %.0f bytes per step\n",
              bytes / (1 << 20), bytes / (static_cast<double>(runs) * 10));
  std::printf("seeded %d finished ten_calls runs (%d commits, %d events, %zu operations each) in "
              "%.1f s\n",
              runs, commits, t.events, t.final_rows.size(), Seconds(start));
}

// --- HTTP -----------------------------------------------------------------------------------

using Timing = bench::ServerTiming;
using Client = bench::ServerTimingClient;

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * v.size()))];
}

double Measure(Client& client, const std::string& label, const std::string& target, int repeat,
               double floor_ms) {
  const bench::ServerTimes t = bench::MeasureGet(client, target, repeat);
  const double p50 = t.p50_ms;
  std::printf("%-44s server p50 %7.3f ms  p99 %7.3f ms  (round trip p50 %6.3f ms, %zu B)",
              label.c_str(), p50, t.p99_ms, t.round_trip_p50_ms, t.bytes);
  if (floor_ms > 0) std::printf("  %.1f x floor", p50 / floor_ms);
  std::printf("\n");
  return p50;
}

// Wall time of `reckon ARGS...` as a process, p50 over `repeat`.
double CliWall(const std::vector<std::string>& args, int repeat, std::string* output) {
  std::vector<double> wall;
  for (int i = 0; i < repeat; ++i) {
    testing::SubprocessOptions options;
    options.args = args;
    const auto start = Steady::now();
    auto child = testing::Subprocess::Start(RECKON_CLI_PATH, options);
    if (!child) Fail(child.error().ToString());
    auto out = child.value().ReadAll(60s);
    auto status = child.value().Wait();
    wall.push_back(Seconds(start) * 1000);
    if (!out || !status || !status.value().Succeeded()) {
      Fail("reckon " + args.front() + " failed: " + (out ? out.value() : out.error().ToString()));
    }
    if (output) *output = out.value();
  }
  return Percentile(wall, 0.5);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"large_journal_bench: W8, reads of a server on a journal of many finished runs"};
  std::string dir = std::filesystem::current_path().string();
  int runs = 1000000, repeat = 200, interleave = 32, cli_repeat = 20;
  bool keep = false;
  app.add_option("--dir", dir, "scratch directory (on the disk to measure, not tmpfs)");
  app.add_option("--runs", runs, "finished runs to seed");
  app.add_option("--repeat", repeat, "HTTP requests per measurement");
  app.add_option("--cli-repeat", cli_repeat, "CLI processes per measurement");
  app.add_option("--interleave", interleave,
                 "runs that advance together while seeding, one commit each at a time; 0: each "
                 "run's whole history in one append (faster, denser B-trees)");
  app.add_flag("--keep", keep, "keep the journal (DIR/large.db) and reuse it when present");
  CLI11_PARSE(app, argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::printf("%s\n", bench::DescribeMachine(dir).c_str());
  const bench::FsyncFloor fsync_floor = bench::MeasureFsyncFloor(dir, 200);
  std::printf("floor: 4 KiB write + fdatasync: mean %.1f us, p50 %.1f us, p99 %.1f us\n",
              fsync_floor.mean_us, fsync_floor.p50_us, fsync_floor.p99_us);
  const std::string journal = dir + "/large.db";
  const bool reuse = keep && std::filesystem::exists(journal);
  constexpr int kSteps = 10;  // ten_calls
  if (!reuse) {
    RemoveJournal(journal);
    const Template t = MakeTemplate(dir);
    std::printf("template: run %s, %zu commits, %d events, operation ids like %s\n",
                t.ref.run_id.c_str(), t.commits.size(), t.events,
                t.final_rows.begin()->first.c_str());
    Seed(journal, t, runs, interleave);
  }
  {
    // Closing the last connection checkpoints the WAL into the database and removes it.
    storage::SqliteJournalOptions options;
    options.check_at_open = false;
    auto opened = storage::SqliteJournal::Open(journal, options);
    if (!opened) Fail(opened.error().ToString());
    auto db = storage::SqliteDb::Open(journal);
    if (db) (void)db.value().Exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  const double after = FileSize(journal) + FileSize(journal + "-wal");
  std::printf("journal after checkpoint: %.0f MiB, %.0f bytes per step (%d runs x %d steps)\n",
              after / (1 << 20), after / (static_cast<double>(runs) * kSteps), runs, kSteps);

  std::filesystem::remove(dir + "/http-port");
  std::filesystem::remove(dir + "/port");
  testing::SubprocessOptions options;
  options.args = {"server", "--journal", journal, "--listen", "127.0.0.1:0", "--port-file",
                  dir + "/port", "--quiet", "--insecure-dev", "--http", "127.0.0.1:0",
                  "--http-port-file", dir + "/http-port", "--trace", "/dev/null"};
  options.stderr_path = dir + "/large-server.log";
  auto server = testing::Subprocess::Start(RECKON_CLI_PATH, options);
  if (!server) Fail(server.error().ToString());
  int port = 0, http_port = 0;
  const auto start = Steady::now();
  for (int i = 0; i < 60000 && (port == 0 || http_port == 0); ++i) {
    std::ifstream a(dir + "/port"), b(dir + "/http-port");
    a >> port;
    b >> http_port;
    if (port == 0 || http_port == 0) std::this_thread::sleep_for(10ms);
    if (server.value().WaitFor(0ms)) Fail("the server exited; see " + options.stderr_path);
  }
  if (port == 0 || http_port == 0) Fail("the server did not start; see " + options.stderr_path);
  std::printf("server up on the journal in %.2f s (its integrity check at open included)\n",
              Seconds(start));
  Client client(http_port);
  const double floor = Measure(client, "floor: GET /api/v1/whoami", "/api/v1/whoami", repeat, 0);
  double worst = 0;
  auto measure = [&](const std::string& label, const std::string& target) {
    worst = std::max(worst, Measure(client, label, target, repeat, floor));
  };
  const std::string middle = RunId(runs / 2);
  measure("runs, first page of 50", "/api/v1/runs?limit=50");
  measure("runs, page of 50 at run_pk " + std::to_string(runs / 2) + " (cursor)",
          "/api/v1/runs?limit=50&after=" + std::to_string(runs / 2));
  measure("runs, page of 50 at run_pk 100 (cursor)", "/api/v1/runs?limit=50&after=100");
  measure("runs, status=completed, first page", "/api/v1/runs?limit=50&status=completed");
  measure("runs, type=ten_calls, first page", "/api/v1/runs?limit=50&type=ten_calls");
  measure("runs, id prefix " + middle.substr(0, 9), "/api/v1/runs?limit=50&id_prefix=" +
                                                          middle.substr(0, 9));
  measure("run detail = reckon show (" + middle + ")", "/api/v1/runs/" + middle);
  measure("run history (" + middle + ", 32 events)", "/api/v1/runs/" + middle + "/history");
  std::printf("worst p50 %.3f ms against the target of 20 ms of server time\n", worst);

  const std::string address = "127.0.0.1:" + std::to_string(port);
  std::string shown;
  const double whoami_ms = CliWall({"auth", "whoami", "--server", address}, cli_repeat, nullptr);
  const double show_ms = CliWall({"show", middle, "--server", address}, cli_repeat, &shown);
  std::printf("CLI process wall p50: reckon auth whoami %.2f ms (floor), reckon show %s %.2f ms "
              "(+%.2f ms); its first line: %s\n",
              whoami_ms, middle.c_str(), show_ms, show_ms - whoami_ms,
              shown.substr(0, shown.find('\n')).c_str());
  (void)server.value().Terminate();
  if (!keep) RemoveJournal(journal);
  return 0;
}
