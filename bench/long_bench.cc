// long_bench: the long-lived agent workloads of issue 18 on the embedded engine, each next to
// the fsync floor of the same run. Every measured figure is synchronous=FULL.
//
//   W4  fan-out: one workflow issues N parallel calls of a no-op read_only tool, then awaits
//       them all, and completes. For each N (default 1,000, 2,000, 5,000, 10,000), in a fresh
//       child process (so that each peak RSS, VmHWM, is that N's own): makespan from start to
//       completion, ms and CPU ms per call, peak RSS. Target: makespan within 2 s of
//       10,000 / (W3 steps/s), W3 measured first in the same run (embedded, concurrency 32,
//       ten_calls) unless --w3-steps-per-s gives it; peak RSS <= 300 MB; the cost per call flat
//       from the smallest N to the largest (their ratio is printed). Embedded mode has no tool
//       slots: every attempt runs at once on the engine's thread.
//   W7  long history: an agent_loop run (a "model" call whose output names the next tool,
//       then that tool's call; bench/long_workflows.h) grown to --w7-events events with
//       synchronous=OFF (and its journal's bytes per event), then: (1) the RSS a fresh process
//       holds with that one run recovered, against its RSS before (the floor), per event, and
//       what a second decoded history, RunState and workflow instance add to it; (3) the time
//       that fresh process takes to recover it until it waits again, split into read+decode,
//       fold and coroutine replay; (2) the p50 latency and the CPU of one more round (signal,
//       model call, tool call) at ~100 and at the long size, both journals open at once and
//       stepped in turns of 10. Target ratio <= 1.2. Embedded only: no server-mode rebuild.
//       The engine's default hard history limit (50,000 events) is raised for these runs.
//
// Usage: long_bench [--dir DIR] [--only w4|w7] [--w4-calls 1000,2000,5000,10000]
//                   [--w3-seconds 5] [--w3-steps-per-s X] [--w7-events 100000]
//                   [--w7-steps 300] [--w7-bytes 256]
// (--w4-once N and --w7-recover PATH are the child processes' modes.)
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/fan_out.h"
#include "bench/fsync_floor.h"
#include "bench/long_history.h"
#include "bench/machine.h"

int main(int argc, char** argv) {
  using namespace reckon::bench;
  CLI::App app{"long_bench: W4 fan-out and W7 long history on the embedded engine"};
  std::string dir = std::filesystem::current_path().string();
  std::string only;
  std::vector<int> w4_calls{1000, 2000, 5000, 10000};
  double w3_seconds = 5;
  double w3_steps_per_s = 0;
  LongHistoryOptions w7;
  int w4_once = 0;
  std::string w7_recover;
  app.add_option("--dir", dir, "scratch directory on the disk to measure");
  app.add_option("--only", only, "run one workload: w4 or w7");
  app.add_option("--w4-calls", w4_calls, "W4: the fan-out sizes, ascending")->delimiter(',');
  app.add_option("--w3-seconds", w3_seconds, "W4: how long to measure W3 for the target");
  app.add_option("--w3-steps-per-s", w3_steps_per_s,
                 "W4: take W3 steps/s from engine_bench instead of measuring it");
  app.add_option("--w7-events", w7.events, "W7: the size of the long history, in events");
  app.add_option("--w7-steps", w7.steps, "W7: steps measured at each size");
  app.add_option("--w7-bytes", w7.bytes, "W7: the text each model and tool output carries");
  app.add_option("--w4-once", w4_once, "child mode: one fan-out of this many calls")->group("");
  app.add_option("--w7-recover", w7_recover, "child mode: recover this journal's run")->group("");
  CLI11_PARSE(app, argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (w4_once > 0) {
    FanOutOnce(dir, w4_once);
    return 0;
  }
  if (!w7_recover.empty()) {
    RecoverOnce(w7_recover);
    return 0;
  }
  std::printf("%s\n", DescribeMachine(dir).c_str());
  auto floor = MeasureFsyncFloor(dir, 2000);
  std::printf("floor: 4 KiB write + fdatasync: mean %.1f us, p50 %.1f us, p99 %.1f us\n",
              floor.mean_us, floor.p50_us, floor.p99_us);
  if (only.empty() || only == "w4") {
    if (w3_steps_per_s <= 0) {
      w3_steps_per_s = MeasureW3StepsPerSecond(dir, w3_seconds, floor);
    } else {
      std::printf("W3  %.0f steps/s, as given (--w3-steps-per-s)\n", w3_steps_per_s);
    }
    FanOut(dir, w4_calls, w3_steps_per_s, floor);
  }
  if (only.empty() || only == "w7") LongHistory(dir, w7, floor);
  return 0;
}
