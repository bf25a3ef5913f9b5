// Tool heartbeats in embedded mode (LocalWorker, local_worker_attempt.cc): a tool that stops
// heartbeating is lost by its contract's heartbeat_timeout, its last details are journaled
// with the unknown outcome, and the next attempt receives them, also after a restart.
#include <gtest/gtest.h>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include "reckon/host/testing/engine_harness.h"
#include "reckon/testkit/gtest.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/test_workflows.h"

namespace reckon {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;
using namespace reckon::testing;
using namespace reckon::storage;

constexpr char kRun[] = "wf-beat";

// Attempt 1 heartbeats {"page": 7} and hangs silently; later attempts complete with the
// details they were given. `seen` records each attempt's LastHeartbeatDetails.
asio::awaitable<AttemptOutcome> Resume(std::vector<std::string>* seen, ToolCallContext context) {
  const json::value details = context.LastHeartbeatDetails();
  seen->push_back(json::serialize(details));
  if (details.is_null()) {
    context.Heartbeat(json::object{{"page", 7}});
    asio::steady_timer forever(co_await asio::this_coro::executor, 1h);
    co_await forever.async_wait(asio::use_awaitable);
  }
  co_return ToolSucceeded(json::object{{"resumed_from", details}});
}

Tool ResumingTool(std::vector<std::string>* seen,
                  std::chrono::milliseconds backoff = std::chrono::milliseconds(5)) {
  Tool tool;
  tool.contract = FastContract("resume", SideEffect::kReadOnly);
  tool.contract.attempt_timeout = 10s;
  tool.contract.retry.backoff = {backoff, 1.0, backoff};
  tool.contract.heartbeat_timeout = 100ms;
  tool.execute = [seen](json::value, ToolCallContext context) {
    return Resume(seen, std::move(context));
  };
  return tool;
}

TEST(EngineHeartbeatTest, ASilentToolIsLostAndTheRetryGetsItsDetails) {
  std::vector<std::string> seen;
  EngineHarness h;
  RECKON_ASSERT_OK(h.tools().Register(ResumingTool(&seen)));
  h.Boot();
  RECKON_ASSERT_OK(h.Start(kRun, kCallOnce, CallOnceInput("resume", FastInput("acct-1", 5))));
  ASSERT_TRUE(h.RunUntilSettled(kRun, 30s));
  EXPECT_EQ(h.Describe(kRun)->status, RunStatus::kCompleted);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], "null");
  EXPECT_EQ(seen[1], R"({"page":7})");
  h.Shutdown();
  bool found = false;
  for (const Event& e : h.Events(kRun)) {
    if (const auto* unknown = std::get_if<OutcomeUnknown>(&e.body)) {
      EXPECT_EQ(unknown->reason, "heartbeat_timeout");
      EXPECT_EQ(unknown->heartbeat_details_json, R"({"page":7})");
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(EngineHeartbeatTest, DetailsComeFromTheJournalAfterARestart) {
  std::vector<std::string> seen;
  EngineHarness h;
  // The retry waits 2 s: the process is stopped between the journaled details and attempt 2.
  RECKON_ASSERT_OK(h.tools().Register(ResumingTool(&seen, 2s)));
  h.Boot();
  RECKON_ASSERT_OK(h.Start(kRun, kCallOnce, CallOnceInput("resume", FastInput("acct-1", 5))));
  // RunUntil looks after each committed batch: the unknown outcome and its details are durable.
  ASSERT_TRUE(h.RunUntil([&] {
    auto op = h.Operation(kRun, "resume#1");
    return op && op->state == OperationState::kRetryScheduled;
  }, 30s));
  ASSERT_EQ(seen.size(), 1u);
  h.Restart();
  RECKON_ASSERT_OK(h.Recover());
  ASSERT_TRUE(h.RunUntilSettled(kRun, 30s));
  EXPECT_EQ(h.Describe(kRun)->status, RunStatus::kCompleted);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1], R"({"page":7})") << "attempt 2 ran in the new life, from the journal";
}

}  // namespace
}  // namespace reckon
