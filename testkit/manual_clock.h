// ManualClock: a Clock (engine/clock.h) that moves only when told, for time skipping in tests.
// A workflow that sleeps three days, or an approval that expires in a week, is tested in
// milliseconds: Advance(72h) moves the time, and every engine timer that came due (workflow
// timers, retry backoffs, attempt deadlines) fires the next time the engine runs.
//
// The engine's TimerQueue registers itself as a watcher (ClockWatcher), so on this clock no
// timer waits on the steady clock; AdvanceToNextDue() jumps to the earliest time any watcher
// waits for, which is how TestEnv's auto-skip mode runs a run to its end without real waits.
//
// Time never goes back: Advance refuses a negative step. Run ids and the `now` markers of
// workflows read this clock, so runs tested with it are as reproducible as their start time.
//
// Ownership: watchers are not owned and remove themselves before they die. Not thread-safe:
// move the clock on the thread that runs its engine, while the engine's loop is not running
// (TestEnv does both).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "reckon/engine/clock.h"

namespace reckon::testkit {

class ManualClock final : public Clock {
 public:
  // Starts at `start`; the default is the system time now, to the second, so that deadlines a
  // tool converts to the steady clock are not already past.
  ManualClock();
  explicit ManualClock(TimePoint start);
  ManualClock(const ManualClock&) = delete;
  ManualClock& operator=(const ManualClock&) = delete;

  std::int64_t NowMicros() override { return ToMicros(now_); }
  TimePoint Now() const { return now_; }

  // Moves the time forward by `step` and tells every watcher. Throws std::invalid_argument for
  // a negative step (a bug in the test).
  void Advance(std::chrono::microseconds step);
  // The earliest time a watcher waits for (nullopt: nothing waits on the clock).
  std::optional<TimePoint> NextDue() const;
  // Jumps to NextDue() if it lies ahead and tells the watchers; returns whether the clock
  // moved. What is already due needs no jump: false.
  bool AdvanceToNextDue();

  bool AddWatcher(ClockWatcher& watcher) override;
  void RemoveWatcher(ClockWatcher& watcher) override;

 private:
  void Notify();

  TimePoint now_;
  std::vector<ClockWatcher*> watchers_;  // not owned
};

}  // namespace reckon::testkit
