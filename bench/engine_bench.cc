// engine_bench: the embedded engine's workloads, each next to the fsync floor of the same run.
//
//   W1  one workflow of 10 sequential no-op tool calls, run serially: p50/p99 latency
//   W3  the same workflow at concurrency 32: workflows/s, steps/s, CPU ms per workflow, and
//       the process's RSS after each quarter of the window against its RSS before the load
//       (the floor): flat once the engine lets go of finished runs (issue 15, retention)
//   W5  replay of a ~10,000-event history (events/s), and the cost of one more step at history
//       length 100 vs 10,000
//
// Journal: synchronous=FULL, group commit inline on the engine's one event loop.
// With --checksums compare, only W3, in rounds that alternate between a journal whose pages
// carry checksums (the default) and one without (docs/PERFORMANCE.md, "Journal checksums").
// Usage: engine_bench [--dir DIR] [--w1 N] [--w3-seconds S] [--only w1|w3|w5]
//                     [--checksums compare [--rounds R]]
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <span>
#include <vector>

#include "bench/fsync_floor.h"
#include "bench/machine.h"
#include "reckon/engine/engine.h"
#include "reckon/storage/sqlite/page_checksum.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "bench/ten_calls.h"
#include "reckon/host/embedded_host.h"

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace reckon;
using SteadyClock = std::chrono::steady_clock;

using bench::NoopContract;
using bench::Noop;
using bench::TenCalls;

// Makes `n` calls, then takes one more call per "step" signal, forever.
Task<WorkflowOutcome> Stepper(WorkflowContext& ctx, json::value input) {
  const std::int64_t n = input.as_object().at("calls").as_int64();
  for (std::int64_t i = 0; i < n; ++i) {
    auto call = ctx.Call("noop", json::object{});
    CallResult result = co_await call;
    if (!result) co_return result.error();
  }
  while (true) {
    auto signal = ctx.WaitSignal("step");
    co_await signal;
    auto call = ctx.Call("noop", json::object{});
    CallResult result = co_await call;
    if (!result) co_return result.error();
  }
}

// --checksums compare: whether a new journal's pages carry checksums.
bool g_page_checksums = true;

std::unique_ptr<storage::Journal> OpenJournal(
    const std::string& path, storage::SqliteJournalOptions::Sync sync,
    storage::SqliteJournalOptions::Mode mode = storage::SqliteJournalOptions::Mode::kOwner) {
  storage::SqliteJournalOptions options;
  options.sync = sync;
  options.mode = mode;
  options.page_checksums = g_page_checksums;
  auto journal = storage::OpenSqliteJournal(path, options);
  if (!journal) {
    std::fprintf(stderr, "engine_bench: %s\n", journal.error().ToString().c_str());
    std::exit(1);
  }
  return std::move(journal).value();
}

// --commit-thread: the engine commits on a thread of its own and reads through a second
// connection (EngineOptions::commit_executor), as `reckon server` does by default.
bool g_commit_thread = false;

// An embedded host over one journal file, with a sink that wakes whoever waits for a run.
struct Harness final : TraceSink {
  Harness(const std::string& path, storage::SqliteJournalOptions::Sync sync)
      : commit_thread(g_commit_thread ? std::make_unique<asio::thread_pool>(1) : nullptr),
        host(MakeHost(path, sync)),
        io(host->io()),
        engine(&host->engine()),
        journal(&host->journal()),
        workflows(host->workflows()) {
    (void)host->tools().Register(Tool{NoopContract(), Noop, {}});
    (void)workflows.Register("ten_calls", TenCalls);
    (void)workflows.Register("stepper", Stepper);
    host->AddSink(*this);
  }
  void OnCommitted(const RunState& run, std::span<const storage::Event>) override {
    committed_now[run.ref().workflow_id] = run.committed_operations();
    auto it = waiters.find(run.ref().workflow_id);
    if (it == waiters.end()) return;
    if (run.terminal() || run.committed_operations() > committed_before[run.ref().workflow_id]) {
      it->second->cancel();
    }
  }
  // Registers, now, a wait until the run finishes or commits more than `committed`
  // operations; await the returned timer, then call Done(id).
  std::shared_ptr<asio::steady_timer> Expect(const std::string& id, int committed) {
    auto timer = std::make_shared<asio::steady_timer>(io);
    timer->expires_at(SteadyClock::time_point::max());
    waiters[id] = timer.get();
    committed_before[id] = committed;
    return timer;
  }
  void Done(const std::string& id) { waiters.erase(id); }
  ~Harness() {
    if (commit_thread) commit_thread->join();
  }
  std::unique_ptr<EmbeddedHost> MakeHost(const std::string& path,
                                         storage::SqliteJournalOptions::Sync sync) {
    EmbeddedHostOptions options;
    auto journal = OpenJournal(path, sync);
    if (commit_thread) {
      // The owner first (it creates the file), then its companion reader.
      reader = OpenJournal(path, sync, storage::SqliteJournalOptions::Mode::kCompanion);
      options.engine.commit_executor = commit_thread->get_executor();
      options.engine.reader = reader.get();
    }
    return std::make_unique<EmbeddedHost>(std::move(journal), std::move(options));
  }

