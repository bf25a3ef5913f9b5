// Retention in the engine (issue 15, section 8): a finished run is let go of (the engine keeps
// no memory per finished run), and what callers asked of it still works from the journal:
// Describe, UntilSettled, an idempotent Start, a refused signal. A run past the hard history
// limit fails with history_too_large, durably, and a restart does not resume it.
#include <gtest/gtest.h>

#include "reckon/host/testing/engine_harness.h"
#include "reckon/testkit/gtest.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/journal_view.h"
#include "reckon/host/testing/test_workflows.h"

namespace reckon {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using namespace reckon::testing;
using namespace reckon::storage;

constexpr char kEchoSignals[] = "echo_signals";

// Waits for "step" signals forever: each one adds a wait marker and a SignalReceived.
Task<WorkflowOutcome> EchoSignals(WorkflowContext& ctx, json::value) {
  for (;;) {
    auto signal = ctx.WaitSignal("step");
    co_await signal;
  }
}

class RetentionTest : public ::testing::Test {
 protected:
  explicit RetentionTest(EngineOptions options = {}) : h_(std::move(options)) {}

  void SetUp() override {
    RECKON_ASSERT_OK(h_.tools().Register(
        testkit::ProviderTool(FastContract("charge", SideEffect::kIdempotentWrite), provider_)));
    RECKON_ASSERT_OK(h_.workflows().Register(kEchoSignals, EchoSignals));
    h_.Boot();
  }

  testkit::FakeProvider provider_{/*dedup=*/false};
  EngineHarness h_;
};

TEST_F(RetentionTest, FinishedRunsAreLetGoAndAnsweredFromTheJournal) {
  constexpr int kRuns = 20;
  for (int i = 0; i < kRuns; ++i) {
    RECKON_ASSERT_OK(h_.Start("r-" + std::to_string(i), kCallOnce,
                              CallOnceInput("charge", FastInput("acct", 100 + i))));
  }
  ASSERT_TRUE(h_.RunUntil([&] { return h_.engine().BusyRuns() == 0; }));
  EXPECT_TRUE(h_.engine().Runs().empty()) << "no memory is kept per finished run";

  for (int i = 0; i < kRuns; ++i) {
    const std::string id = "r-" + std::to_string(i);
    auto described = h_.engine().Describe(id);
    ASSERT_TRUE(described) << id;
    EXPECT_EQ(described->status, RunStatus::kCompleted);
    EXPECT_NE(described->result_json.find("ref"), std::string::npos) << described->result_json;
    ASSERT_EQ(described->operations.size(), 1u);
    EXPECT_EQ(described->committed_operations, 1);
  }
  const std::string first = "r-0";
  auto settled = h_.Await(h_.engine().UntilSettled(first));
  ASSERT_TRUE(settled && *settled);
  EXPECT_EQ(settled->value().status, RunStatus::kCompleted);

  // Start stays idempotent: the same start returns the finished run, another input is refused.
  const RunRef ref = h_.engine().Describe(first)->ref;
  auto again = h_.Start(first, kCallOnce, CallOnceInput("charge", FastInput("acct", 100)));
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(again.value(), ref);
  auto other = h_.Start(first, kCallOnce, CallOnceInput("charge", FastInput("acct", 999)));
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().code(), Errc::kAlreadyExists);
  EXPECT_TRUE(h_.engine().Runs().empty()) << "a repeated start does not bring a run back";

  // A finished run takes no signal, and says why.
  auto signalled = h_.Await(h_.engine().Signal(first, "go", "{}"));
  ASSERT_TRUE(signalled);
  ASSERT_FALSE(*signalled);
  EXPECT_EQ(signalled->error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(signalled->error().message().find("completed"), std::string::npos)
      << signalled->error().message();
  EXPECT_FALSE(h_.engine().Describe("never-started"));
}

TEST_F(RetentionTest, ACancelledRunWithATimerIsLetGoAndTheTimerNeverActs) {
  RECKON_ASSERT_OK(h_.Start("sleeper", kSleepThenCall,
                            SleepThenCallInput(300ms, "charge", FastInput("acct", 1))));
  ASSERT_EQ(h_.engine().Runs().size(), 1u);
  auto cancelled = h_.Await(h_.engine().Cancel("sleeper", "no longer needed"));
  ASSERT_TRUE(cancelled && *cancelled);
  ASSERT_TRUE(h_.RunFor(500ms));  // past the timer's fire time
  EXPECT_TRUE(h_.engine().Runs().empty());
  EXPECT_EQ(h_.engine().Describe("sleeper")->status, RunStatus::kCancelled);
  EXPECT_TRUE(provider_.calls().empty());
  h_.Shutdown();
  const auto events = h_.Events("sleeper");
  EXPECT_TRUE(BodiesOf<TimerFired>(events).empty()) << EventNames(events);
}

TEST_F(RetentionTest, ARunWaitingOnASignalIsKept) {
  RECKON_ASSERT_OK(h_.Start("waiter", kEchoSignals, json::object{}));
  ASSERT_TRUE(h_.RunUntil([&] { return h_.engine().BusyRuns() == 0; }));
  ASSERT_EQ(h_.engine().Runs().size(), 1u);
  EXPECT_EQ(h_.engine().Describe("waiter")->status, RunStatus::kRunning);
}

EngineOptions SmallHistory() {
  EngineOptions options;
  options.history.warn_events = 10;
  options.history.max_events = 20;
  return options;
}

class HistoryLimitTest : public RetentionTest {
 protected:
  HistoryLimitTest() : RetentionTest(SmallHistory()) {}
};

TEST_F(HistoryLimitTest, ARunPastTheHardLimitFailsWithHistoryTooLarge) {
  RECKON_ASSERT_OK(h_.Start("loop", kEchoSignals, json::object{}));
  int accepted = 0;
  for (int i = 0; i < 40; ++i) {
    auto signalled = h_.Await(h_.engine().Signal("loop", "step", "{}"));
    ASSERT_TRUE(signalled);
    if (!*signalled) {
      EXPECT_EQ(signalled->error().code(), Errc::kFailedPrecondition)
          << signalled->error().ToString();
      break;
    }
    ++accepted;
  }
  EXPECT_GT(accepted, 3);
  EXPECT_LT(accepted, 20) << "the run stops at the limit, not later";
  auto described = h_.engine().Describe("loop");
  ASSERT_TRUE(described);
  EXPECT_EQ(described->status, RunStatus::kFailed);
  EXPECT_TRUE(h_.engine().Runs().empty());

  h_.Shutdown();
  const auto events = h_.Events("loop");
  const auto failed = BodiesOf<WorkflowFailed>(events);
  ASSERT_EQ(failed.size(), 1u) << EventNames(events);
  EXPECT_EQ(failed[0].code, kHistoryTooLarge);
  EXPECT_NE(failed[0].message.find("ContinueAsNew"), std::string::npos) << failed[0].message;
  // It crossed the limit by one batch at most: the last signal's events and the failure.
  EXPECT_LE(static_cast<std::int64_t>(events.size()), 20 + 3);
  h_.Boot();
  auto recovered = h_.Recover();
  ASSERT_TRUE(recovered);
  EXPECT_EQ(recovered.value(), 0) << "a failed run is not resumed";
}

}  // namespace
}  // namespace reckon
