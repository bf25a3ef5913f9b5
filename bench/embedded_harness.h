// An embedded host for the long-run benchmarks (bench/long_bench.cc): one journal file, the
// benchmark tools and workflows registered, and a trace sink that wakes whoever waits for a run
// to finish or to commit more operations. Everything runs on the host's io_context, on the
// thread that runs it.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>

#include "reckon/engine/engine.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "reckon/host/embedded_host.h"

namespace reckon::bench {

using Sync = storage::SqliteJournalOptions::Sync;

// The history limit the long-run benchmarks run with: the engine's default hard limit
// (HistoryLimits::max_events, 50,000) would fail W7's 100,000-event run, so it is raised here,
// as an operator would with --history-max-events.
inline constexpr std::int64_t kBenchHistoryMaxEvents = 1'000'000;

class Harness final : public TraceSink {
 public:
  // Opens (or creates) the journal at `path`; exits the process with a message on failure.
  Harness(const std::string& path, Sync sync);
  ~Harness() override;

  // Registers, now, a wait until run `id` finishes or has committed more than `committed`
  // operations; await the returned timer (it is cancelled then), then call Done(id).
  std::shared_ptr<boost::asio::steady_timer> Expect(const std::string& id, int committed);
  void Done(const std::string& id) { waiters_.erase(id); }
  // Operations committed by run `id` as of its last committed batch.
  int committed(const std::string& id) { return committed_now_[id]; }
  void set_committed(const std::string& id, int n) { committed_now_[id] = n; }
  // Events committed through this host so far (all runs).
  std::int64_t events_committed() const { return events_committed_; }

  void OnCommitted(const RunState& run, std::span<const storage::Event> events) override;

  std::unique_ptr<EmbeddedHost> host;
  boost::asio::io_context& io;
  Engine& engine;
  storage::Journal& journal;
  WorkflowRegistry& workflows;

 private:
  struct Waiter {
    boost::asio::steady_timer* timer;
    int committed_before;
  };
  std::map<std::string, Waiter> waiters_;
  std::map<std::string, int> committed_now_;
  std::int64_t events_committed_ = 0;
};

// Removes a SQLite journal and its -wal and -shm files.
void RemoveJournal(const std::string& path);

}  // namespace reckon::bench
