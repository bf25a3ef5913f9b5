// TestEnv: an embedded Reckon for one test of a user's workflows, with everything a test needs
// and nothing it must build: a temporary journal (TempJournal), a clock the test controls
// (ManualClock), the registries, and one engine "process life" at a time over that journal.
// Works with any test framework; testkit/gtest.h adds optional GoogleTest helpers.
//
//   reckon::testkit::TestEnv env;                       // auto-skip: timers fire at once
//   reckon::testkit::FakeProvider payments;
//   env.tools().Register(reckon::testkit::ProviderTool(RefundContract(), payments));
//   env.workflows().Register("refund", RefundWorkflow);
//   env.Start("refund-1", "refund", input);
//   auto run = env.RunUntilSettled("refund-1");        // a 3-day Sleep takes no real time
//   env.CrashAndRestart();                              // the engine dies where it stands
//
// Time. The engine runs on the ManualClock (clock()), which moves only when told. With
// auto_skip (the default), whenever the engine has nothing ready to do the clock jumps to the
// next timer (a workflow's Sleep, a retry's backoff, an attempt's deadline, an approval's
// expiry), so a run goes to its end as fast as the CPU allows; "nothing ready" means no
// handler is ready on the engine's loop, so tools are expected to answer from memory (a
// FakeProvider does; a tool that waits on real I/O sees its deadline come at once). Without
// auto_skip the clock moves only by Skip(duration). Either way, the engine runs only inside
// TestEnv's blocking calls, on the test's thread; between them it stands still.
//
// Lives. The first blocking call boots a life (an EmbeddedHost over the journal, the
// registries borrowed) and recovers the journal; register tools and workflows before it.
// CrashAndRestart() destroys the life where it stands (attempts in flight, coroutines, the
// journal connection) as a kill would, and boots a new one that recovers from the journal:
// in-flight attempts become unknown outcomes, reconciled or handed to a person by contract.
// From inside a tool (or a FakeProvider::OnCall hook), RequestCrash() stops the life at its
// next suspension; the blocking call then fails with kUnavailable and the test calls
// CrashAndRestart().
//
// Results: the blocking calls return what the engine returns. A call that cannot complete
// fails with Errc::kDeadlineExceeded once `real_time_limit` of real time has passed, or at
// once when nothing is left that could ever complete it (the message says which).
//
// Ownership: the environment owns the journal, clock, registries and the current life. Tools'
// fakes (FakeProvider) must outlive it. Not thread-safe: one test thread.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/engine/engine.h"
#include "reckon/storage/event.h"
#include "reckon/testkit/manual_clock.h"
#include "reckon/testkit/replay.h"
#include "reckon/testkit/temp_journal.h"
#include "reckon/host/embedded_host.h"
#include "reckon/worker/tool.h"
#include "reckon/worker/workflow_registry.h"

namespace reckon::testkit {

struct TestEnvOptions {
  EngineOptions engine;
  // Jump the clock to the next timer whenever the engine is idle (see the header comment).
  bool auto_skip = true;
  // Real time one blocking call may take before it gives up with kDeadlineExceeded. A bound
  // for a broken test, never a timing assertion.
  std::chrono::milliseconds real_time_limit{10000};
};

class TestEnv {
 public:
  explicit TestEnv(TestEnvOptions options = {});
  ~TestEnv();
  TestEnv(const TestEnv&) = delete;
  TestEnv& operator=(const TestEnv&) = delete;

  // Register before the first blocking call; every life of the environment uses them.
  ToolRegistry& tools() { return tools_; }
  WorkflowRegistry& workflows() { return workflows_; }
  ManualClock& clock() { return clock_; }
  const std::string& journal_path() const { return journal_.path(); }
  // The auto-skip mode, switched between calls.
  void set_auto_skip(bool on) { options_.auto_skip = on; }

