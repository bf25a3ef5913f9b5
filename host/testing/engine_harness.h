// EngineHarness: one embedded-mode engine (an EmbeddedHost: Engine + LocalWorker) over a real
// journal of its own, with the life cycle an engine test needs: Boot() a "process", drive
// it until something holds, end it mid-flight as a crash would (Crash() from inside a tool,
// or Shutdown()), Boot() a new one on the same journal and Recover().
//
// Backend: the journal is opened with storage::OpenJournal from storage::NewTestJournal
// (storage/testing/test_backend.h): a SQLite file in the harness's temporary directory by
// default, a fresh database on the process's private PostgreSQL with RECKON_TEST_BACKEND=postgres.
//
// Driving: the engine runs on the harness's io_context, on the test's thread, only inside the
// harness's blocking calls (Start, Decide, RunUntil, ...). A RunUntil condition is checked
// after every batch the engine commits and whenever a fake calls Poke(); no polling.
//
// Ownership: the harness owns the journal, the registries, the worker and the engine. Fakes
// that tools use (FakeProvider) must outlive the harness. Not thread-safe.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "reckon/engine/engine.h"
#include "reckon/storage/journal.h"
#include "tests/support/temp_dir.h"
#include "reckon/host/embedded_host.h"
#include "reckon/worker/tool.h"
#include "reckon/worker/workflow_registry.h"

namespace reckon::testing {

inline constexpr std::chrono::milliseconds kDefaultWait{5000};

class EngineHarness {
 public:
  // Opens the journal; registers the test workflows (host/testing/test_workflows.h).
  explicit EngineHarness(EngineOptions options = {});
  ~EngineHarness();
  EngineHarness(const EngineHarness&) = delete;
  EngineHarness& operator=(const EngineHarness&) = delete;

  // Register before Boot(); the worker reads them for as long as it lives.
  ToolRegistry& tools() { return *tools_; }
  WorkflowRegistry& workflows() { return *workflows_; }
  // A new release of the workflow code (only while no engine is booted): an empty registry.
  WorkflowRegistry& ReplaceWorkflows();
  // A trace sink for the engines booted from now on (not owned; may be null).
  void set_trace(TraceSink* trace) { trace_ = trace; }
  // The clock of the engines booted from now on (not owned; null: the system clock).
  void set_clock(Clock* clock) { clock_ = clock; }

  // Starts a process life: a fresh io_context, worker and engine over the journal.
  void Boot();
  // Ends the life abruptly: the engine, the worker, and every coroutine still on the
  // io_context are destroyed where they stand; the journal is closed and reopened.
  void Shutdown();
  void Restart() {
    Shutdown();
    Boot();
  }
  bool booted() const { return host_ != nullptr; }
  // From inside the engine (a tool): the current life stops at its next suspension, like a
  // process that was killed. The test then calls Restart().
  void Crash();
  bool crashed() const { return crashed_; }

  Engine& engine() { return host_->engine(); }
  boost::asio::io_context& io() { return host_->io(); }

  // The engine's operations, run to completion (or kDefaultWait: kDeadlineExceeded).
  Result<storage::RunRef> Start(const std::string& workflow_id, const std::string& type,
                                boost::json::value input);
  Result<int> Recover();
  Result<void> Decide(const std::string& workflow_id, ApprovalDecision decision);
  Result<void> Resolve(const std::string& workflow_id, HumanResolution resolution);

  // Runs the engine until `done()` holds (true), a Crash(), or `timeout` (false).
  bool RunUntil(std::function<bool()> done, std::chrono::milliseconds timeout = kDefaultWait);
  // Until the run is finished, stuck, or only waits for a person.
  bool RunUntilSettled(const std::string& workflow_id,
                       std::chrono::milliseconds timeout = kDefaultWait);
  // Until the operation of `step_id` is in `state`.
  bool RunUntilState(const std::string& workflow_id, const std::string& step_id,
                     OperationState state, std::chrono::milliseconds timeout = kDefaultWait);
  // Checks the RunUntil condition now; fakes call it when something they track changes.
  void Poke();
  // Lets the engine run for `duration`: whatever it had scheduled for then had its chance.
  // False if the engine's loop did not get there (a Crash(), a stuck loop).
  bool RunFor(std::chrono::milliseconds duration);

  std::optional<RunSummary> Describe(const std::string& workflow_id) const;
  // The operation of `step_id`, as the engine sees it now; nullopt if there is none.
  std::optional<OperationRecord> Operation(const std::string& workflow_id,
                                         const std::string& step_id) const;

  // The journal, for reads: only while no engine is booted (the engine's group committer owns
  // it meanwhile). Events() reads the newest run of a workflow id.
  storage::Journal& journal();
  std::vector<storage::Event> Events(const std::string& workflow_id);
  // The journal's name for storage::OpenJournal, OpenOutboxStore, ...: a SQLite file's path,
  // or a postgresql:// connection string (storage::TestOnPostgres()).
  const std::string& journal_name() const { return journal_name_; }
  // The same, for tests that open the SQLite file itself (SQLite only).
  const std::string& journal_path() const { return journal_name_; }
  const TempDir& dir() const { return dir_; }

  // Runs an awaitable on the engine's executor until it completes; nullopt on timeout.
  template <class T>
  std::optional<T> Await(boost::asio::awaitable<T> operation,
                         std::chrono::milliseconds timeout = kDefaultWait) {
    auto slot = std::make_shared<std::optional<T>>();
    auto thrown = std::make_shared<std::exception_ptr>();
    boost::asio::co_spawn(io(), Capture(std::move(operation), slot),
                          [this, thrown](std::exception_ptr e) {
                            *thrown = e;
                            Poke();
                          });
    RunUntil([slot, thrown] { return slot->has_value() || *thrown; }, timeout);
    if (*thrown) std::rethrow_exception(*thrown);
    return std::move(*slot);
  }

 private:
  // co_spawn needs a default-constructible result; Result<T> is not.
  template <class T>
  static boost::asio::awaitable<void> Capture(boost::asio::awaitable<T> operation,
                                              std::shared_ptr<std::optional<T>> slot) {
    T value = co_await std::move(operation);
    slot->emplace(std::move(value));
  }

  // Pokes the RunUntil condition after every committed batch and stopped run.
  class PokeSink final : public TraceSink {
   public:
    explicit PokeSink(EngineHarness& harness) : harness_(harness) {}
    void OnCommitted(const RunState&, std::span<const storage::Event>) override { harness_.Poke(); }
    void OnRunStopped(const RunState&, std::string_view) override { harness_.Poke(); }

   private:
    EngineHarness& harness_;
  };

  TempDir dir_;
  EngineOptions options_;
  std::string journal_name_;
  std::unique_ptr<storage::Journal> journal_;  // for reads, only while no host is booted
  std::unique_ptr<ToolRegistry> tools_;
  std::unique_ptr<WorkflowRegistry> workflows_;
  TraceSink* trace_ = nullptr;
  Clock* clock_ = nullptr;
  PokeSink poke_{*this};
  std::unique_ptr<EmbeddedHost> host_;  // one process life
  const std::function<bool()>* done_ = nullptr;  // the running RunUntil's condition
  bool crashed_ = false;
};

}  // namespace reckon::testing
