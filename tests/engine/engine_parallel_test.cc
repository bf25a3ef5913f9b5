// Parallel calls: calls are issued when Call() is invoked, not when awaited, so a workflow
// that issues two calls before awaiting either has both attempts in flight at once.
#include <gtest/gtest.h>

#include <boost/json/object.hpp>

#include "reckon/host/testing/engine_harness.h"
#include "reckon/testkit/gtest.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/journal_view.h"

namespace reckon {
namespace {

using namespace reckon::testing;
using namespace reckon::storage;
namespace json = boost::json;

constexpr char kRun[] = "fan-out-1";

Task<WorkflowOutcome> BothThenAwait(WorkflowContext& ctx, json::value) {
  auto a = ctx.Call("reserve", FastInput("acct-a", 100));
  auto b = ctx.Call("reserve", FastInput("acct-b", 200));
  CallResult first = co_await a;
  CallResult second = co_await b;
  if (!first) co_return first.error();
  if (!second) co_return second.error();
  co_return json::object{{"a", first.value().provider_ref}, {"b", second.value().provider_ref}};
}

Task<WorkflowOutcome> OneAfterTheOther(WorkflowContext& ctx, json::value) {
  auto a = ctx.Call("reserve", FastInput("acct-a", 100));
  CallResult first = co_await a;
  if (!first) co_return first.error();
  auto b = ctx.Call("reserve", FastInput("acct-b", 200));
  CallResult second = co_await b;
  if (!second) co_return second.error();
  co_return json::object{{"a", first.value().provider_ref}, {"b", second.value().provider_ref}};
}

class ParallelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RECKON_ASSERT_OK(h_.tools().Register(
        testkit::ProviderTool(FastContract("reserve", SideEffect::kIdempotentWrite), provider_)));
    RECKON_ASSERT_OK(h_.workflows().Register("both", BothThenAwait));
    RECKON_ASSERT_OK(h_.workflows().Register("sequential", OneAfterTheOther));
  }
  std::vector<Event> Run(const std::string& type) {
    h_.Boot();
    auto started = h_.Start(kRun, type, json::object{});
    EXPECT_TRUE(started) << started.error().ToString();
    EXPECT_TRUE(h_.RunUntilSettled(kRun));
    EXPECT_EQ(h_.Describe(kRun)->status, RunStatus::kCompleted);
    h_.Shutdown();
    return h_.Events(kRun);
  }
  testkit::FakeProvider provider_;
  EngineHarness h_;
};

TEST_F(ParallelTest, TwoCallsIssuedBeforeAwaitingRunConcurrently) {
  // Each call holds its reply until both are in flight: run one after the other, the first
  // would wait until its deadline and be retried.
  testkit::Step together{testkit::Behaviour::kCommit};
  together.wait_for_in_flight = 2;
  provider_.Script("reserve", {together, together});
  const auto events = Run("both");
  EXPECT_EQ(provider_.max_in_flight(), 2);
  const auto calls = provider_.calls_to("reserve");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_NE(calls[0].key, calls[1].key);  // two steps, two operations
  EXPECT_EQ(calls[0].step_id, "reserve#1");
  EXPECT_EQ(calls[1].step_id, "reserve#2");
  // Both attempts were started by one decision, in one commit.
  const auto started = EventsOf<AttemptStarted>(events);
  ASSERT_EQ(started.size(), 2u);
  EXPECT_EQ(started[0].recorded_at_us, started[1].recorded_at_us);
  EXPECT_TRUE(BodiesOf<OutcomeUnknown>(events).empty());
}

TEST_F(ParallelTest, ACallIssuedAfterAwaitingTheFirstStartsAfterIt) {
  const auto events = Run("sequential");
  EXPECT_EQ(provider_.max_in_flight(), 1);
  const auto started = EventsOf<AttemptStarted>(events);
  ASSERT_EQ(started.size(), 2u);
  const auto committed = EventsOf<OperationCommitted>(events);
  ASSERT_EQ(committed.size(), 2u);
  EXPECT_LT(committed[0].seq, started[1].seq);
}

}  // namespace
}  // namespace reckon
