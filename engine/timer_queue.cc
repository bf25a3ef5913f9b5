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

void TimerQueue::Arm(std::int64_t due_us, std::function<void()> callback) {
  entries_.emplace(due_us, std::move(callback));
  if (armed_for_ == 0 || due_us < armed_for_) Rearm();
}

void TimerQueue::Clear() {
  entries_.clear();
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
    auto callback = std::move(entries_.begin()->second);
    entries_.erase(entries_.begin());
    callback();
  }
  Rearm();
}

}  // namespace reckon
