// RetryBackoff: the waits of a retry loop after failures in a row: exponential from `initial`,
// doubling up to `cap`, each with "equal jitter" (half of it fixed, half drawn at random), so
// that many workers refused at the same moment do not come back in step, and a test can
// still bound how often a loop tries (the n-th wait in a row is at least initial * 2^(n-1) / 2,
// and at least cap / 2 once it reaches the cap). Reset() after a success.
//
// A plain value; not thread-safe. The random source is seeded at construction: pass a seed
// to replay one sequence.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>

namespace reckon {

class RetryBackoff {
 public:
  RetryBackoff(std::chrono::milliseconds initial, std::chrono::milliseconds cap,
               std::uint64_t seed = std::random_device{}());

  // The wait before the next attempt, after one more failure.
  std::chrono::milliseconds Next();
  void Reset() { failures_ = 0; }
  // Failures since the last Reset().
  int failures() const { return failures_; }

 private:
  std::chrono::milliseconds initial_;
  std::chrono::milliseconds cap_;
  int failures_ = 0;
  std::mt19937_64 random_;
};

}  // namespace reckon
