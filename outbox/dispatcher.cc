#include "reckon/outbox/dispatcher.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

namespace reckon::outbox {
namespace {

std::int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Dispatcher::Dispatcher(std::unique_ptr<storage::OutboxStore> store,
                       std::unique_ptr<Publisher> publisher, DispatcherOptions options)
    : store_(std::move(store)), publisher_(std::move(publisher)), options_(options) {}

Dispatcher::~Dispatcher() { Stop(); }

std::chrono::milliseconds Dispatcher::Backoff(const DispatcherOptions& options,
                                              std::int64_t failed_attempts) {
  std::chrono::milliseconds delay = options.first_backoff;
  for (std::int64_t i = 1; i < failed_attempts && delay < options.max_backoff; ++i) delay *= 2;
  return std::min(delay, options.max_backoff);
}

Result<DispatcherStats> Dispatcher::RunOnce(std::int64_t now_us) {
  DispatcherStats pass;
  RECKON_TRY(std::vector<storage::OutboxRow> due, store_->ListDue(now_us, options_.batch));
  std::vector<storage::OutboxAttempt> attempts;
  attempts.reserve(due.size());
  for (const storage::OutboxRow& row : due) {
    auto published = publisher_->Publish(row.subject, row.message_id, row.payload);
    storage::OutboxAttempt& attempt = attempts.emplace_back();
    attempt.message_id = row.message_id;
    attempt.at_us = now_us;
    if (published) {
      attempt.acked = true;
      attempt.duplicate = published.value().duplicate;
      attempt.stream_seq = published.value().stream_seq;
      ++pass.acked;
      if (attempt.duplicate) ++pass.duplicates;
      continue;
    }
    // Failures so far, this one included, pick the delay (the row counts every attempt, and a
    // message with an attempt recorded has failed them all: an ack ends its attempts).
    const auto delay = Backoff(options_, row.attempts + 1);
    attempt.error = published.error().message();
    attempt.next_attempt_at_us =
        now_us + std::chrono::duration_cast<std::chrono::microseconds>(delay).count();
    ++pass.failed;
    spdlog::warn("outbox: message {} not delivered (attempt {}): {}", row.message_id,
                 row.attempts + 1, attempt.error);
    break;  // the broker is likely down: the rest wait for the next pass
  }
  // The whole pass in one transaction: the journal's write lock once per pass, not per
  // message. If it fails nothing is recorded, and every message of the pass is published
  // again later under its id (the broker keeps one copy).
  RECKON_TRY(store_->RecordAttempts(attempts));
  acked_.fetch_add(pass.acked);
  duplicates_.fetch_add(pass.duplicates);
  failed_.fetch_add(pass.failed);
  return pass;
}

void Dispatcher::Start() {
  std::lock_guard lock(mutex_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "reckon-outbox");  // for top -H, perf, gdb
    Loop();
  });
}

void Dispatcher::Stop() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Dispatcher::Notify() {
  {
    std::lock_guard lock(mutex_);
    notified_ = true;
  }
  wake_.notify_all();
}

DispatcherStats Dispatcher::stats() const {
  return DispatcherStats{acked_.load(), duplicates_.load(), failed_.load(), store_errors_.load()};
}

void Dispatcher::Loop() {
  while (true) {
    {
      std::lock_guard lock(mutex_);
      if (stop_) return;
      notified_ = false;
    }
    auto wait = options_.idle_poll;
    auto pass = RunOnce(NowMicros());
    if (!pass) {
      store_errors_.fetch_add(1);
      spdlog::warn("outbox: dispatcher pass failed: {}", pass.error().ToString());
    } else if (pass.value().failed == 0 &&
               pass.value().acked >= static_cast<std::int64_t>(options_.batch)) {
      wait = std::chrono::milliseconds(0);  // a full batch may have left more behind
    }
    if (pass && wait.count() != 0) {
      auto next = store_->NextDueAt();
      if (next && next.value()) {
        const auto until = std::chrono::microseconds(*next.value() - NowMicros());
        wait = std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(until),
                          std::chrono::milliseconds(0), options_.idle_poll);
      }
    }
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, wait, [this] { return stop_ || notified_; });
  }
}

}  // namespace reckon::outbox
