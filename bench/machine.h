// One line describing the machine a benchmark ran on (CPU model, cores, memory, kernel, and the
// filesystem of the benchmark directory), printed at the top of every benchmark's output.
#pragma once

#include <string>

namespace reckon::bench {

std::string DescribeMachine(const std::string& dir);

}  // namespace reckon::bench
