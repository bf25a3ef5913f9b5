#include "bench/long_history.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "bench/embedded_harness.h"
#include "bench/proc_memory.h"
#include "reckon/worker/workflow_instance.h"

namespace reckon::bench {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using SteadyClock = std::chrono::steady_clock;

constexpr char kRun[] = "w7";

double MsBetween(SteadyClock::time_point a, SteadyClock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * v.size()))];
}

void Fail(const std::string& what) {
  std::fprintf(stderr, "long_bench: %s\n", what.c_str());
  std::exit(1);
}

std::int64_t EventsOf(Harness& h) {
  auto run = h.journal.FindLatestRun(kRun);
  if (!run || !run.value()) Fail("W7: the journal holds no run w7");
  return run.value()->next_seq - 1;
}

asio::awaitable<void> StartLoop(Harness& h, std::int64_t rounds, int bytes) {
  // Until the last round's tool call is committed: in that batch the code reaches its first
  // wait for a signal. Stop there rather than when the io_context runs dry, which is only once
  // the attempts' deadline timers have expired.
  auto wait = h.Expect(kRun, static_cast<int>(2 * rounds - 1));
  auto started = h.engine.Start(kRun, "agent_loop", json::object{{"rounds", rounds}, {"bytes", bytes}});
  auto ref = co_await std::move(started);
  if (!ref) Fail("W7: start failed: " + ref.error().ToString());
  co_await wait->async_wait(asio::as_tuple(asio::use_awaitable));
  h.Done(kRun);
  h.io.stop();
}

// Builds an agent_loop run of `rounds` rounds with synchronous=OFF; returns its events.
std::int64_t Build(const std::string& path, std::int64_t rounds, int bytes) {
  RemoveJournal(path);
  Harness h(path, Sync::kOff);
  asio::co_spawn(h.io, StartLoop(h, rounds, bytes), asio::detached);
  h.io.run();
  auto summary = h.engine.Describe(kRun);
  if (!summary || summary->status != storage::RunStatus::kRunning) {
    Fail("W7: the built run is not running: " +
         (summary ? summary->result_json : std::string("not found")));
  }
  return EventsOf(h);
}

// Builds a run of about `events` events; returns its events.
std::int64_t BuildAbout(const std::string& path, std::int64_t events, int bytes) {
  const std::int64_t e10 = Build(path, 10, bytes), e20 = Build(path, 20, bytes);
  const std::int64_t per_round = (e20 - e10) / 10, base = e10 - 10 * per_round;
  return Build(path, std::max<std::int64_t>(1, (events - base) / per_round), bytes);
}

asio::awaitable<void> RecoverRun(Harness& h) {
  auto recovered = co_await h.engine.Recover();
  if (!recovered) Fail("W7: recovery failed: " + recovered.error().ToString());
}

// Recovers the run (the first time), then takes `steps` more rounds: signal, model call, tool
// call, each committed with synchronous=FULL; appends the ms of each round to `costs`.
asio::awaitable<void> Steps(Harness& h, bool recover, int steps, std::vector<double>* costs) {
  if (recover) {
    auto recovered = co_await h.engine.Recover();
    auto described = h.engine.Describe(kRun);
    if (!recovered || !described) Fail("W7: recovery before the steps failed");
    h.set_committed(kRun, described->committed_operations);
  }
  for (int i = 0; i < steps; ++i) {
    const int committed = h.committed(kRun);
    const auto start = SteadyClock::now();
    auto wait = h.Expect(kRun, committed + 1);  // the model call and the tool call
    auto signal = h.engine.Signal(kRun, "step", "{}");
    auto sent = co_await std::move(signal);
    if (!sent) Fail("W7: signal failed: " + sent.error().ToString());
    co_await wait->async_wait(asio::as_tuple(asio::use_awaitable));
    h.Done(kRun);
    costs->push_back(MsBetween(start, SteadyClock::now()));
  }
  h.io.stop();  // without waiting for the attempts' deadline timers to expire
}

