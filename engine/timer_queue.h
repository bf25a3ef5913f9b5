// TimerQueue: many wake-ups on one Asio timer. Entries fire in due order on the owner's
// executor; the callbacks are plain functions that must not throw. Times are microseconds
// since the Unix epoch on the engine's Clock, converted to a steady-clock wait when armed.
// Not thread-safe: use it on its executor only. Destroying it drops pending entries.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <functional>
#include <map>

#include "reckon/engine/clock.h"

namespace reckon {

class TimerQueue {
 public:
  TimerQueue(boost::asio::any_io_executor executor, Clock& clock);
  ~TimerQueue();

  void Arm(std::int64_t due_us, std::function<void()> callback);
  std::size_t size() const { return entries_.size(); }
  void Clear();

 private:
  void Rearm();
  void FireDue();

  Clock& clock_;
  boost::asio::steady_timer timer_;
  std::multimap<std::int64_t, std::function<void()>> entries_;
  std::int64_t armed_for_ = 0;  // due time the Asio timer is waiting for; 0 when idle
  std::shared_ptr<bool> alive_;  // lets a completion that outlives us see that we are gone
};

}  // namespace reckon
