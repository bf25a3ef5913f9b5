#include "reckon/testkit/manual_clock.h"

#include <algorithm>
#include <stdexcept>

namespace reckon::testkit {

ManualClock::ManualClock()
    : now_(std::chrono::floor<std::chrono::seconds>(
          std::chrono::time_point_cast<std::chrono::microseconds>(
              std::chrono::system_clock::now()))) {}

ManualClock::ManualClock(TimePoint start) : now_(start) {}

void ManualClock::Advance(std::chrono::microseconds step) {
  if (step.count() < 0) throw std::invalid_argument("ManualClock::Advance: time never goes back");
  now_ += step;
  Notify();
}

std::optional<TimePoint> ManualClock::NextDue() const {
  std::optional<std::int64_t> earliest;
  for (const ClockWatcher* watcher : watchers_) {
    std::optional<std::int64_t> due = watcher->NextDueMicros();
    if (due && (!earliest || *due < *earliest)) earliest = due;
  }
  if (!earliest) return std::nullopt;
  return FromMicros(*earliest);
}

bool ManualClock::AdvanceToNextDue() {
  std::optional<TimePoint> due = NextDue();
  if (!due || *due <= now_) return false;
  now_ = *due;
  Notify();
  return true;
}

bool ManualClock::AddWatcher(ClockWatcher& watcher) {
  watchers_.push_back(&watcher);
  return true;
}

void ManualClock::RemoveWatcher(ClockWatcher& watcher) { std::erase(watchers_, &watcher); }

void ManualClock::Notify() {
  // A copy: a watcher may add or remove watchers while it hears of the move.
  const std::vector<ClockWatcher*> watchers = watchers_;
  for (ClockWatcher* watcher : watchers) {
    if (std::find(watchers_.begin(), watchers_.end(), watcher) != watchers_.end()) {
      watcher->OnClockMoved();
    }
  }
}

}  // namespace reckon::testkit
