// SimRng: the simulator's only source of chance. Every choice of a seed's world (latencies,
// faults, who crashes when, what people decide) is drawn from one SimRng seeded with the seed
// number, in the order the world makes its choices, so the same seed makes the same choices.
//
// The generator is splitmix64, written out here rather than taken from <random>, whose
// distributions may differ between standard libraries: a seed must mean the same run on every
// machine that builds this code. Plain value; not thread-safe (the simulator has one thread).
#pragma once

#include <cstdint>

namespace reckon::sim {

class SimRng {
 public:
  explicit SimRng(std::uint64_t seed) : state_(seed) {}

  std::uint64_t Next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n); n must be > 0.
  std::uint64_t Below(std::uint64_t n) { return Next() % n; }
  // Uniform in [lo, hi], both included; lo <= hi.
  std::int64_t Between(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(Below(static_cast<std::uint64_t>(hi - lo) + 1));
  }
  // True with probability `p` (0: never; 1: always), to a millionth.
  bool Chance(double p) {
    if (p <= 0) return false;
    return Below(1'000'000) < static_cast<std::uint64_t>(p * 1'000'000);
  }

 private:
  std::uint64_t state_;
};

}  // namespace reckon::sim
