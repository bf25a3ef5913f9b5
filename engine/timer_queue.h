// TimerQueue: many wake-ups on one Asio timer. Entries fire in due order on the owner's
// executor; the callbacks are plain functions that must not throw. Times are microseconds
// since the Unix epoch on the engine's Clock, converted to a steady-clock wait when armed; on a
// clock that moves only when told (engine/clock.h) nothing waits on the steady clock: entries
// fire when a move of the clock makes them due.
// Not thread-safe: use it on its executor only. Destroying it drops pending entries.
// An entry may carry an owner tag (non-zero): Forget(owner) drops that owner's entries, so
// that what is armed for a run the engine let go of costs no memory until it would have fired.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "reckon/engine/clock.h"

namespace reckon {

class TimerQueue final : private ClockWatcher {
 public:
  TimerQueue(boost::asio::any_io_executor executor, Clock& clock);
  ~TimerQueue();

  void Arm(std::int64_t due_us, std::function<void()> callback) {
    Arm(due_us, 0, std::move(callback));
  }
  void Arm(std::int64_t due_us, std::uint64_t owner, std::function<void()> callback);
  // Drops every entry armed with `owner` (non-zero); costs as many steps as it has entries.
  void Forget(std::uint64_t owner);
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
  struct Entry {
    std::uint64_t owner = 0;
    std::function<void()> callback;
  };
  using Entries = std::multimap<std::int64_t, Entry>;
  Entries entries_;
  // The entries of each owner (non-zero), for Forget. An iterator stays valid until its
  // entry is erased, and every erasure updates this index.
  std::unordered_map<std::uint64_t, std::vector<Entries::iterator>> by_owner_;
  void Unindex(Entries::iterator entry);
  std::int64_t armed_for_ = 0;  // due time the Asio timer is waiting for; 0 when idle
  bool clock_reports_moves_ = false;  // the clock tells us when it moves (a manual clock)
  std::shared_ptr<bool> alive_;  // lets a completion that outlives us see that we are gone
};

}  // namespace reckon
