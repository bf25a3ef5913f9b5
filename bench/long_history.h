// W7 long history (issue 18) on the embedded engine: one "agent_loop" run
// (bench/long_workflows.h) grown to a target number of events, then measured with
// synchronous=FULL.
#pragma once

#include <cstdint>
#include <string>

#include "bench/fsync_floor.h"

namespace reckon::bench {

struct LongHistoryOptions {
  std::int64_t events = 100'000;  // the size of the long history
  std::int64_t short_events = 100;  // the size of the short one
  int steps = 300;                // steps measured at each size (p50)
  int bytes = 256;                // the text each model and tool output carries
};

// In this process (a child of W7): recovers the run of journal `path` on a fresh engine and
// prints "W7RESULT events recover_ms read_ms fold_ms replay_ms floor_mib rss_mib trimmed_mib
// peak_mib history_mib state_mib instance_mib" for the parent: the last three are what a
// second read, fold and replay add to RSS, piece by piece.
void RecoverOnce(const std::string& path);

// Builds the history with synchronous=OFF (diagnosis speed, not measured), then measures, with
// synchronous=FULL: the memory the recovered run holds and the time to recover it (in a fresh
// child process), and the p50 cost of one more step at the long and at the short size.
void LongHistory(const std::string& dir, const LongHistoryOptions& options,
                 const FsyncFloor& floor);

}  // namespace reckon::bench
