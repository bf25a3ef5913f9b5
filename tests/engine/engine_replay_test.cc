// Replay and restart: an engine killed mid-run is replaced by a new one on the same journal;
// Recover() replays every run's code without re-executing what the journal holds, turns the
// attempt that was in flight into an unknown outcome that follows its contract, and hands the
// code the same now()/random() values. Code that no longer matches its history stops the run.
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

constexpr char kRun[] = "checkout-1";

// What each execution of the workflow body drew from now() and random(), across lives.
struct Draws {
  std::vector<std::pair<std::int64_t, std::uint64_t>> values;
};

// reserve (idempotent) -> charge (non-repeatable) -> notify (idempotent), after drawing the
// time and a random number.
Task<WorkflowOutcome> Checkout(WorkflowContext& ctx, json::value, Draws* draws) {
  const std::int64_t now = ctx.NowMicros();
  const std::uint64_t random = ctx.Random();
  draws->values.emplace_back(now, random);
  auto reserve = ctx.Call("reserve", FastInput("acct-1", 4200));
  CallResult reserved = co_await reserve;
  if (!reserved) co_return reserved.error();
  auto charge = ctx.Call("charge", FastInput("acct-1", 4200));
  CallResult charged = co_await charge;
  if (!charged) co_return charged.error();
  auto notify = ctx.Call("notify", FastInput("acct-1", 1));
  CallResult notified = co_await notify;
  if (!notified) co_return notified.error();
  co_return json::object{{"now", now},
                         {"random", std::to_string(random)},
                         {"charge", charged.value().provider_ref}};
}

class RestartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto [name, side_effect] : {std::pair{"reserve", SideEffect::kIdempotentWrite},
                                     std::pair{"charge", SideEffect::kNonRepeatableWrite},
                                     std::pair{"notify", SideEffect::kIdempotentWrite}}) {
      auto tool = testkit::ProviderTool(FastContract(name, side_effect), provider_);
      RECKON_ASSERT_OK(h_.tools().Register(std::move(tool)));
    }
    Draws* draws = &draws_;
    RECKON_ASSERT_OK(h_.workflows().Register(
        "checkout", [draws](WorkflowContext& ctx, json::value input) {
          return Checkout(ctx, std::move(input), draws);
        }));
  }

  // Life 1: runs until `tool`'s first attempt arrives at the provider, which then behaves as
  // `behaviour` while the process dies. Life 2: a new engine recovers and finishes the run.
  void CrashDuringFirstAttemptOf(const std::string& tool, testkit::Behaviour behaviour) {
    provider_.Script(tool, {testkit::Step{behaviour}});
    provider_.OnCall([this, tool](const testkit::CallRecord& call) {
      if (call.tool == tool && call.attempt == 1) h_.Crash();
    });
    h_.Boot();
    RECKON_ASSERT_OK(h_.Start(kRun, "checkout", json::object{}));
    ASSERT_TRUE(h_.RunUntil([this] { return h_.crashed(); }));
    provider_.OnCall(nullptr);

    h_.Restart();
    auto recovered = h_.Recover();
    RECKON_ASSERT_OK(recovered);
    EXPECT_EQ(recovered.value(), 1);
    ASSERT_TRUE(h_.RunUntilSettled(kRun));
    const RunSummary run = *h_.Describe(kRun);
    EXPECT_EQ(run.status, RunStatus::kCompleted) << run.stuck_reason;
    result_ = json::parse(run.result_json).as_object();
    h_.Shutdown();
    events_ = h_.Events(kRun);
  }

  testkit::FakeProvider provider_{/*dedup=*/false};
  EngineHarness h_;
  Draws draws_;
  json::object result_;
  std::vector<Event> events_;
};

