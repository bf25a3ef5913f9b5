#include "reckon/worker/retry_backoff.h"

#include <algorithm>

namespace reckon {

RetryBackoff::RetryBackoff(std::chrono::milliseconds initial, std::chrono::milliseconds cap,
                           std::uint64_t seed)
    : initial_(std::max(initial, std::chrono::milliseconds(1))),
      cap_(std::max(cap, initial_)),
      random_(seed) {}

std::chrono::milliseconds RetryBackoff::Next() {
  // Doubling stops once the cap is reached (no overflow however long the failures last).
  std::chrono::milliseconds full = initial_;
  for (int i = 0; i < failures_ && full < cap_; ++i) full *= 2;
  full = std::min(full, cap_);
  ++failures_;
  const std::int64_t half = full.count() / 2;
  std::uniform_int_distribution<std::int64_t> jitter(0, full.count() - half);
  return std::chrono::milliseconds(half + jitter(random_));
}

}  // namespace reckon
