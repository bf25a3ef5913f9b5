// TimerQueue: many wake-ups on one Asio timer. Entries fire in due order on the owner's
// executor; the callbacks are plain functions that must not throw. Times are microseconds
// since the Unix epoch on the engine's Clock, converted to a steady-clock wait when armed; on a
// clock that moves only when told (engine/clock.h) nothing waits on the steady clock: entries
// fire when a move of the clock makes them due.
// Not thread-safe: use it on its executor only. Destroying it drops pending entries.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "reckon/engine/clock.h"

namespace reckon {

class TimerQueue final : private ClockWatcher {
 public:
  TimerQueue(boost::asio::any_io_executor executor, Clock& clock);
  ~TimerQueue();

  void Arm(std::int64_t due_us, std::function<void()> callback);
  std::size_t size() const { return entries_.size(); }
  void Clear();
  // The earliest due time of an entry (microseconds since the epoch); nullopt when empty.
  std::optional<std::int64_t> NextDueMicros() const override;

 private:
  void OnClockMoved() override;
  void Rearm();
  void FireDue();

  Clock& clock_;
  boost::asio::steady_timer timer_;
  std::multimap<std::int64_t, std::function<void()>> entries_;
  std::int64_t armed_for_ = 0;  // due time the Asio timer is waiting for; 0 when idle
  bool clock_reports_moves_ = false;  // the clock tells us when it moves (a manual clock)
  std::shared_ptr<bool> alive_;  // lets a completion that outlives us see that we are gone
};

}  // namespace reckon
