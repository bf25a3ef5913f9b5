// W4 fan-out (issue 18) on the embedded engine, and the short W3 it is compared with.
#pragma once

#include <string>
#include <vector>

#include "bench/fsync_floor.h"

namespace reckon::bench {

// Embedded W3 as engine_bench runs it (32 concurrent clients, each running "ten_calls"
// workflows one after another, synchronous=FULL) for `seconds`; prints the figure and returns
// the steps (calls) per second.
double MeasureW3StepsPerSecond(const std::string& dir, double seconds, const FsyncFloor& floor);

// In this process (a child of W4): one "fan_out" workflow of `calls` parallel noop calls on a
// fresh journal, synchronous=FULL. Prints a line "W4RESULT calls makespan_ms cpu_ms peak_mib
// floor_mib events" for the parent.
void FanOutOnce(const std::string& dir, int calls);

// Runs FanOutOnce in a fresh child process for each count in `counts` (so that each peak RSS
// is that count's own), then prints the table: makespan, ms and CPU per call, peak RSS, the
// makespan target 10,000 / `w3_steps_per_s` + 2 s scaled to each count, and the ratio of the
// cost per call at the largest count to the smallest.
void FanOut(const std::string& dir, const std::vector<int>& counts, double w3_steps_per_s,
            const FsyncFloor& floor);

}  // namespace reckon::bench
