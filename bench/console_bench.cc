// console_bench: what the console's two heaviest reads cost on a large journal (issue 12:
// "the runs list and a run-detail page must each answer in under 50 ms of server time").
//
// Seeds a journal with N finished refund runs (default 100,000; each: WorkflowStarted, one
// operation prepared and committed, WorkflowCompleted), starts the real `reckon server
// --http` on it, and times over HTTP on 127.0.0.1, reading the server's own time from the
// Server-Timing header of each reply:
//   - the runs list, first page and a page deep in the cursor chain, unfiltered and with each
//     filter (status, type, tool, needs a person, id prefix);
//   - a run's detail and its history.
// The floor: GET /api/v1/whoami in the same run (authentication, one protocol request, JSON).
//
//   console_bench --dir DIR [--runs N] [--repeat R]
#include <CLI/CLI.hpp>
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
#include <thread>

#include "bench/machine.h"
#include "bench/server_timing_client.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "tests/support/subprocess.h"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using namespace reckon;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

void Seed(const std::string& path, int runs) {
  storage::SqliteJournalOptions options;
  options.sync = storage::SqliteJournalOptions::Sync::kOff;
  auto journal = std::move(storage::SqliteJournal::Open(path, options)).value();
  const auto start = Clock::now();
  constexpr int kBatch = 1000;
  for (int first = 0; first < runs; first += kBatch) {
    std::vector<storage::AppendRequest> batch;
    for (int i = first; i < std::min(runs, first + kBatch); ++i) {
      storage::AppendRequest r;
      const std::string id = "refund-" + std::to_string(i);
      const std::string op = "op-" + std::to_string(i);
      const std::string input =
          R"({"payment_id":"pay-)" + std::to_string(i) + R"(","reason":"duplicate charge"})";
      r.run = {id, "r1"};
      r.expected_next_seq = 1;
      r.now_us = 1'700'000'000'000'000 + i;
      r.workflow_type = "refund";
      r.status = storage::RunStatus::kCompleted;
      r.events = {storage::WorkflowStarted{"refund", input, "", "alice"},
                  storage::OperationPrepared{"send_refund#1", op, "send_refund", "ch-7f3a",
                                             "fp-" + op, SideEffect::kNonRepeatableWrite, input},
                  storage::AttemptStarted{op, 1, "w1", r.now_us + 5'000'000, ""},
                  storage::OperationCommitted{op, 1, R"({"refund_id":"re_)" + op + R"("})",
                                              "re_" + op, storage::CommitSource::kAttempt},
                  storage::WorkflowCompleted{R"({"refunded":true})"}};
      r.operations = {storage::OperationRow{op, "send_refund#1", "send_refund",
                                            SideEffect::kNonRepeatableWrite, "committed", 1,
                                            "fp-" + op, "ch-7f3a", "re_" + op, 0}};
      batch.push_back(std::move(r));
    }
    std::vector<const storage::AppendRequest*> pointers;
    for (const auto& r : batch) pointers.push_back(&r);
    for (auto& result : journal->AppendGroup(pointers)) {
      if (!result) {
        std::fprintf(stderr, "seeding: %s\n", result.error().ToString().c_str());
        std::exit(1);
      }
    }
  }
  std::printf("seeded %d finished runs in %.1f s\n", runs,
              std::chrono::duration<double>(Clock::now() - start).count());
}

using Timing = bench::ServerTiming;
using Client = bench::ServerTimingClient;

// Runs `target` `repeat` times; prints p50/p99 of the server's time and the client's.
double Measure(Client& client, const std::string& label, const std::string& target, int repeat,
               double floor_ms) {
  const bench::ServerTimes t = bench::MeasureGet(client, target, repeat);
  const double p50 = t.p50_ms;
  std::printf("%-40s server p50 %7.3f ms  p99 %7.3f ms  (round trip p50 %6.3f ms)",
              label.c_str(), p50, t.p99_ms, t.round_trip_p50_ms);
  if (floor_ms > 0) std::printf("  %.2f x floor", p50 / floor_ms);
  std::printf("\n");
  return p50;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"console_bench: the console's reads on a journal of many finished runs"};
  std::string dir = std::filesystem::current_path().string();
  int runs = 100000, repeat = 200;
  app.add_option("--dir", dir, "scratch directory");
  app.add_option("--runs", runs, "finished runs to seed");
  app.add_option("--repeat", repeat, "requests per measurement");
  CLI11_PARSE(app, argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::printf("%s\n", bench::DescribeMachine(dir).c_str());
  const std::string journal = dir + "/console.db";
  for (const char* suffix : {"", "-wal", "-shm", ".admin-token", ".trace.jsonl"}) {
    std::filesystem::remove(journal + suffix);
  }
  std::filesystem::remove(dir + "/http-port");
  Seed(journal, runs);

  testing::SubprocessOptions options;
  options.args = {"server", "--journal", journal, "--listen", "127.0.0.1:0", "--quiet",
                  "--insecure-dev", "--http", "127.0.0.1:0", "--http-port-file",
                  dir + "/http-port"};
  options.stderr_path = dir + "/console-server.log";
  auto server = testing::Subprocess::Start(RECKON_CLI_PATH, options);
  if (!server) {
    std::fprintf(stderr, "%s\n", server.error().ToString().c_str());
    return 1;
  }
  int port = 0;
  const auto start = Clock::now();
  for (int i = 0; i < 6000 && port == 0; ++i) {
    std::ifstream file(dir + "/http-port");
    if (!(file >> port)) std::this_thread::sleep_for(10ms);
  }
  if (port == 0) {
    std::fprintf(stderr, "the server did not start; see %s/console-server.log\n", dir.c_str());
    return 1;
  }
  std::printf("server up on the seeded journal in %.2f s\n",
              std::chrono::duration<double>(Clock::now() - start).count());
  Client client(port);
  const double floor = Measure(client, "floor: GET /api/v1/whoami", "/api/v1/whoami", repeat, 0);
  // A page deep in the chain: follow the cursor 100 pages of 50 (5,000 runs) down.
  std::string cursor;
  for (int page = 0; page < 100; ++page) {
    cursor = std::string(client.Get("/api/v1/runs?limit=50" + (cursor.empty() ? "" : "&after=" + cursor))
                             .body.at("next_cursor").as_string());
  }
  double worst = 0;
  auto measure = [&](const std::string& label, const std::string& target) {
    worst = std::max(worst, Measure(client, label, target, repeat, floor));
  };
  measure("runs, first page of 50", "/api/v1/runs?limit=50");
  measure("runs, page 101 of 50 (by cursor)", "/api/v1/runs?limit=50&after=" + cursor);
  measure("runs, status=completed", "/api/v1/runs?limit=50&status=completed");
  measure("runs, status=running (none)", "/api/v1/runs?limit=50&status=running");
  measure("runs, type=refund", "/api/v1/runs?limit=50&type=refund");
  measure("runs, tool=send_refund", "/api/v1/runs?limit=50&tool=send_refund");
  measure("runs, needs a person (none)", "/api/v1/runs?limit=50&needs_human=1");
  measure("runs, id prefix refund-9999", "/api/v1/runs?limit=50&id_prefix=refund-9999");
  measure("run detail (refund-4242)", "/api/v1/runs/refund-4242");
  measure("run history (refund-4242)", "/api/v1/runs/refund-4242/history");
  std::printf("worst p50 %.3f ms against the target of 50 ms of server time\n", worst);
  (void)server.value().Terminate();
  return 0;
}
