// Versioning: changing a workflow's code while runs are in flight. Runs start on v1 and the
// process dies; v2 takes over the same journal. A change behind ctx.Patched lets old runs
// replay the old branch while new runs take the new one; the same change without the patch
// stops the old run with a nondeterminism error that names the run, the step, what the history
// says and what the code did, and points at ctx.Patched. DeprecatePatch retires the old branch.
// Replay checks timers and signal waits as well as calls.
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

constexpr char kOld[] = "order-old";
constexpr char kNew[] = "order-new";

// v1: reserve at step "hold", then wait for "go".
Task<WorkflowOutcome> V1(WorkflowContext& ctx, json::value) {
  auto hold = ctx.Call("reserve", FastInput("acct-1", 100), CallOptions{"hold"});
  CallResult held = co_await hold;
  if (!held) co_return held.error();
  auto go = ctx.WaitSignal("go");
  std::string payload = co_await go;
  co_return json::object{{"branch", "old"}};
}

// v2 patched: a charge at step "extra" between the two, for runs that reach it on v2.
Task<WorkflowOutcome> V2Patched(WorkflowContext& ctx, json::value) {
  auto hold = ctx.Call("reserve", FastInput("acct-1", 100), CallOptions{"hold"});
  CallResult held = co_await hold;
  if (!held) co_return held.error();
  std::string branch = "old";
  if (ctx.Patched("charge-before-go")) {
    branch = "new";
    auto extra = ctx.Call("charge", FastInput("acct-1", 300), CallOptions{"extra"});
    CallResult charged = co_await extra;
    if (!charged) co_return charged.error();
  }
  auto go = ctx.WaitSignal("go");
  std::string payload = co_await go;
  co_return json::object{{"branch", branch}};
}

// v2 without the patch: the same change, unguarded.
Task<WorkflowOutcome> V2Unpatched(WorkflowContext& ctx, json::value) {
  auto hold = ctx.Call("reserve", FastInput("acct-1", 100), CallOptions{"hold"});
  CallResult held = co_await hold;
  if (!held) co_return held.error();
  auto extra = ctx.Call("charge", FastInput("acct-1", 300), CallOptions{"extra"});
  CallResult charged = co_await extra;
  if (!charged) co_return charged.error();
  auto go = ctx.WaitSignal("go");
  std::string payload = co_await go;
  co_return json::object{{"branch", "new"}};
}

// v3: no old run is left, so only the new branch remains.
Task<WorkflowOutcome> V3Deprecated(WorkflowContext& ctx, json::value) {
  auto hold = ctx.Call("reserve", FastInput("acct-1", 100), CallOptions{"hold"});
  CallResult held = co_await hold;
  if (!held) co_return held.error();
  ctx.DeprecatePatch("charge-before-go");
  auto extra = ctx.Call("charge", FastInput("acct-1", 300), CallOptions{"extra"});
  CallResult charged = co_await extra;
  if (!charged) co_return charged.error();
  auto go = ctx.WaitSignal("go");
  std::string payload = co_await go;
  co_return json::object{{"branch", "new"}};
}

// A sleep between the call and the wait, and the same code without it.
Task<WorkflowOutcome> WithSleep(WorkflowContext& ctx, json::value) {
  auto hold = ctx.Call("reserve", FastInput("acct-1", 100), CallOptions{"hold"});
  CallResult held = co_await hold;
  if (!held) co_return held.error();
  co_await ctx.Sleep(1ms);
  auto go = ctx.WaitSignal("go");
  std::string payload = co_await go;
  co_return json::object{{"branch", "slept"}};
}

class VersioningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto [name, side_effect] : {std::pair{"reserve", SideEffect::kIdempotentWrite},
                                     std::pair{"charge", SideEffect::kNonRepeatableWrite}}) {
      RECKON_ASSERT_OK(h_.tools().Register(testkit::ProviderTool(FastContract(name, side_effect), provider_)));
    }
  }

  // Life 1 on `v1`: run kOld reaches its wait for "go". Life 2 on `v2`: recovered.
  void UpgradeWhileWaiting(WorkflowFunction v1, WorkflowFunction v2) {
    RECKON_ASSERT_OK(h_.workflows().Register("order", std::move(v1)));
    h_.Boot();
    RECKON_ASSERT_OK(h_.Start(kOld, "order", json::object{}));
    ASSERT_TRUE(UntilWaiting(kOld));
    h_.Shutdown();
    journaled_ = h_.Events(kOld).size();
    RECKON_ASSERT_OK(h_.ReplaceWorkflows().Register("order", std::move(v2)));
    h_.Boot();
    RECKON_ASSERT_OK(h_.Recover());
  }

  // Sends "go" and runs the workflow to its end; its result's "branch".
  std::string Finish(const std::string& id) {
    auto signalled = h_.Await(h_.engine().Signal(id, "go", "\"yes\""));
    EXPECT_TRUE(signalled && *signalled);
    EXPECT_TRUE(h_.RunUntil([&] { return IsTerminal(h_.Describe(id)->status); }));
    auto run = h_.Describe(id);
    if (!run || run->status != RunStatus::kCompleted) {
      ADD_FAILURE() << id << " did not complete: " << (run ? run->stuck_reason : "gone");
      return "";
    }
    return std::string(json::parse(run->result_json).at("branch").as_string());
  }

  // Until the run waits for a signal (or stopped, or ended).
  bool UntilWaiting(const std::string& id) {
    return h_.RunUntil([&] {
      auto run = h_.Describe(id);
      return run && (run->wait.kind == WaitKind::kSignal || !run->stuck_reason.empty() ||
                     IsTerminal(run->status));
    });
  }

  std::string StuckReason(const std::string& id) {
    EXPECT_TRUE(h_.RunUntil([&] { return !h_.Describe(id)->stuck_reason.empty(); }, 2s));
    return h_.Describe(id)->stuck_reason;
  }

  testkit::FakeProvider provider_;
  EngineHarness h_;
  std::size_t journaled_ = 0;
};

