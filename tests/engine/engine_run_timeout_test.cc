// Run timeouts in embedded mode (engine/run_timeout.h): a run waiting for a signal past its
// deadline fails with run_timeout, and the deadline still fires after a restart (re-armed from
// WorkflowStarted by recovery).
#include <gtest/gtest.h>

#include "reckon/engine/run_timeout.h"
#include "reckon/host/testing/engine_harness.h"
#include "reckon/testkit/gtest.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/test_workflows.h"

namespace reckon {
namespace {

using namespace std::chrono_literals;
using namespace reckon::testing;
using namespace reckon::storage;

Result<RunRef> StartWithTimeout(EngineHarness& h, const std::string& id,
                                std::chrono::milliseconds timeout) {
  StartOptions options;
  options.run_timeout = timeout;
  auto started = h.Await(h.engine().Start(
      id, kSignalThenCall, SignalThenCallInput("go", "tool", FastInput("acct-1", 5)),
      std::move(options)));
  if (!started) return Err(Errc::kDeadlineExceeded, "Start() did not complete");
  return std::move(*started);
}

std::string FailureCode(EngineHarness& h, const std::string& id) {
  for (const Event& e : h.Events(id)) {
    if (const auto* failed = std::get_if<WorkflowFailed>(&e.body)) return failed->code;
  }
  return "";
}

TEST(EngineRunTimeoutTest, ARunPastItsDeadlineFailsWithRunTimeout) {
  EngineHarness h;
  RECKON_ASSERT_OK(h.tools().Register(Tool{FastContract("tool", SideEffect::kReadOnly),
                                           [](boost::json::value, ToolCallContext)
                                               -> boost::asio::awaitable<AttemptOutcome> {
                                             co_return ToolSucceeded(nullptr);
                                           },
                                           {}}));
  h.Boot();
  RECKON_ASSERT_OK(StartWithTimeout(h, "wf-rt", 200ms));
  ASSERT_TRUE(h.RunUntil([&] {
    auto run = h.Describe("wf-rt");
    return run && run->status != RunStatus::kRunning;
  }, 30s));
  EXPECT_EQ(h.Describe("wf-rt")->status, RunStatus::kFailed);
  h.Shutdown();
  EXPECT_EQ(FailureCode(h, "wf-rt"), kRunTimeoutCode);
}

TEST(EngineRunTimeoutTest, TheDeadlineFiresAfterARestart) {
  EngineHarness h;
  RECKON_ASSERT_OK(h.tools().Register(Tool{FastContract("tool", SideEffect::kReadOnly),
                                           [](boost::json::value, ToolCallContext)
                                               -> boost::asio::awaitable<AttemptOutcome> {
                                             co_return ToolSucceeded(nullptr);
                                           },
                                           {}}));
  h.Boot();
  RECKON_ASSERT_OK(StartWithTimeout(h, "wf-rt", 500ms));
  h.Restart();  // the armed deadline dies with the process; the journal keeps it
  RECKON_ASSERT_OK(h.Recover());
  ASSERT_TRUE(h.RunUntil([&] {
    auto run = h.Describe("wf-rt");
    return run && run->status != RunStatus::kRunning;
  }, 30s));
  EXPECT_EQ(h.Describe("wf-rt")->status, RunStatus::kFailed);
  h.Shutdown();
  EXPECT_EQ(FailureCode(h, "wf-rt"), kRunTimeoutCode);
}

}  // namespace
}  // namespace reckon