  std::unique_ptr<asio::thread_pool> commit_thread;
  std::unique_ptr<storage::Journal> reader;
  std::unique_ptr<EmbeddedHost> host;
  asio::io_context& io;
  Engine* engine;
  storage::Journal* journal;
  WorkflowRegistry& workflows;
  std::map<std::string, asio::steady_timer*> waiters;
  std::map<std::string, int> committed_before;
  std::map<std::string, int> committed_now;  // as of the last committed batch
};

void Remove(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * v.size()))];
}

// This process's resident set, from /proc/self/status (0 if it cannot be read).
double RssMiB() {
  std::FILE* status = std::fopen("/proc/self/status", "r");
  if (status == nullptr) return 0;
  char line[256];
  long kib = 0;
  while (std::fgets(line, sizeof line, status) != nullptr) {
    if (std::sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
  }
  std::fclose(status);
  return kib / 1024.0;
}

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

asio::awaitable<void> RunOne(Harness& h, std::string id, std::vector<double>* latencies_ms) {
  auto start = SteadyClock::now();
  auto wait = h.Expect(id, 1 << 30);
  auto started = h.engine->Start(id, "ten_calls", json::object{});
  auto ref = co_await std::move(started);
  if (!ref) {
    std::fprintf(stderr, "start failed: %s\n", ref.error().ToString().c_str());
    std::exit(1);
  }
  if (h.engine->Describe(id)->status == reckon::storage::RunStatus::kRunning) {
    co_await wait->async_wait(asio::as_tuple(asio::use_awaitable));
  }
  h.Done(id);
  if (latencies_ms) {
    latencies_ms->push_back(
        std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count());
  }
}

using Sync = storage::SqliteJournalOptions::Sync;

void W1(const std::string& dir, int count, const bench::FsyncFloor& floor, Sync sync) {
  const std::string path = dir + "/w1.db";
  Remove(path);
  Harness h(path, sync);
  std::vector<double> latencies;
  auto serial = [](Harness& h, int count, std::vector<double>* out) -> asio::awaitable<void> {
    for (int i = 0; i < count; ++i) co_await RunOne(h, "w1-" + std::to_string(i), out);
  };
  asio::co_spawn(h.io, serial(h, count, &latencies), asio::detached);
  h.io.run();
  const double p50 = Percentile(latencies, 0.5), p99 = Percentile(latencies, 0.99);
  std::printf("W1  %d workflows x 10 sequential calls, serial:  p50 %.2f ms  p99 %.2f ms"
              "  (p50 = %.1f x fsync floor; target p50 <= 2.5 ms)\n",
              count, p50, p99, p50 * 1000 / floor.mean_us);
  Remove(path);
}

struct W3Figures {
  double per_s = 0;
  double cpu_ms = 0;  // CPU per workflow
};

W3Figures W3(const std::string& dir, double seconds, int concurrency,
             const bench::FsyncFloor& floor, Sync sync) {
  const std::string path = dir + "/w3.db";
  Remove(path);
  Harness h(path, sync);
  int completed = 0;
  const auto end = SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(
                                            std::chrono::duration<double>(seconds));
  auto client = [](Harness& h, int client, SteadyClock::time_point end,
                   int* completed) -> asio::awaitable<void> {
    for (int i = 0; SteadyClock::now() < end; ++i) {
      co_await RunOne(h, "w3-" + std::to_string(client) + "-" + std::to_string(i), nullptr);
      if (SteadyClock::now() <= end) ++*completed;  // only what finished inside the window
    }
  };
  // RSS after each quarter of the window, next to the runs finished and the runs the engine
  // still holds.
  auto probe = [](Harness& h, SteadyClock::time_point start, double seconds,
                  const int* completed, double floor_mib) -> asio::awaitable<void> {
    asio::steady_timer timer(h.io);
    for (int quarter = 1; quarter <= 4; ++quarter) {
      timer.expires_at(start + std::chrono::duration_cast<SteadyClock::duration>(
                                   std::chrono::duration<double>(seconds * quarter / 4 - 0.05)));
      co_await timer.async_wait(asio::use_awaitable);
      const double rss = RssMiB();
      std::printf("W3  at %3d%%: %6d runs finished, %4zu held by the engine, RSS %.1f MiB "
                  "(floor %.1f MiB: +%.1f MiB)\n",
                  quarter * 25, *completed, h.engine->Runs().size(), rss, floor_mib,
                  rss - floor_mib);
    }
  };
  const double floor_mib = RssMiB();
  const double cpu_before = CpuSeconds();
  const auto start = SteadyClock::now();
  for (int c = 0; c < concurrency; ++c) asio::co_spawn(h.io, client(h, c, end, &completed), asio::detached);
  asio::co_spawn(h.io, probe(h, start, seconds, &completed, floor_mib), asio::detached);
  h.io.run();
  const double cpu = CpuSeconds() - cpu_before;
  const double elapsed = std::chrono::duration<double>(end - start).count();
  const double per_s = completed / elapsed;
  std::printf("W3  concurrency %d for %.1f s: %.0f workflows/s, %.0f steps/s, %.2f CPU ms/workflow"
              "  (%.1f workflows per fsync-floor interval; target >= 2,000 workflows/s)\n",
              concurrency, elapsed, per_s, per_s * 10, cpu * 1000 / completed,
              per_s * floor.mean_us / 1e6);
  Remove(path);
  return {per_s, cpu * 1000 / completed};
}

// The page checksum alone: the fastest of 5 passes over 4,096 distinct 4 KiB pages.
void PageChecksumCost() {
  std::vector<std::byte> pages(4096 * 4096);
  for (std::size_t i = 0; i < pages.size(); ++i) pages[i] = static_cast<std::byte>(i * 131 + 7);
  double best_ns = 1e18;
  std::uint64_t sink = 0;
  for (int pass = 0; pass < 5; ++pass) {
    const auto start = SteadyClock::now();
    for (std::size_t p = 0; p < 4096; ++p) {
      sink ^= storage::PageChecksum(std::span(pages).subspan(p * 4096, 4096 - 8));
    }
    best_ns = std::min(best_ns, std::chrono::duration<double, std::nano>(SteadyClock::now() -
                                                                         start).count() / 4096);
  }
  std::printf("PageChecksum of a 4 KiB page: %.0f ns (%.1f GB/s; fastest of 5 passes over 16 MiB)"
              " [%llx]\n",
              best_ns, 4088 / best_ns, static_cast<unsigned long long>(sink & 0xf));
}

// --checksums compare: W3 alternately without page checksums and with them.
void CompareChecksums(const std::string& dir, double seconds, int rounds,
                      const bench::FsyncFloor& floor, Sync sync) {
  PageChecksumCost();
  std::vector<W3Figures> figures[2];  // [with checksums]
  for (int round = 0; round < 2 * rounds; ++round) {
    // off, on, then on, off: a drift of the machine's load hits both sides alike.
    const bool on = (round % 2 == 1) != (round / 2 % 2 == 1);
    g_page_checksums = on;
    std::printf("W3  round %d, page checksums %s\n", round / 2 + 1, on ? "on" : "off");
    figures[on].push_back(W3(dir, seconds, 32, floor, sync));
  }
  g_page_checksums = true;
  double rate[2] = {0, 0}, cpu[2] = {0, 0}, lo = 1e9, hi = 0, cpu_lo = 1e9, cpu_hi = 0;
  for (int i = 0; i < rounds; ++i) {
    for (int on : {0, 1}) {
      rate[on] += figures[on][i].per_s / rounds;
      cpu[on] += figures[on][i].cpu_ms / rounds;
    }
    lo = std::min(lo, figures[1][i].per_s / figures[0][i].per_s);
    hi = std::max(hi, figures[1][i].per_s / figures[0][i].per_s);
    cpu_lo = std::min(cpu_lo, figures[1][i].cpu_ms / figures[0][i].cpu_ms);
    cpu_hi = std::max(cpu_hi, figures[1][i].cpu_ms / figures[0][i].cpu_ms);
  }
  std::printf("W3  page checksums on / off (%d rounds each, alternating; floor mean %.1f us): "
              "throughput %.3f x (per round %.3f-%.3f; off %.0f, on %.0f workflows/s), CPU per "
              "workflow %.3f x (per round %.3f-%.3f; off %.2f ms, on %.2f ms)\n",
              rounds, floor.mean_us, rate[1] / rate[0], lo, hi, rate[0], rate[1],
              cpu[1] / cpu[0], cpu_lo, cpu_hi, cpu[0], cpu[1]);
}

// Builds a stepper run with `calls` calls (3 events each) using synchronous=OFF.
void BuildHistory(const std::string& path, int calls) {
  Remove(path);
  Harness h(path, storage::SqliteJournalOptions::Sync::kOff);
  auto build = [](Harness& h, int calls) -> asio::awaitable<void> {
    auto started = h.engine->Start("w5", "stepper", json::object{{"calls", calls}});
    (void)co_await std::move(started);
  };
  asio::co_spawn(h.io, build(h, calls), asio::detached);
  h.io.run();  // returns when the run waits for its first signal
}

// One more step on a recovered run: signal, the call, its commit. Returns ms per step.
std::vector<double> StepCosts(const std::string& path, int steps) {
  Harness h(path, storage::SqliteJournalOptions::Sync::kFull);
  std::vector<double> costs;
  auto run = [](Harness& h, int steps, std::vector<double>* costs) -> asio::awaitable<void> {
    auto recovered = co_await h.engine->Recover();
    auto described = h.engine->Describe("w5");
    if (!recovered || !described) {
      std::fprintf(stderr, "recovery failed\n");
      std::exit(1);
    }
    h.committed_now["w5"] = described->committed_operations;
    for (int i = 0; i < steps; ++i) {
      int committed = h.committed_now["w5"];
      auto start = SteadyClock::now();
      auto wait = h.Expect("w5", committed);
      auto signal = h.engine->Signal("w5", "step", "{}");
      (void)co_await std::move(signal);
      co_await wait->async_wait(asio::as_tuple(asio::use_awaitable));
      h.Done("w5");
      costs->push_back(std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count());
    }
  };
  asio::co_spawn(h.io, run(h, steps, &costs), [](std::exception_ptr e) {
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "step measurement failed: %s\n", ex.what());
    }
  });
  h.io.run();
  return costs;
}

