// Clock: where the engine gets the time. Passed in at construction (never read from a global),
// so tests can drive time and replay never depends on the wall clock.
#pragma once

#include <chrono>
#include <cstdint>

namespace reckon {

// A moment, to the microsecond, on the system clock: what the engine reasons with. Journal
// events and rows store it as microseconds since the Unix epoch (ToMicros / FromMicros), and
// only where they are built or read.
using TimePoint = std::chrono::sys_time<std::chrono::microseconds>;
constexpr std::int64_t ToMicros(TimePoint t) { return t.time_since_epoch().count(); }
constexpr TimePoint FromMicros(std::int64_t us) { return TimePoint(std::chrono::microseconds(us)); }

class Clock {
 public:
  virtual ~Clock() = default;
  // Microseconds since the Unix epoch.
  virtual std::int64_t NowMicros() = 0;
};

class SystemClock final : public Clock {
 public:
  std::int64_t NowMicros() override {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace reckon
