#include "bench/fan_out.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "bench/embedded_harness.h"
#include "bench/proc_memory.h"

namespace reckon::bench {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using SteadyClock = std::chrono::steady_clock;

// When a run's completion was seen, and the process's CPU seconds then.
struct Finished {
  SteadyClock::time_point at;
  double cpu_seconds = 0;
};

// Starts run `id` of `type` and waits until it finishes (noted in `finished`, if given, before
// the check); exits the process unless it completed.
asio::awaitable<void> RunToEnd(Harness& h, std::string id, std::string type, json::value input,
                               Finished* finished = nullptr) {
  auto wait = h.Expect(id, 1 << 30);
  auto started = h.engine.Start(id, type, std::move(input));
  auto ref = co_await std::move(started);
  if (!ref) {
    std::fprintf(stderr, "long_bench: start of %s failed: %s\n", id.c_str(),
                 ref.error().ToString().c_str());
    std::exit(1);
  }
  if (h.engine.Describe(id)->status == storage::RunStatus::kRunning) {
    co_await wait->async_wait(asio::as_tuple(asio::use_awaitable));
  }
  h.Done(id);
  if (finished != nullptr) *finished = Finished{SteadyClock::now(), SelfCpuSeconds()};
  auto summary = h.engine.Describe(id);  // from the journal: a finished run is let go
  if (!summary || summary->status != storage::RunStatus::kCompleted) {
    std::fprintf(stderr, "long_bench: run %s did not complete: %s\n", id.c_str(),
                 summary ? summary->result_json.c_str() : "not found");
    std::exit(1);
  }
}

asio::awaitable<void> W3Client(Harness& h, int client, SteadyClock::time_point end,
                               int* completed) {
  for (int i = 0; SteadyClock::now() < end; ++i) {
    co_await RunToEnd(h, "w3-" + std::to_string(client) + "-" + std::to_string(i), "ten_calls",
                      json::object{});
    if (SteadyClock::now() <= end) ++*completed;  // only what finished inside the window
  }
}

// The makespan, from before the start to the completion's commit, and the CPU seconds spent.
asio::awaitable<void> TimeFanOut(Harness& h, int calls, double* makespan_ms, double* cpu_ms) {
  const auto start = SteadyClock::now();
  const double cpu_before = SelfCpuSeconds();
  json::object input{{"calls", calls}};
  Finished finished;
  co_await RunToEnd(h, "w4", "fan_out", std::move(input), &finished);
  *makespan_ms = std::chrono::duration<double, std::milli>(finished.at - start).count();
  *cpu_ms = (finished.cpu_seconds - cpu_before) * 1000;
}

}  // namespace

double MeasureW3StepsPerSecond(const std::string& dir, double seconds, const FsyncFloor& floor) {
  const std::string path = dir + "/long-w3.db";
  RemoveJournal(path);
  int completed = 0;
  double cpu = 0;
  {
    Harness h(path, Sync::kFull);
    const auto start = SteadyClock::now();
    const auto end = start + std::chrono::duration_cast<SteadyClock::duration>(
                                 std::chrono::duration<double>(seconds));
    const double cpu_before = SelfCpuSeconds();
    for (int c = 0; c < 32; ++c) asio::co_spawn(h.io, W3Client(h, c, end, &completed), asio::detached);
    h.io.run();
    cpu = SelfCpuSeconds() - cpu_before;
  }
  RemoveJournal(path);
  const double per_s = completed / seconds;
  std::printf("W3  concurrency 32 for %.1f s (ten_calls): %.0f workflows/s = %.0f steps/s, "
              "%.2f CPU ms/workflow (%.1f workflows per fsync-floor interval)\n",
              seconds, per_s, per_s * 10, cpu * 1000 / completed, per_s * floor.mean_us / 1e6);
  return per_s * 10;
}

void FanOutOnce(const std::string& dir, int calls) {
  const std::string path = dir + "/long-w4-" + std::to_string(calls) + ".db";
  RemoveJournal(path);
  double makespan_ms = 0, cpu_ms = 0, floor_mib = 0;
  std::int64_t events = 0;
  {
    Harness h(path, Sync::kFull);
    floor_mib = RssMiB();
    asio::co_spawn(h.io, TimeFanOut(h, calls, &makespan_ms, &cpu_ms), asio::detached);
    h.io.run();
    events = h.events_committed();
  }
  RemoveJournal(path);
  std::printf("W4RESULT %d %.3f %.3f %.1f %.1f %lld\n", calls, makespan_ms, cpu_ms, PeakRssMiB(),
              floor_mib, static_cast<long long>(events));
}

void FanOut(const std::string& dir, const std::vector<int>& counts, double w3_steps_per_s,
            const FsyncFloor& floor) {
  struct Row {
    int calls;
    double makespan_ms, cpu_ms, peak_mib, floor_mib;
    long long events;
  };
  std::vector<Row> rows;
  for (int calls : counts) {
    auto lines = RunSelf({"--w4-once", std::to_string(calls), "--dir", dir}, "W4RESULT");
    Row row{};
    if (lines.size() != 1 ||
        std::sscanf(lines[0].c_str(), "W4RESULT %d %lf %lf %lf %lf %lld", &row.calls,
                    &row.makespan_ms, &row.cpu_ms, &row.peak_mib, &row.floor_mib,
                    &row.events) != 6) {
      std::fprintf(stderr, "long_bench: no W4 result from the child for %d calls\n", calls);
      std::exit(1);
    }
    rows.push_back(row);
    const double target_ms = row.calls * 1000.0 / w3_steps_per_s + 2000;
    std::printf("W4  %6d parallel calls: makespan %8.1f ms (target <= %.0f ms: %s), "
                "%.3f ms/call, %.3f CPU ms/call, peak RSS %.1f MiB (floor %.1f MiB, target "
                "<= 300 MB: %s), %lld events, %.2f fsync-floor intervals/call\n",
                row.calls, row.makespan_ms, target_ms, row.makespan_ms <= target_ms ? "met" : "missed",
                row.makespan_ms / row.calls, row.cpu_ms / row.calls, row.peak_mib, row.floor_mib,
                row.peak_mib * 1024 * 1024 <= 300e6 ? "met" : "missed", row.events,
                row.makespan_ms * 1000 / row.calls / floor.mean_us);
  }
  if (rows.size() >= 2) {
    const Row& small = rows.front();
    const Row& large = rows.back();
    const double wall = (large.makespan_ms / large.calls) / (small.makespan_ms / small.calls);
    const double cpu = (large.cpu_ms / large.calls) / (small.cpu_ms / small.calls);
    std::printf("W4  cost per call at %d vs %d calls: makespan/call ratio %.2f, CPU/call ratio "
                "%.2f (flat: ~1.0)\n",
                large.calls, small.calls, wall, cpu);
  }
}

}  // namespace reckon::bench