  // --- the engine's operations, each driven to completion -----------------------------------
  Result<storage::RunRef> Start(const std::string& workflow_id, const std::string& type,
                                boost::json::value input);
  Result<void> Signal(const std::string& workflow_id, const std::string& name,
                      const std::string& payload_json);
  Result<void> Cancel(const std::string& workflow_id, const std::string& reason);
  // Grants every approval waiting in `workflow_id`, as `decided_by`; returns how many.
  Result<int> ApprovePending(const std::string& workflow_id,
                             const std::string& decided_by = "test-approver");
  Result<void> Decide(const std::string& workflow_id, ApprovalDecision decision);
  Result<void> Resolve(const std::string& workflow_id, HumanResolution resolution);

  // Runs the engine until `workflow_id` is settled: finished, stopped, or waiting on something
  // outside the engine (a signal, an approval, a person); the summary's `wait` says which.
  Result<RunSummary> RunUntilSettled(const std::string& workflow_id);
  // Runs the engine until every run is settled.
  Result<void> RunUntilIdle();
  // Runs the engine until `done()` holds. Checked whenever the engine's loop has nothing ready.
  Result<void> RunUntil(std::function<bool()> done);
  // Moves the clock by `step` and runs what came due, and what that leads to without waiting.
  // With auto_skip, then runs until every run is settled (RunUntilIdle).
  Result<void> Skip(std::chrono::microseconds step);

  // --- crashes ----------------------------------------------------------------------------
  // Ends the current life abruptly and boots a new one that recovers the journal; returns how
  // many runs it resumed. With no life yet, just boots one.
  Result<int> CrashAndRestart();
  // From inside the engine (a tool, a fake's hook): the life stops at its next suspension.
  void RequestCrash();

  // --- what happened ------------------------------------------------------------------------
  // The run as the engine sees it now (also a finished run, from the journal).
  Result<RunSummary> Describe(const std::string& workflow_id);
  // The newest run of `workflow_id` and its events, read from the journal now.
  Result<RunHistory> History(const std::string& workflow_id);
  // Replays `history` against the workflows registered now (testkit/replay.h).
  Result<void> Replay(const RunHistory& history) const {
    return ReplayHistory(workflows_, history);
  }

  // The current life (booting one if needed), for what the calls above do not cover; run its
  // awaitables with Await.
  EmbeddedHost& host();
  Engine& engine() { return host().engine(); }
  // Runs an awaitable on the engine's loop until it completes (see "Results").
  template <class T>
  Result<T> Await(boost::asio::awaitable<Result<T>> operation);

 private:
  // Boots a life over the journal and recovers it; returns how many runs it resumed.
  Result<int> Boot();
  // Runs the loop until `done()`, auto-skipping; an error says why it stopped first.
  Result<void> Drive(const std::function<bool()>& done);
  template <class T>
  static boost::asio::awaitable<void> Capture(boost::asio::awaitable<Result<T>> operation,
                                              std::shared_ptr<std::optional<Result<T>>> out) {
    out->emplace(co_await std::move(operation));
  }

  TestEnvOptions options_;
  TempJournal journal_;
  ManualClock clock_;
  ToolRegistry tools_;
  WorkflowRegistry workflows_;
  std::unique_ptr<EmbeddedHost> host_;  // the current life; null before the first call
  bool crash_requested_ = false;
};

template <class T>
Result<T> TestEnv::Await(boost::asio::awaitable<Result<T>> operation) {
  EmbeddedHost& life = host();
  auto out = std::make_shared<std::optional<Result<T>>>();
  auto thrown = std::make_shared<std::exception_ptr>();
  boost::asio::co_spawn(life.io(), Capture(std::move(operation), out),
                        [thrown](std::exception_ptr e) { *thrown = e; });
  Result<void> driven = Drive([&] { return out->has_value() || *thrown; });
  if (*thrown) std::rethrow_exception(*thrown);
  if (out->has_value()) return std::move(**out);
  return driven.error();
}

}  // namespace reckon::testkit
