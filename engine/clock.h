// Clock: where the engine gets the time. Passed in at construction (never read from a global),
// so tests can drive time and replay never depends on the wall clock.
//
// Two kinds of clock: one that moves by itself (SystemClock), and one that moves only when
// told (testkit/manual_clock.h, for time skipping in tests). A clock of the second kind
// reports each move to its watchers (ClockWatcher: the engine's TimerQueue), which then wait
// for those moves instead of for the steady clock, so a timer of three days fires as soon as
// the clock is moved past it. Clocks are not thread-safe: use one on its engine's executor.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace reckon {

// A moment, to the microsecond, on the system clock: what the engine reasons with. Journal
// events and rows store it as microseconds since the Unix epoch (ToMicros / FromMicros), and
// only where they are built or read.
using TimePoint = std::chrono::sys_time<std::chrono::microseconds>;
constexpr std::int64_t ToMicros(TimePoint t) { return t.time_since_epoch().count(); }
constexpr TimePoint FromMicros(std::int64_t us) { return TimePoint(std::chrono::microseconds(us)); }

// Something that waits on a clock that moves only when told (a TimerQueue).
class ClockWatcher {
 public:
  // The clock moved forward: whatever came due should fire (on the watcher's executor, not
  // necessarily before this returns).
  virtual void OnClockMoved() = 0;
  // The earliest time the watcher waits for, in microseconds since the epoch; nullopt if none.
  virtual std::optional<std::int64_t> NextDueMicros() const = 0;

 protected:
  ~ClockWatcher() = default;
};

class Clock {
 public:
  virtual ~Clock() = default;
  // Microseconds since the Unix epoch.
  virtual std::int64_t NowMicros() = 0;
  // Registers `watcher` (not owned; it removes itself before it dies). Returns whether the clock
  // will report its moves: true only for a clock that moves when told; a clock that moves by
  // itself keeps no watchers and returns false, and waits on it are steady-clock waits.
  virtual bool AddWatcher(ClockWatcher&) { return false; }
  virtual void RemoveWatcher(ClockWatcher&) {}
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
