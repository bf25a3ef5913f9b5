// SimScheduler: the simulated world's agenda. Everything that happens outside the engine (a
// message arriving, a worker waking up, a person deciding, a crash) is an entry due at a
// simulated time; entries due at the same time run in the order they were added, so the
// agenda is as deterministic as the code that fills it.
//
// Times are microseconds on the simulation's ManualClock. The scheduler never moves the
// clock: the world (tests/sim/sim_world.h) moves it to the next due time, then runs what is
// due. Not thread-safe; entries may add entries.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <utility>

namespace reckon::sim {

class SimScheduler {
 public:
  void At(std::int64_t due_us, std::function<void()> action) {
    entries_.emplace(std::make_pair(due_us, next_order_++), std::move(action));
  }
  std::optional<std::int64_t> NextDue() const {
    if (entries_.empty()) return std::nullopt;
    return entries_.begin()->first.first;
  }
  // Runs the earliest entry if it is due at `now_us` or before; returns whether one ran.
  bool RunOneDue(std::int64_t now_us) {
    if (entries_.empty() || entries_.begin()->first.first > now_us) return false;
    auto node = entries_.extract(entries_.begin());
    node.mapped()();
    return true;
  }
  std::size_t size() const { return entries_.size(); }

 private:
  std::map<std::pair<std::int64_t, std::uint64_t>, std::function<void()>> entries_;
  std::uint64_t next_order_ = 0;
};

}  // namespace reckon::sim
