// This process's memory and CPU as Linux reports them, and a way to measure a workload in a
// fresh process: the same binary run again with other arguments, its output passed through.
#pragma once

#include <string>
#include <vector>

namespace reckon::bench {

// VmRSS (resident now) and VmHWM (the peak resident set) from /proc/self/status, in MiB;
// 0 if it cannot be read.
double RssMiB();
double PeakRssMiB();
// User + system CPU seconds of this process so far.
double SelfCpuSeconds();
// Gives the heap's free pages back to the kernel (malloc_trim), so that RSS counts what is
// held rather than what was freed.
void TrimHeap();

// Runs this binary (/proc/self/exe) with `args`, echoes each line it prints to stdout, and
// returns the lines that start with `prefix` (the child's results for the parent). Exits the
// process with a message if the child cannot be started or fails.
std::vector<std::string> RunSelf(const std::vector<std::string>& args, const std::string& prefix);

}  // namespace reckon::bench
