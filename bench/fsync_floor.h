// The raw durability floor of a disk: the latency of writing 4 KiB and calling fdatasync on a
// file in a given directory. Benchmarks report their figures as ratios to it, measured in the
// same run, so results from different machines can be compared.
#pragma once

#include <string>

namespace reckon::bench {

struct FsyncFloor {
  double mean_us = 0;     // mean latency of one 4 KiB write + fdatasync
  double p50_us = 0;
  double p99_us = 0;
  double ops_per_s = 0;   // 1e6 / mean_us
};

// Measures `iterations` write+fdatasync cycles on a scratch file in `dir` (removed afterwards).
FsyncFloor MeasureFsyncFloor(const std::string& dir, int iterations);

}  // namespace reckon::bench