TEST_F(VersioningTest, OldRunsReplayTheOldBranchAndNewRunsTakeTheNewOne) {
  UpgradeWhileWaiting(V1, V2Patched);
  RECKON_ASSERT_OK(h_.Start(kNew, "order", json::object{}));
  ASSERT_TRUE(UntilWaiting(kNew));
  EXPECT_EQ(Finish(kOld), "old");
  EXPECT_EQ(Finish(kNew), "new");
  EXPECT_EQ(provider_.calls_to("charge").size(), 1u);  // the new run's only
  h_.Shutdown();
  // The new run journaled the patch marker; the old one did not.
  auto markers_of = [&](const std::string& id) {
    std::vector<std::string> kinds;
    for (const auto& m : BodiesOf<MarkerRecorded>(h_.Events(id))) kinds.push_back(m.step_id);
    return kinds;
  };
  EXPECT_EQ(markers_of(kNew), (std::vector<std::string>{"patch:charge-before-go", "signal:go#1"}));
  EXPECT_EQ(markers_of(kOld), (std::vector<std::string>{"signal:go#1"}));
}

TEST_F(VersioningTest, ARunThatKeptThePatchReplaysTheNewBranchAfterARestart) {
  RECKON_ASSERT_OK(h_.workflows().Register("order", V2Patched));
  h_.Boot();
  RECKON_ASSERT_OK(h_.Start(kNew, "order", json::object{}));
  ASSERT_TRUE(UntilWaiting(kNew));
  h_.Restart();
  RECKON_ASSERT_OK(h_.Recover());
  EXPECT_EQ(Finish(kNew), "new");
  EXPECT_EQ(provider_.calls_to("charge").size(), 1u);  // replayed, not called again
}

TEST_F(VersioningTest, TheSameChangeWithoutAPatchStopsTheOldRunWithAMessageThatSaysWhy) {
  UpgradeWhileWaiting(V1, V2Unpatched);
  const std::string reason = StuckReason(kOld);
  EXPECT_NE(reason.find("nondeterminism"), std::string::npos) << reason;
  EXPECT_NE(reason.find("run 'order-old'"), std::string::npos) << reason;  // the run
  EXPECT_NE(reason.find("'signal:go#1'"), std::string::npos) << reason;    // the step
  EXPECT_NE(reason.find("wait for signal \"go\""), std::string::npos) << reason;  // history
  EXPECT_NE(reason.find("blocked without issuing it"), std::string::npos) << reason;  // code
  EXPECT_NE(reason.find("ctx.Patched(\"<change-id>\")"), std::string::npos) << reason;
  EXPECT_TRUE(provider_.calls_to("charge").empty());  // nothing of the new code ran... but
  h_.Shutdown();
  EXPECT_EQ(h_.Events(kOld).size(), journaled_);  // ...and nothing was journaled
}

TEST_F(VersioningTest, DeprecatePatchAcceptsRunsWithTheMarkerAndRecordsNothingNew) {
  RECKON_ASSERT_OK(h_.workflows().Register("order", V2Patched));
  h_.Boot();
  RECKON_ASSERT_OK(h_.Start(kOld, "order", json::object{}));  // records the marker
  ASSERT_TRUE(UntilWaiting(kOld));
  h_.Shutdown();
  RECKON_ASSERT_OK(h_.ReplaceWorkflows().Register("order", V3Deprecated));
  h_.Boot();
  RECKON_ASSERT_OK(h_.Recover());
  RECKON_ASSERT_OK(h_.Start(kNew, "order", json::object{}));
  ASSERT_TRUE(UntilWaiting(kNew));
  EXPECT_EQ(Finish(kOld), "new");
  EXPECT_EQ(Finish(kNew), "new");
  EXPECT_EQ(provider_.calls_to("charge").size(), 2u);
  h_.Shutdown();
  EXPECT_TRUE(BodiesOf<MarkerRecorded>(h_.Events(kNew)).size() == 1u);  // signal:go#1 only
}

TEST_F(VersioningTest, ARemovedSleepIsANondeterminismErrorThatNamesTheStep) {
  UpgradeWhileWaiting(WithSleep, V1);
  const std::string reason = StuckReason(kOld);
  EXPECT_NE(reason.find("'sleep#2'"), std::string::npos) << reason;
  EXPECT_NE(reason.find("a timer (ctx.Sleep)"), std::string::npos) << reason;
}

TEST_F(VersioningTest, AnAddedSleepBeforeARecordedWaitIsANondeterminismError) {
  UpgradeWhileWaiting(V1, WithSleep);
  const std::string reason = StuckReason(kOld);
  EXPECT_NE(reason.find("'signal:go#1'"), std::string::npos) << reason;
}

}  // namespace
}  // namespace reckon