TEST_F(RestartTest, CommittedCallsAreNotReexecutedAndTheInFlightOneIsReconciled) {
  // charge commits at the provider, and the process dies before the reply.
  CrashDuringFirstAttemptOf("charge", testkit::Behaviour::kCommitThenHang);
  EXPECT_EQ(provider_.calls_to("reserve").size(), 1u);  // replayed from the journal
  EXPECT_EQ(provider_.calls_to("charge").size(), 1u);   // reconciled, never repeated
  EXPECT_EQ(provider_.calls_to("notify").size(), 1u);
  EXPECT_EQ(provider_.lookups("charge"), 1);

  const std::string charge = OperationIdOfStep(events_, "charge#4");
  ASSERT_FALSE(charge.empty());
  EXPECT_EQ(provider_.effects(charge), 1);
  EXPECT_EQ(EventNames(events_, charge),
            "OperationPrepared AttemptStarted OutcomeUnknown ReconciliationStarted "
            "ReconciliationResult OperationCommitted");
  const auto unknown = FirstOf<OutcomeUnknown>(events_, charge);
  EXPECT_EQ(std::get<OutcomeUnknown>(unknown->body).reason, "engine_restart");
  const std::int64_t deadline =
      std::get<AttemptStarted>(FirstOf<AttemptStarted>(events_, charge)->body).deadline_us;
  const auto lookup = FirstOf<ReconciliationStarted>(events_, charge);
  EXPECT_GE(lookup->recorded_at_us, deadline + std::chrono::microseconds(kGrace).count());
  EXPECT_EQ(result_.at("charge").as_string(), provider_.ref_of(charge));
}

TEST_F(RestartTest, AnInFlightCallThatNeverLandedIsReconciledNotFoundAndRetriedOnce) {
  CrashDuringFirstAttemptOf("charge", testkit::Behaviour::kHang);
  const std::string charge = OperationIdOfStep(events_, "charge#4");
  EXPECT_EQ(EventNames(events_, charge),
            "OperationPrepared AttemptStarted OutcomeUnknown ReconciliationStarted "
            "ReconciliationResult RetryScheduled AttemptStarted OperationCommitted");
  const auto calls = provider_.calls_to("charge");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].key, charge);
  EXPECT_EQ(calls[1].key, charge);
  EXPECT_EQ(provider_.effects(charge), 1);
  EXPECT_EQ(provider_.calls_to("reserve").size(), 1u);
}

TEST_F(RestartTest, AnInFlightIdempotentCallIsRetriedWithTheSameId) {
  CrashDuringFirstAttemptOf("reserve", testkit::Behaviour::kCommitThenHang);
  const std::string reserve = OperationIdOfStep(events_, "reserve#3");
  EXPECT_EQ(EventNames(events_, reserve),
            "OperationPrepared AttemptStarted OutcomeUnknown RetryScheduled AttemptStarted "
            "OperationCommitted");
  const auto calls = provider_.calls_to("reserve");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].key, reserve);
  EXPECT_EQ(provider_.lookups("reserve"), 0);
}

TEST_F(RestartTest, NowAndRandomReturnTheRecordedValuesAfterReplay) {
  CrashDuringFirstAttemptOf("charge", testkit::Behaviour::kCommitThenHang);
  // The body ran once per life: the replay drew exactly what the first life drew.
  ASSERT_EQ(draws_.values.size(), 2u);
  EXPECT_EQ(draws_.values[0], draws_.values[1]);
  EXPECT_EQ(result_.at("now").as_int64(), draws_.values[0].first);
  EXPECT_EQ(result_.at("random").as_string(), std::to_string(draws_.values[0].second));
  // Recorded once, in the first life, and never again.
  const auto markers = BodiesOf<MarkerRecorded>(events_);
  ASSERT_EQ(markers.size(), 2u);
  EXPECT_EQ(markers[0].kind, "now");
  EXPECT_EQ(markers[0].value_json, std::to_string(draws_.values[0].first));
  EXPECT_EQ(markers[1].kind, "random");
  EXPECT_EQ(markers[1].value_json, std::to_string(draws_.values[0].second));
}

// --- nondeterminism ---------------------------------------------------------------------------