void W5(const std::string& dir, const bench::FsyncFloor& floor, int repeat) {
  const std::string path = dir + "/w5.db";
  BuildHistory(path, 3333);
  std::int64_t events = 0;
  double replay_ms = 1e9;
  for (int round = 0; round < repeat; ++round) {
    // A fresh host each round, as after a restart; the fastest round counts.
    Harness h(path, storage::SqliteJournalOptions::Sync::kFull);
    auto start = SteadyClock::now();
    auto recover = [](Harness& h) -> asio::awaitable<void> { (void)co_await h.engine->Recover(); };
    asio::co_spawn(h.io, recover(h), asio::detached);
    h.io.run();  // read, fold, replay into a fresh coroutine, until it waits for a signal
    replay_ms = std::min(
        replay_ms, std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count());
    auto run = h.journal->FindLatestRun("w5");
    events = run && run.value() ? run.value()->next_seq - 1 : 0;
  }
  std::printf("W5  replay of a %lld-event history: %.1f ms = %.0f events/s (fastest of %d;"
              " target >= 1,000,000)\n",
              static_cast<long long>(events), replay_ms, events / (replay_ms / 1000), repeat);
  {
    // Where the replay time goes: read+decode, fold into RunState, replay into a coroutine;
    // the fastest of `repeat` rounds of each (the machine's other load only adds time).
    Harness h(path, storage::SqliteJournalOptions::Sync::kFull);
    auto run = h.journal->FindLatestRun("w5").value().value();
    auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    double read_ms = 1e9, fold_ms = 1e9, replay_ms = 1e9;
    std::size_t commands_size = 0;
    for (int round = 0; round < repeat; ++round) {
      auto t0 = SteadyClock::now();
      auto history = h.journal->ReadEvents(run.ref).value();
      auto t1 = SteadyClock::now();
      RunState state(run.ref);
      (void)state.ApplyAll(history);
      auto t2 = SteadyClock::now();
      WorkflowInstance instance(*h.workflows.Find("stepper"), "w5", run.ref.run_id);
      auto commands = instance.Activate(history, 0);
      auto t3 = SteadyClock::now();
      read_ms = std::min(read_ms, ms(t0, t1));
      fold_ms = std::min(fold_ms, ms(t1, t2));
      replay_ms = std::min(replay_ms, ms(t2, t3));
      commands_size = commands ? commands.value().size() : 0;
    }
    std::printf("    read+decode %.1f ms, fold %.1f ms, coroutine replay %.1f ms (%zu commands;"
                " fastest of %d rounds)\n",
                read_ms, fold_ms, replay_ms, commands_size, repeat);
  }
  auto long_costs = StepCosts(path, 300);
  BuildHistory(path, 33);
  auto short_costs = StepCosts(path, 300);
  const double at_100 = Percentile(short_costs, 0.5), at_10k = Percentile(long_costs, 0.5);
  std::printf("W5  one more step: %.3f ms at ~100 events, %.3f ms at ~10,000 events: ratio %.2f"
              " (target <= 1.2; a step is %.1f x fsync floor)\n",
              at_100, at_10k, at_10k / at_100, at_100 * 1000 / floor.mean_us);
  Remove(path);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"engine_bench: W1, W3, W5 on the embedded engine, as ratios to the fsync floor"};
  std::string dir = std::filesystem::current_path().string();
  int w1 = 300;
  double w3_seconds = 20;
  std::string only;
  app.add_option("--dir", dir, "scratch directory on the disk to measure");
  app.add_option("--w1", w1, "W1: number of serial workflows");
  app.add_option("--w3-seconds", w3_seconds, "W3: duration");
  app.add_option("--only", only, "run one workload: w1, w3 or w5");
  bool no_sync = false;
  app.add_flag("--no-sync", no_sync, "diagnosis only: synchronous=OFF for W1/W3 (CPU cost alone)");
  int w5_repeat = 5;
  app.add_option("--w5-repeat", w5_repeat, "W5: rounds of the replay breakdown (the fastest counts)");
  app.add_flag("--commit-thread", g_commit_thread,
               "commit on a second thread, reads through a second connection");
  std::string checksums;
  app.add_option("--checksums", checksums,
                 "compare: only W3, alternately with page checksums and without")
      ->check(CLI::IsMember({"compare"}));
  int rounds = 3;
  app.add_option("--rounds", rounds, "--checksums compare: rounds of each");
  CLI11_PARSE(app, argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const Sync sync = no_sync ? Sync::kOff : Sync::kFull;
  if (no_sync) {
    std::printf("DIAGNOSIS RUN: synchronous=OFF, figures are not durable-commit figures\n");
  }
  std::printf("%s\n", bench::DescribeMachine(dir).c_str());
  auto floor = bench::MeasureFsyncFloor(dir, 2000);
  std::printf("floor: 4 KiB write + fdatasync: mean %.1f us, p50 %.1f us, p99 %.1f us\n",
              floor.mean_us, floor.p50_us, floor.p99_us);
  if (!checksums.empty()) {
    CompareChecksums(dir, w3_seconds, rounds, floor, sync);
    return 0;
  }
  if (only.empty() || only == "w1") W1(dir, w1, floor, sync);
  if (only.empty() || only == "w3") W3(dir, w3_seconds, 32, floor, sync);
  if (only.empty() || only == "w5") W5(dir, floor, w5_repeat);
  return 0;
}
