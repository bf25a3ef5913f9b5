// Waits that can give up: ctx.WaitSignal(name, timeout) and ctx.WhenAny over calls, timers and
// signals. Which came first is what the history says, so a replay after a crash takes the same
// branch; a wait that timed out no longer shows as a wait for its signal.
#include <gtest/gtest.h>

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>

#include "reckon/host/testing/engine_harness.h"
#include "reckon/testkit/gtest.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/journal_view.h"

namespace reckon {
namespace {

using namespace std::chrono_literals;
using namespace reckon::testing;
using namespace reckon::storage;
namespace json = boost::json;

// Waits for "approve" for the input's "timeout_ms", then reads the time once more (a step
// after the wait, so a replay must decide the wait the same way to match its history).
Task<WorkflowOutcome> ApproveOrGiveUp(WorkflowContext& ctx, json::value input) {
  const auto timeout = std::chrono::milliseconds(input.as_object().at("timeout_ms").as_int64());
  auto waited = ctx.WaitSignal("approve", timeout);
  std::optional<std::string> approval = co_await std::move(waited);
  ctx.NowMicros();
  if (!approval) co_return json::object{{"outcome", "gave_up"}};
  co_return json::object{{"outcome", "approved"}, {"payload", *approval}};
}

// A call raced against a timer: the call hangs, so the timer wins.
Task<WorkflowOutcome> CallOrTimer(WorkflowContext& ctx, json::value) {
  auto call = ctx.Call("lookup", FastInput("acct-1", 1));
  auto timer = ctx.Sleep(20ms);
  const std::size_t first = co_await ctx.WhenAny(call, timer);
  co_return json::object{{"first", first == 0 ? "call" : "timer"}};
}

class WaitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RECKON_ASSERT_OK(h_.tools().Register(
        testkit::ProviderTool(FastContract("lookup", SideEffect::kReadOnly), provider_)));
    RECKON_ASSERT_OK(h_.workflows().Register("approve", ApproveOrGiveUp));
    RECKON_ASSERT_OK(h_.workflows().Register("race", CallOrTimer));
  }
  bool UntilDone(const std::string& id) {
    return h_.RunUntil([&] {
      auto run = h_.Describe(id);
      return run && (IsTerminal(run->status) || !run->stuck_reason.empty());
    });
  }
  std::string Outcome(const std::string& id, const char* field = "outcome") {
    auto run = h_.Describe(id);
    if (!run || run->status != RunStatus::kCompleted) {
      ADD_FAILURE() << id << ": " << (run ? run->stuck_reason : "gone");
      return "";
    }
    return std::string(json::parse(run->result_json).at(field).as_string());
  }

  testkit::FakeProvider provider_;
  EngineHarness h_;
};

TEST_F(WaitTest, ATimedWaitGivesUpWhenNoSignalComesAndReplaysTheSame) {
  h_.Boot();
  RECKON_ASSERT_OK(h_.Start("w-1", "approve", json::object{{"timeout_ms", 20}}));
  ASSERT_TRUE(UntilDone("w-1"));
  EXPECT_EQ(Outcome("w-1"), "gave_up");
  h_.Shutdown();
  const auto markers = BodiesOf<MarkerRecorded>(h_.Events("w-1"));
  ASSERT_EQ(markers.size(), 3u);
  EXPECT_EQ(markers[0].kind, kWaitSignalMarker);
  EXPECT_EQ(markers[1].kind, kWaitSignalEndMarker);
  EXPECT_EQ(markers[1].step_id, "signal:approve#1:timeout");
}

TEST_F(WaitTest, ASignalBeforeTheTimeoutIsTheAnswer) {
  h_.Boot();
  RECKON_ASSERT_OK(h_.Start("w-2", "approve", json::object{{"timeout_ms", 3'600'000}}));
  ASSERT_TRUE(h_.RunUntil([&] { return h_.Describe("w-2")->wait.kind == WaitKind::kSignal; }));
  auto sent = h_.Await(h_.engine().Signal("w-2", "approve", "\"ok\""));
  ASSERT_TRUE(sent && *sent);
  ASSERT_TRUE(UntilDone("w-2"));
  EXPECT_EQ(Outcome("w-2"), "approved");
  EXPECT_EQ(Outcome("w-2", "payload"), "\"ok\"");
}

// After a restart the run waits again, for the rest of its timeout, and the history decides.
TEST_F(WaitTest, ARestartedWaitStillWaitsAndAReplayedTimeoutStaysATimeout) {
  h_.Boot();
  RECKON_ASSERT_OK(h_.Start("w-3", "approve", json::object{{"timeout_ms", 3'600'000}}));
  RECKON_ASSERT_OK(h_.Start("w-4", "approve", json::object{{"timeout_ms", 20}}));
  ASSERT_TRUE(h_.RunUntil([&] { return h_.Describe("w-3")->wait.kind == WaitKind::kSignal; }));
  ASSERT_TRUE(UntilDone("w-4"));
  h_.Restart();
  auto recovered = h_.Recover();
  ASSERT_TRUE(recovered) << recovered.error().ToString();
  ASSERT_TRUE(h_.RunUntil([&] { return h_.Describe("w-3")->wait.kind == WaitKind::kSignal; }));
  auto sent = h_.Await(h_.engine().Signal("w-3", "approve", "\"late\""));
  ASSERT_TRUE(sent && *sent);
  ASSERT_TRUE(UntilDone("w-3"));
  EXPECT_EQ(Outcome("w-3"), "approved");
  h_.Shutdown();
  // w-4 finished before the restart; its history replays to the same ending.
  EXPECT_EQ(BodiesOf<WorkflowCompleted>(h_.Events("w-4")).size(), 1u);
}

TEST_F(WaitTest, WhenAnyReturnsTheFirstToComplete) {
  provider_.Script("lookup", {testkit::Step{testkit::Behaviour::kHang}});
  h_.Boot();
  RECKON_ASSERT_OK(h_.Start("race-1", "race", json::object{}));
  ASSERT_TRUE(UntilDone("race-1"));
  EXPECT_EQ(Outcome("race-1", "first"), "timer");
}

}  // namespace
}  // namespace reckon