// One run's journal, open for steps taken a few at a time.
class StepMeter {
 public:
  explicit StepMeter(const std::string& path) : h_(path, Sync::kFull) {}
  void Take(int steps) {
    const std::size_t before = costs_.size();
    h_.io.restart();
    const double cpu_before = SelfCpuSeconds();
    asio::co_spawn(h_.io, Steps(h_, !recovered_, steps, &costs_), asio::detached);
    recovered_ = true;
    h_.io.run();
    if (recovered_ && before > 0) cpu_ms_ += (SelfCpuSeconds() - cpu_before) * 1000;
    if (before > 0) cpu_steps_ += steps;  // the first turn also recovers: not counted
    if (costs_.size() != before + static_cast<std::size_t>(steps)) {
      Fail("W7: the steps did not all complete");
    }
  }
  const std::vector<double>& costs() const { return costs_; }
  // CPU ms of this process per step, over every turn but the first.
  double cpu_ms_per_step() const { return cpu_steps_ > 0 ? cpu_ms_ / cpu_steps_ : 0; }

 private:
  Harness h_;
  bool recovered_ = false;
  std::vector<double> costs_;
  double cpu_ms_ = 0;
  int cpu_steps_ = 0;
};

struct Recovered {
  long long events = 0;
  double recover_ms = 0, read_ms = 0, fold_ms = 0, replay_ms = 0;
  double floor_mib = 0, rss_mib = 0, trimmed_mib = 0, peak_mib = 0;
  double history_mib = 0, state_mib = 0, instance_mib = 0;  // RSS added by each piece
};

Recovered RecoverInChild(const std::string& path) {
  auto lines = RunSelf({"--w7-recover", path}, "W7RESULT");
  Recovered r;
  if (lines.size() != 1 ||
      std::sscanf(lines[0].c_str(), "W7RESULT %lld %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf",
                  &r.events, &r.recover_ms, &r.read_ms, &r.fold_ms, &r.replay_ms, &r.floor_mib,
                  &r.rss_mib, &r.trimmed_mib, &r.peak_mib, &r.history_mib, &r.state_mib,
                  &r.instance_mib) != 12) {
    Fail("W7: no result from the recovery child for " + path);
  }
  return r;
}

}  // namespace

void RecoverOnce(const std::string& path) {
  Recovered r;
  {
    Harness h(path, Sync::kFull);
    TrimHeap();
    r.floor_mib = RssMiB();
    const auto t0 = SteadyClock::now();
    asio::co_spawn(h.io, RecoverRun(h), asio::detached);
    h.io.run();  // read, decode, fold, replay into a fresh coroutine, until it waits again
    r.recover_ms = MsBetween(t0, SteadyClock::now());
    r.events = EventsOf(h);
    r.rss_mib = RssMiB();
    TrimHeap();
    r.trimmed_mib = RssMiB();
    r.peak_mib = PeakRssMiB();

    // Where the time goes, step by step as the engine does it, on the same journal.
    // The RSS each piece adds shows what the held memory is made of (the heap was trimmed).
    auto run = h.journal.FindLatestRun(kRun).value().value();
    const double rss0 = RssMiB();
    const auto t1 = SteadyClock::now();
    auto history = h.journal.ReadEvents(run.ref);
    const auto t2 = SteadyClock::now();
    if (!history) Fail("W7: read failed: " + history.error().ToString());
    const double rss1 = RssMiB();
    RunState state(run.ref);
    (void)state.ApplyAll(history.value());
    const auto t3 = SteadyClock::now();
    const double rss2 = RssMiB();
    WorkflowInstance instance(*h.workflows.Find("agent_loop"), kRun, run.ref.run_id);
    auto commands = instance.Activate(history.value(), 0);
    const auto t4 = SteadyClock::now();
    r.history_mib = rss1 - rss0;
    r.state_mib = rss2 - rss1;
    r.instance_mib = RssMiB() - rss2;
    if (!commands) Fail("W7: replay failed: " + commands.error().ToString());
    r.read_ms = MsBetween(t1, t2);
    r.fold_ms = MsBetween(t2, t3);
    r.replay_ms = MsBetween(t3, t4);
  }
  std::printf("W7RESULT %lld %.3f %.3f %.3f %.3f %.2f %.2f %.2f %.2f %.2f %.2f %.2f\n", r.events,
              r.recover_ms, r.read_ms, r.fold_ms, r.replay_ms, r.floor_mib, r.rss_mib,
              r.trimmed_mib, r.peak_mib, r.history_mib, r.state_mib, r.instance_mib);
}

