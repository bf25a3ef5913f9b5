#include "reckon/engine/timer_queue.h"

#include <chrono>

namespace reckon {

TimerQueue::TimerQueue(boost::asio::any_io_executor executor, Clock& clock)
    : clock_(clock), timer_(executor), alive_(std::make_shared<bool>(true)) {
  clock_reports_moves_ = clock_.AddWatcher(*this);
}

TimerQueue::~TimerQueue() {
  if (clock_reports_moves_) clock_.RemoveWatcher(*this);
  *alive_ = false;
  timer_.cancel();
}

void TimerQueue::Arm(std::int64_t due_us, std::uint64_t owner, std::function<void()> callback) {
  auto entry = entries_.emplace(due_us, Entry{owner, std::move(callback)});
  if (owner != 0) by_owner_[owner].push_back(entry);
  if (armed_for_ == 0 || due_us < armed_for_) Rearm();
}

void TimerQueue::Forget(std::uint64_t owner) {
  auto it = by_owner_.find(owner);
  if (it == by_owner_.end()) return;
  for (Entries::iterator entry : it->second) entries_.erase(entry);
  by_owner_.erase(it);
  // The Asio timer may still wait for a dropped entry: it then fires, finds nothing due and
  // re-arms for what is left.
}

void TimerQueue::Unindex(Entries::iterator entry) {
  if (entry->second.owner == 0) return;
  auto it = by_owner_.find(entry->second.owner);
  if (it == by_owner_.end()) return;
  std::erase(it->second, entry);
  if (it->second.empty()) by_owner_.erase(it);
}

void TimerQueue::Clear() {
  entries_.clear();
  by_owner_.clear();
  armed_for_ = 0;
  timer_.cancel();
}

std::optional<std::int64_t> TimerQueue::NextDueMicros() const {
  if (entries_.empty()) return std::nullopt;
  return entries_.begin()->first;
}

void TimerQueue::OnClockMoved() {
  armed_for_ = 0;
  Rearm();
}

void TimerQueue::Rearm() {
  if (entries_.empty()) {
    armed_for_ = 0;
    return;
  }
  armed_for_ = entries_.begin()->first;
  const std::int64_t wait_us = std::max<std::int64_t>(0, armed_for_ - clock_.NowMicros());
  if (wait_us > 0 && clock_reports_moves_) {
    timer_.cancel();  // OnClockMoved() re-arms once the clock reaches the entry
    return;
  }
  timer_.expires_after(std::chrono::microseconds(wait_us));
  std::weak_ptr<bool> alive = alive_;
  timer_.async_wait([this, alive](const boost::system::error_code& ec) {
    auto still = alive.lock();
    if (!still || !*still || ec) return;  // cancelled by a re-arm or by destruction
    FireDue();
  });
}

void TimerQueue::FireDue() {
  armed_for_ = 0;
  const std::int64_t now = clock_.NowMicros();
  while (!entries_.empty() && entries_.begin()->first <= now) {
    auto callback = std::move(entries_.begin()->second.callback);
    Unindex(entries_.begin());
    entries_.erase(entries_.begin());
    callback();
  }
  Rearm();
}

}  // namespace reckon