constexpr char kOrder[] = "order-1";

// Calls `tool` for `amount` at step "hold", then waits for the "go" signal.
Task<WorkflowOutcome> CallAtHold(WorkflowContext& ctx, std::string tool, std::int64_t amount) {
  auto hold = ctx.Call(std::move(tool), FastInput("acct-1", amount), CallOptions{"hold"});
  CallResult held = co_await hold;
  if (!held) co_return held.error();
  auto go = ctx.WaitSignal("go");
  std::string payload = co_await go;
  co_return json::object{{"go", payload}};
}

// An incompatible next version: the same step "hold", then a new step "extra" before the wait.
Task<WorkflowOutcome> HoldThenCharge(WorkflowContext& ctx, json::value) {
  auto hold = ctx.Call("reserve", FastInput("acct-1", 100), CallOptions{"hold"});
  CallResult held = co_await hold;
  if (!held) co_return held.error();
  auto extra = ctx.Call("charge", FastInput("acct-1", 300), CallOptions{"extra"});
  CallResult charged = co_await extra;
  if (!charged) co_return charged.error();
  auto go = ctx.WaitSignal("go");
  std::string payload = co_await go;
  co_return json::object{{"go", payload}};
}

// A compatible next version: the same steps, then a new step "extra" after the wait.
Task<WorkflowOutcome> HoldWaitThenCharge(WorkflowContext& ctx, json::value) {
  auto hold = ctx.Call("reserve", FastInput("acct-1", 100), CallOptions{"hold"});
  CallResult held = co_await hold;
  if (!held) co_return held.error();
  auto go = ctx.WaitSignal("go");
  std::string payload = co_await go;
  auto extra = ctx.Call("charge", FastInput("acct-1", 300), CallOptions{"extra"});
  CallResult charged = co_await extra;
  if (!charged) co_return charged.error();
  co_return json::object{{"go", payload}};
}

WorkflowFunction Version(std::string tool, std::int64_t amount) {
  return [tool, amount](WorkflowContext& ctx, json::value) {
    return CallAtHold(ctx, tool, amount);
  };
}

class NondeterminismTest : public RestartTest {
 protected:
  // Life 1 runs `v1` until step "hold" is committed (`crash_in_flight`: until its attempt is
  // in flight, when the process dies). Life 2 recovers the run with `v2`.
  void RecoverWith(WorkflowFunction v1, WorkflowFunction v2, bool crash_in_flight = false) {
    RECKON_ASSERT_OK(h_.workflows().Register("order", std::move(v1)));
    if (crash_in_flight) {
      provider_.Script("charge", {testkit::Step{testkit::Behaviour::kHang}});
      provider_.OnCall([this](const testkit::CallRecord&) { h_.Crash(); });
    }
    h_.Boot();
    RECKON_ASSERT_OK(h_.Start(kOrder, "order", json::object{}));
    if (crash_in_flight) {
      ASSERT_TRUE(h_.RunUntil([this] { return h_.crashed(); }));
      provider_.OnCall(nullptr);
    } else {
      ASSERT_TRUE(h_.RunUntilState(kOrder, "hold", OperationState::kCommitted));
    }
    h_.Shutdown();
    journaled_ = h_.Events(kOrder).size();
    calls_ = provider_.calls().size();

    RECKON_ASSERT_OK(h_.ReplaceWorkflows().Register("order", std::move(v2)));
    h_.Boot();
    RECKON_ASSERT_OK(h_.Recover());
  }
  // The run stops, names the step, and nothing new is executed or journaled.
  void ExpectStoppedAtHold() {
    ASSERT_TRUE(
        h_.RunUntil([this] { return !h_.Describe(kOrder)->stuck_reason.empty(); }, 1s));
    const std::string reason = h_.Describe(kOrder)->stuck_reason;
    EXPECT_NE(reason.find("nondeterminism"), std::string::npos) << reason;
    EXPECT_NE(reason.find("'hold'"), std::string::npos) << reason;
    EXPECT_EQ(h_.engine().BusyRuns(), 0);
    auto signalled = h_.Await(h_.engine().Signal(kOrder, "go", "\"yes\""));
    ASSERT_TRUE(signalled);
    EXPECT_FALSE(*signalled);  // a stopped run takes nothing more
    EXPECT_EQ(provider_.calls().size(), calls_);
    EXPECT_EQ(provider_.lookups("charge"), 0);
    h_.Shutdown();
    EXPECT_EQ(h_.Events(kOrder).size(), journaled_);
  }
  std::size_t journaled_ = 0;
  std::size_t calls_ = 0;
};