void LongHistory(const std::string& dir, const LongHistoryOptions& options,
                 const FsyncFloor& floor) {
  const std::string long_path = dir + "/long-w7.db", short_path = dir + "/long-w7-short.db";
  const auto t0 = SteadyClock::now();
  const std::int64_t long_events = BuildAbout(long_path, options.events, options.bytes);
  const double build_s = MsBetween(t0, SteadyClock::now()) / 1000;
  std::uintmax_t journal_bytes = 0;
  for (const char* suffix : {"", "-wal"}) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(long_path + suffix, ec);
    if (!ec) journal_bytes += size;
  }
  const std::int64_t short_events = BuildAbout(short_path, options.short_events, options.bytes);
  std::printf("W7  built an agent_loop run of %lld events (%d-byte outputs) in %.1f s with "
              "synchronous=OFF (%.0f events/s; build only, not a measured figure), and one of "
              "%lld events; history limit raised to %lld (the default hard limit, 50,000 "
              "events, would fail the run); the long run's journal: %.1f MiB = %.0f bytes/event\n",
              static_cast<long long>(long_events), options.bytes, build_s, long_events / build_s,
              static_cast<long long>(short_events), static_cast<long long>(kBenchHistoryMaxEvents),
              journal_bytes / 1048576.0, static_cast<double>(journal_bytes) / long_events);

  // (1) and (3): a fresh process recovers each run.
  const Recovered big = RecoverInChild(long_path);
  const Recovered small = RecoverInChild(short_path);
  for (const Recovered* r : {&small, &big}) {
    std::printf("W7  memory, a fresh process holding one recovered %lld-event run: RSS %.1f MiB "
                "after recovery, %.1f MiB after malloc_trim, against %.1f MiB before (floor): "
                "+%.1f MiB held = %.0f bytes/event; peak %.1f MiB\n",
                r->events, r->rss_mib, r->trimmed_mib, r->floor_mib, r->trimmed_mib - r->floor_mib,
                (r->trimmed_mib - r->floor_mib) * 1024 * 1024 / r->events, r->peak_mib);
  }
  std::printf("W7  memory per event between the two runs: %.0f bytes/event; what a second copy "
              "adds to RSS: the history read and decoded %.1f MiB (transient), the folded "
              "RunState %.1f MiB, the replayed workflow instance %.1f MiB\n",
              (big.trimmed_mib - small.trimmed_mib) * 1024 * 1024 / (big.events - small.events),
              big.history_mib, big.state_mib, big.instance_mib);
  std::printf("W7  rebuild on a fresh worker (embedded: a fresh process recovers the run until it "
              "waits again): %.1f ms for %lld events = %.0f events/s\n"
              "    read+decode %.1f ms, fold %.1f ms, coroutine replay %.1f ms (measured apart)\n",
              big.recover_ms, big.events, big.events / (big.recover_ms / 1000), big.read_ms,
              big.fold_ms, big.replay_ms);

  // (2): one more step at each size.
  // Both runs open at once, their steps taken in turns of 10, so that a change in the load of
  // the machine (or of its disk) falls on both alike.
  std::vector<double> long_costs, short_costs;
  double long_cpu = 0, short_cpu = 0;
  {
    StepMeter long_meter(long_path), short_meter(short_path);
    for (int taken = 0; taken < options.steps; taken += 10) {
      const int n = std::min(10, options.steps - taken);
      long_meter.Take(n);
      short_meter.Take(n);
    }
    long_costs = long_meter.costs();
    short_costs = short_meter.costs();
    long_cpu = long_meter.cpu_ms_per_step();
    short_cpu = short_meter.cpu_ms_per_step();
  }
  const double at_short = Percentile(short_costs, 0.5), at_long = Percentile(long_costs, 0.5);
  std::printf("W7  one more step (signal, model call, tool call; synchronous=FULL; in turns of 10), p50 of %d: "
              "%.3f ms at ~%lld events, %.3f ms at ~%lld events: ratio %.2f (target <= 1.2); "
              "p99 %.3f vs %.3f ms; a step is %.1f x fsync floor\n",
              options.steps, at_short, static_cast<long long>(short_events), at_long,
              static_cast<long long>(long_events), at_long / at_short,
              Percentile(short_costs, 0.99), Percentile(long_costs, 0.99),
              at_short * 1000 / floor.mean_us);
  std::printf("W7  CPU per step: %.3f ms at ~%lld events, %.3f ms at ~%lld events: ratio %.2f\n",
              short_cpu, static_cast<long long>(short_events), long_cpu,
              static_cast<long long>(long_events), long_cpu / short_cpu);
  RemoveJournal(long_path);
  RemoveJournal(short_path);
}

}  // namespace reckon::bench
