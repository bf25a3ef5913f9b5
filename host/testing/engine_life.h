// EngineLife: one process life of the embedded engine, built by hand over journals the test
// opened, for tests that end lives abruptly (storage faults, power cuts). It commits on a
// thread of its own with a second connection for reads, as `reckon server` runs
// (EngineOptions::commit_executor, ::reader), and records per run how many events the engine
// reported durable (`acknowledged`), the promise those tests check against the disk.
//
// The test's thread runs `io` (RunUntil, Await). Destroying the life is a crash: once no
// commit runs, the engine, the worker and every coroutine still on `io` are destroyed where
// they stand. The journals, registries and tools must outlive it. Not thread-safe.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "reckon/engine/clock.h"
#include "reckon/engine/engine.h"
#include "reckon/engine/trace_sink.h"
#include "reckon/storage/journal.h"
#include "reckon/host/local_worker.h"
#include "reckon/worker/tool.h"
#include "reckon/worker/workflow_registry.h"

namespace reckon::testing {

class EngineLife {
 public:
  // `journal` commits, `reader` serves the engine's reads. `wait` bounds RunUntil: a watchdog
  // against a hang, not a timing assertion.
  EngineLife(storage::Journal& journal, storage::Journal& reader,
             const WorkflowRegistry& workflows, const ToolRegistry& tools,
             std::chrono::milliseconds wait);
  ~EngineLife();
  EngineLife(const EngineLife&) = delete;
  EngineLife& operator=(const EngineLife&) = delete;

  // Runs `io` until `done()` holds; false if `wait` passes first.
  bool RunUntil(const std::function<bool()>& done);

  // Starts `operation` on the engine's executor; the slot fills when it completes.
  template <class T>
  std::shared_ptr<std::optional<T>> Spawn(boost::asio::awaitable<T> operation) {
    auto slot = std::make_shared<std::optional<T>>();
    boost::asio::co_spawn(io, Capture(std::move(operation), slot), boost::asio::detached);
    return slot;
  }
  // Spawn, then run until it completes (std::runtime_error if `wait` passes first).
  template <class T>
  T Await(boost::asio::awaitable<T> operation) {
    auto slot = Spawn(std::move(operation));
    if (!RunUntil([&slot] { return slot->has_value(); })) {
      throw std::runtime_error("the engine did not answer");
    }
    return std::move(**slot);
  }

  boost::asio::io_context io;

 private:
  template <class T>
  static boost::asio::awaitable<void> Capture(boost::asio::awaitable<T> operation,
                                              std::shared_ptr<std::optional<T>> slot) {
    T value = co_await std::move(operation);
    slot->emplace(std::move(value));
  }
  struct AckSink final : TraceSink {
    explicit AckSink(EngineLife& life) : life(life) {}
    void OnCommitted(const RunState& run, std::span<const storage::Event>) override;
    EngineLife& life;
  };

  const std::chrono::milliseconds wait_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{
      io.get_executor()};
  boost::asio::thread_pool commit_thread_{1};
  SystemClock clock_;
  AckSink acks_{*this};
  std::unique_ptr<LocalWorker> worker_;

 public:
  std::unique_ptr<Engine> engine;
  std::map<std::string, std::int64_t> acknowledged;  // events per run the engine saw durable
};

}  // namespace reckon::testing