TEST_F(NondeterminismTest, UnchangedCodeRecoversAndContinues) {
  RecoverWith(Version("reserve", 100), Version("reserve", 100));
  auto signalled = h_.Await(h_.engine().Signal(kOrder, "go", "\"yes\""));
  ASSERT_TRUE(signalled);
  RECKON_ASSERT_OK(*signalled);
  ASSERT_TRUE(h_.RunUntilSettled(kOrder));
  EXPECT_EQ(h_.Describe(kOrder)->status, RunStatus::kCompleted);
  EXPECT_EQ(provider_.calls_to("reserve").size(), 1u);
}

// A step that the new code issues past the end of the history is a new call: its first
// attempt runs normally, and is not taken for one that was in flight before the restart.
TEST_F(NondeterminismTest, AStepAddedAfterTheHistoryRunsAsANewCall) {
  RecoverWith(Version("reserve", 100), HoldWaitThenCharge);
  auto signalled = h_.Await(h_.engine().Signal(kOrder, "go", "\"yes\""));
  ASSERT_TRUE(signalled && *signalled);
  ASSERT_TRUE(h_.RunUntilState(kOrder, "extra", OperationState::kCommitted));
  h_.Shutdown();
  const auto events = h_.Events(kOrder);
  const std::string extra = OperationIdOfStep(events, "extra");
  EXPECT_EQ(EventNames(events, extra), "OperationPrepared AttemptStarted OperationCommitted");
  EXPECT_EQ(BodiesOf<OperationCommitted>(events, extra).at(0).source, CommitSource::kAttempt);
  EXPECT_EQ(provider_.calls_to("charge").size(), 1u);
  EXPECT_EQ(provider_.calls_to("reserve").size(), 1u);
}

// A step inserted before one the history records (here the wait for "go") changes the path
// the run took: without ctx.Patched it stops the run (engine_versioning_test.cc).
TEST_F(NondeterminismTest, AStepInsertedBeforeARecordedWaitStopsTheRun) {
  RecoverWith(Version("reserve", 100), HoldThenCharge);
  ASSERT_TRUE(
      h_.RunUntil([this] { return !h_.Describe(kOrder)->stuck_reason.empty(); }, 1s));
  const std::string reason = h_.Describe(kOrder)->stuck_reason;
  EXPECT_NE(reason.find("'signal:go#1'"), std::string::npos) << reason;
  EXPECT_EQ(provider_.calls_to("charge").size(), 0u);
}

TEST_F(NondeterminismTest, ADifferentToolAtASettledStepStopsTheRun) {
  RecoverWith(Version("reserve", 100), Version("charge", 100));
  ExpectStoppedAtHold();
}

// Any command that does not match its history is a nondeterminism error, settled steps too
// (docs/ARCHITECTURE.md, decision 8).
TEST_F(NondeterminismTest, ADifferentInputAtASettledStepStopsTheRun) {
  RecoverWith(Version("reserve", 100), Version("reserve", 999));
  ExpectStoppedAtHold();
}

TEST_F(NondeterminismTest, ADifferentInputAtAnInFlightStepStopsTheRunBeforeAnyLookup) {
  RecoverWith(Version("charge", 100), Version("charge", 999), /*crash_in_flight=*/true);
  ExpectStoppedAtHold();
}

}  // namespace
}  // namespace reckon
