// Dispatcher: delivers the transactional outbox (ARCHITECTURE.md, decision 41). It reads the
// messages that committed steps wrote and the broker has not acknowledged, hands each to a
// Publisher with its message id, and records every attempt in the journal: the ack's stream
// sequence, or the error and the time of the next try (exponential backoff). A message leaves
// the pending set only when an ack is recorded, so after a crash (of the process, or between
// the ack and its record) every unacknowledged message is published again, under the same id:
// the broker drops the copy inside its duplicate window, the consumer by id beyond it.
//
// It never runs on the engine's thread and the engine never waits for it: Start() runs it on
// a thread of its own that sleeps until the next message is due, `idle_poll` passes, or
// Notify() says a commit added messages. RunOnce() is one pass, for tests and tools that
// drive it themselves. There is no order between messages once one of them is retried.
//
// Ownership: owns its store (a connection of its own on the journal) and its publisher.
// Threading: Start/Stop/Notify/stats from any thread; RunOnce only while not started.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "reckon/base/error.h"
#include "reckon/outbox/publisher.h"
#include "reckon/storage/outbox_store.h"

namespace reckon::outbox {

struct DispatcherOptions {
  std::size_t batch = 128;  // messages read per pass
  // The delay before retry n (n = failed attempts so far) is first_backoff * 2^(n-1), at most
  // max_backoff.
  std::chrono::milliseconds first_backoff{100};
  std::chrono::milliseconds max_backoff{30000};
  // How long the thread sleeps when nothing is due and nobody calls Notify().
  std::chrono::milliseconds idle_poll{200};
};

// What delivery achieved so far (since construction).
struct DispatcherStats {
  std::int64_t acked = 0;       // acks recorded, duplicates included
  std::int64_t duplicates = 0;  // acks where the broker already had the message
  std::int64_t failed = 0;      // failed attempts recorded
  std::int64_t store_errors = 0;  // passes that could not read or write the journal
};

class Dispatcher {
 public:
  Dispatcher(std::unique_ptr<storage::OutboxStore> store, std::unique_ptr<Publisher> publisher,
             DispatcherOptions options = {});
  ~Dispatcher();  // Stop()s
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  void Start();
  // Finishes the publish in progress (at most the publisher's ack timeout), then joins.
  void Stop();
  // Wakes the thread: new messages may be due.
  void Notify();

  // One pass at `now_us`: publishes the due messages in order until the first failure (the
  // broker is likely down; the rest wait for the next pass), then records every attempt of the
  // pass in one transaction. Errors: the store's (reading or recording failed; nothing is
  // lost: the pass's messages stay pending and are published again under the same ids).
  Result<DispatcherStats> RunOnce(std::int64_t now_us);

  DispatcherStats stats() const;

  // The retry delay after `failed_attempts` failures (>= 1).
  static std::chrono::milliseconds Backoff(const DispatcherOptions& options,
                                           std::int64_t failed_attempts);

 private:
  void Loop();

  std::unique_ptr<storage::OutboxStore> store_;
  std::unique_ptr<Publisher> publisher_;
  DispatcherOptions options_;
  std::atomic<std::int64_t> acked_{0}, duplicates_{0}, failed_{0}, store_errors_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;     // guarded by mutex_
  bool notified_ = false;  // guarded by mutex_
  std::thread thread_;
};

}  // namespace reckon::outbox
