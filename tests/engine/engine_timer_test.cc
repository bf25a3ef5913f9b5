// Durable timers (`ctx.Sleep`) across a restart, on a real journal: the process dies while a
// workflow sleeps; the next life re-arms the timer from the journal, and the workflow goes on
// once it fires, exactly once. A timer that came due while no process ran fires at once.
#include <gtest/gtest.h>

#include "reckon/host/testing/engine_harness.h"
#include "reckon/testkit/gtest.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/journal_view.h"
#include "reckon/host/testing/test_workflows.h"

namespace reckon {
namespace {

using namespace std::chrono_literals;
using namespace reckon::testing;
using namespace reckon::storage;

constexpr char kRun[] = "nap-1";

// The system clock, `offset` later: a process that starts long after the last one died.
class LaterClock final : public Clock {
 public:
  explicit LaterClock(std::chrono::microseconds offset) : offset_(offset) {}
  std::int64_t NowMicros() override { return system_.NowMicros() + offset_.count(); }

 private:
  SystemClock system_;
  std::chrono::microseconds offset_;
};

class DurableTimerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RECKON_ASSERT_OK(h_.tools().Register(
        testkit::ProviderTool(FastContract("charge", SideEffect::kIdempotentWrite), provider_)));
  }

  // Life 1 starts the sleeper and dies as soon as the start (and the timer) is durable.
  void StartAndDie(std::chrono::milliseconds sleep) {
    h_.Boot();
    RECKON_ASSERT_OK(h_.Start(kRun, kSleepThenCall,
                              SleepThenCallInput(sleep, "charge", FastInput("acct-1", 100))));
    h_.Shutdown();
    const auto events = h_.Events(kRun);
    ASSERT_EQ(BodiesOf<TimerStarted>(events).size(), 1u) << EventNames(events);
    ASSERT_TRUE(BodiesOf<TimerFired>(events).empty()) << "the process died before it fired";
    ASSERT_TRUE(provider_.calls().empty());
  }

  // The workflow completed after exactly one firing, and called its tool exactly once.
  void ExpectFiredOnceThenContinued() {
    ASSERT_TRUE(h_.RunUntilSettled(kRun));
    EXPECT_EQ(h_.Describe(kRun)->status, RunStatus::kCompleted) << h_.Describe(kRun)->result_json;
    h_.Shutdown();
    const auto events = h_.Events(kRun);
    const auto started = BodiesOf<TimerStarted>(events);
    const auto fired = EventsOf<TimerFired>(events);
    ASSERT_EQ(started.size(), 1u) << EventNames(events);
    ASSERT_EQ(fired.size(), 1u) << EventNames(events);
    EXPECT_EQ(std::get<TimerFired>(fired[0].body).timer_id, started[0].timer_id);
    EXPECT_GE(fired[0].recorded_at_us, started[0].fire_at_us) << "it fired before its time";
    EXPECT_EQ(provider_.calls_to("charge").size(), 1u);
    // Yet another life finds nothing to resume and fires nothing again.
    h_.Boot();
    auto recovered = h_.Recover();
    ASSERT_TRUE(recovered) << recovered.error().ToString();
    EXPECT_EQ(recovered.value(), 0);
    h_.Shutdown();
    EXPECT_EQ(h_.Events(kRun).size(), events.size());
  }

  testkit::FakeProvider provider_;
  LaterClock two_hours_later_{std::chrono::hours(2)};  // outlives every engine of h_
  EngineHarness h_;
};

TEST_F(DurableTimerTest, ARestartRearmsTheTimerFromTheJournal) {
  StartAndDie(300ms);
  h_.Boot();
  auto recovered = h_.Recover();
  ASSERT_TRUE(recovered) << recovered.error().ToString();
  EXPECT_EQ(recovered.value(), 1);
  ExpectFiredOnceThenContinued();
}

// The sleep is an hour long and the next life starts two hours later: if the timer were not
// fired at once, the workflow would wait another hour (and RunUntilSettled time out).
TEST_F(DurableTimerTest, ATimerDueWhileNoProcessRanFiresAtOnce) {
  StartAndDie(std::chrono::hours(1));
  h_.set_clock(&two_hours_later_);
  h_.Boot();
  RECKON_ASSERT_OK(h_.Recover());
  ExpectFiredOnceThenContinued();
}

}  // namespace
}  // namespace reckon
