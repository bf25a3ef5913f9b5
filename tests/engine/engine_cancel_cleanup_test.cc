// Cancellation reaches the workflow code (worker/workflow_cancelled.h, docs/ARCHITECTURE.md
// decision 47) on a real journal: the await the code is blocked in throws
// WorkflowCancelledError at the point of the history where the request was journaled; code
// that catches it cleans up with durable steps and ends the run cancelled (or completes); a
// crash during the clean-up neither loses it nor repeats its effect; a repeated cancel does
// nothing; the replayer accepts the history and names a change that drops the clean-up.
#include <gtest/gtest.h>

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>

#include <set>

#include "reckon/storage/history_file.h"
#include "reckon/worker/replayer.h"
#include "reckon/host/testing/engine_harness.h"
#include "reckon/testkit/gtest.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/journal_view.h"
#include "reckon/worker/workflow_cancelled.h"

namespace reckon {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using namespace reckon::testing;
using namespace reckon::storage;

constexpr char kReason[] = "customer changed their mind";

// Places a hold, then waits as input.wait says ("sleep", "signal", "timed" for a signal wait
// with a timeout, "any" for WhenAny over a signal and a timer, "approval" for a call that
// needs a person). Told of a cancel, it releases the hold (a durable call, its memo carrying
// the reason), then ends cancelled, or completes with {"released": ref} when input.complete.
// With input.cleanup false it lets the cancellation end the run (the code before clean-up was
// written).
Task<WorkflowOutcome> HoldRelease(WorkflowContext& ctx, json::value input) {
  const json::object& in = input.as_object();
  const std::string wait(in.at("wait").as_string());
  const bool cleanup = !in.contains("cleanup") || in.at("cleanup").as_bool();
  json::object hold_input{{"account", "acct-1"}, {"amount_cents", 100}};
  auto hold = ctx.Call("hold", std::move(hold_input));
  CallResult held = co_await hold;
  if (!held) co_return held.error();
  bool cancelled = false;
  std::string told;
  try {
    if (wait == "sleep") {
      co_await ctx.Sleep(std::chrono::hours(1));
    } else if (wait == "signal") {
      auto go = ctx.WaitSignal("go");
      co_await go;
    } else if (wait == "timed") {
      co_await ctx.WaitSignal("go", std::chrono::hours(1));
    } else if (wait == "any") {
      auto go = ctx.WaitSignal("go");
      auto later = ctx.Sleep(std::chrono::hours(1));
      co_await ctx.WhenAny(go, later);
    } else {
      json::object payout_input{{"account", "acct-1"}, {"amount_cents", 500}};
      auto payout = ctx.Call("payout", std::move(payout_input));
      co_await payout;
    }
  } catch (const WorkflowCancelledError& e) {
    if (!cleanup) throw;
    cancelled = true;
    told = e.reason();
  }
  if (!cancelled) co_return json::value(json::object{{"done", true}});
  // The clean-up: durable steps like any other.
  json::object release_input{{"account", "acct-1"}, {"amount_cents", 100}, {"memo", told}};
  auto release = ctx.Call("release", std::move(release_input));
  CallResult released = co_await release;
  if (!released) co_return released.error();
  if (in.contains("complete")) {
    co_return json::value(json::object{{"released", released.value().provider_ref}});
  }
  co_return ctx.Cancelled();
}

json::value Input(const std::string& wait, bool complete = false) {
  json::object in{{"wait", wait}};
  if (complete) in["complete"] = true;
  return in;
}

ToolContract Payout() {
  ToolContract c = FastContract("payout", SideEffect::kNonRepeatableWrite);
  c.approval = {.kind = ApprovalKind::kAlways, .when = {}, .grant_ttl = 3600s};
  return c;
}

void RegisterTools(EngineHarness& h, testkit::FakeProvider& provider) {
  for (ToolContract contract : {FastContract("hold", SideEffect::kIdempotentWrite),
                                FastContract("release", SideEffect::kIdempotentWrite),
                                Payout()}) {
    EXPECT_TRUE(h.tools().Register(testkit::ProviderTool(std::move(contract), provider)));
  }
  EXPECT_TRUE(h.workflows().Register("hold_release", HoldRelease));
}

class CancelCleanupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterTools(h_, provider_);
    h_.Boot();
  }

  // Starts `id` and runs until its hold committed and the code waits as `wait` says.
  void StartWaiting(const std::string& id, const std::string& wait, bool complete = false) {
    RECKON_ASSERT_OK(h_.Start(id, "hold_release", Input(wait, complete)));
    if (wait == "approval") {
      ASSERT_TRUE(h_.RunUntilState(id, "payout#2", OperationState::kAwaitingApproval));
    } else {
      ASSERT_TRUE(h_.RunUntilState(id, "hold#1", OperationState::kCommitted));
    }
  }

  Result<void> Cancel(const std::string& id) {
    auto cancelled = h_.Await(h_.engine().Cancel(id, kReason));
    if (!cancelled) return Err(Errc::kDeadlineExceeded, "Cancel() did not complete");
    return std::move(*cancelled);
  }

  bool UntilStatus(const std::string& id, RunStatus status) {
    return h_.RunUntil([&] {
      auto run = h_.Describe(id);
      return run && run->status == status;
    });
  }

  testkit::FakeProvider provider_;
  EngineHarness h_;
};

// The release comes after the request in the journal, the run ends cancelled, the provider
// saw one release carrying the reason, and the abandoned wait never acts.
TEST_F(CancelCleanupTest, EachKindOfAwaitIsToldAndTheCodeCleansUpDurably) {
  for (const char* wait : {"sleep", "signal", "timed", "any", "approval"}) {
    SCOPED_TRACE(wait);
    const std::string id = std::string("order-") + wait;
    StartWaiting(id, wait);
    const std::size_t before = provider_.calls_to("release").size();
    RECKON_ASSERT_OK(Cancel(id));
    ASSERT_TRUE(UntilStatus(id, RunStatus::kCancelled));
    const auto releases = provider_.calls_to("release");
    ASSERT_EQ(releases.size(), before + 1);
    EXPECT_EQ(provider_.effects(releases.back().key), 1);
    EXPECT_EQ(releases.back().input.at("memo").as_string(), kReason);
    if (std::string(wait) == "signal" || std::string(wait) == "any") {
      // The run takes no more signals: it is over.
      auto late = h_.Await(h_.engine().Signal(id, "go", "\"late\""));
      ASSERT_TRUE(late);
      EXPECT_FALSE(*late);
    }
  }
  ASSERT_TRUE(h_.RunFor(50ms));
  h_.Shutdown();
  for (const char* wait : {"sleep", "signal", "timed", "any", "approval"}) {
    SCOPED_TRACE(wait);
    const std::vector<Event> events = h_.Events(std::string("order-") + wait);
    std::vector<std::string> names;
    std::size_t requested = 0, release = 0;
    for (std::size_t i = 0; i < events.size(); ++i) {
      if (const auto* r = std::get_if<WorkflowCancelRequested>(&events[i].body)) {
        requested = i;
        EXPECT_TRUE(r->to_code);
        EXPECT_EQ(r->reason, kReason);
      }
      if (const auto* p = std::get_if<OperationPrepared>(&events[i].body); p && p->tool == "release") {
        release = i;
      }
    }
    EXPECT_GT(requested, 0u) << EventNames(events);
    EXPECT_GT(release, requested) << "the clean-up is a step after the request: "
                                  << EventNames(events);
    EXPECT_TRUE(std::holds_alternative<WorkflowCancelled>(events.back().body)) << EventNames(events);
    EXPECT_TRUE(BodiesOf<TimerFired>(events).empty()) << EventNames(events);
  }
  // The call awaiting approval was denied by the cancel and never ran.
  EXPECT_TRUE(provider_.calls_to("payout").empty());
}

TEST_F(CancelCleanupTest, CodeThatCatchesTheCancellationMayCompleteInstead) {
  StartWaiting("order-7", "sleep", /*complete=*/true);
  RECKON_ASSERT_OK(Cancel("order-7"));
  ASSERT_TRUE(UntilStatus("order-7", RunStatus::kCompleted));
  const json::value result = json::parse(h_.Describe("order-7")->result_json);
  EXPECT_FALSE(result.at("released").as_string().empty());
}

// While the clean-up runs, the run shows its cancel as requested and no longer waits for the
// signal it waited for when told, and a second request does nothing (one request in the journal, one release).
TEST_F(CancelCleanupTest, ARepeatedCancelWhileTheCodeCleansUpDoesNothing) {
  provider_.Script("release", {testkit::Step{testkit::Behaviour::kLateCommit, "", 300ms}});
  StartWaiting("order-8", "signal");
  ASSERT_EQ(h_.Describe("order-8")->wait.kind, WaitKind::kSignal);
  RECKON_ASSERT_OK(Cancel("order-8"));
  auto run = h_.Describe("order-8");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, RunStatus::kRunning);
  EXPECT_TRUE(run->cancel_requested);
  // The signal wait ended with the cancel: the run works on its clean-up, it waits for no one.
  EXPECT_EQ(run->wait.kind, WaitKind::kWorking) << run->wait.detail;
  RECKON_ASSERT_OK(Cancel("order-8"));
  ASSERT_TRUE(UntilStatus("order-8", RunStatus::kCancelled));
  EXPECT_FALSE(h_.Describe("order-8")->cancel_requested);
  h_.Shutdown();
  const std::vector<Event> events = h_.Events("order-8");
  EXPECT_EQ(BodiesOf<WorkflowCancelRequested>(events).size(), 1u) << EventNames(events);
  // The late reply may outlast the attempt's deadline: a retry of the idempotent write, under
  // the same operation id, finds the first effect.
  std::set<std::string> keys;
  for (const testkit::CallRecord& call : provider_.calls_to("release")) keys.insert(call.key);
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_EQ(provider_.effects(*keys.begin()), 1);
}

// The process dies at each provider call of the clean-up (the release's attempt, before and
// after it commits) and every life resumes from the journal: the replay tells the code of the
// cancel at the same point, the release keeps its operation id, and it takes effect once.
TEST(CancelCleanupCrashTest, ACrashDuringTheCleanUpNeitherLosesItNorRepeatsItsEffect) {
  for (testkit::Behaviour behaviour : {testkit::Behaviour::kCommit, testkit::Behaviour::kCommitLoseReply,
                              testkit::Behaviour::kLoseRequest}) {
    SCOPED_TRACE(static_cast<int>(behaviour));
    testkit::FakeProvider provider;
    EngineHarness h;
    RegisterTools(h, provider);
    provider.Script("release", {testkit::Step{behaviour}});
    bool crash = true;
    provider.OnCall([&](const testkit::CallRecord& call) {
      if (call.tool == "release" && crash) {
        crash = false;
        h.Crash();
      }
    });
    h.Boot();
    RECKON_ASSERT_OK(h.Start("order-9", "hold_release", Input("sleep")));
    ASSERT_TRUE(h.RunUntilState("order-9", "hold#1", OperationState::kCommitted));
    auto cancelled = h.Await(h.engine().Cancel("order-9", kReason));
    ASSERT_TRUE(h.crashed() || (cancelled && *cancelled));
    auto done = [&] {
      auto run = h.Describe("order-9");
      return run && run->status == RunStatus::kCancelled;
    };
    ASSERT_TRUE(h.RunUntil([&] { return h.crashed() || done(); }));
    ASSERT_TRUE(h.crashed()) << "the release was never called";
    h.Restart();
    auto recovered = h.Recover();
    ASSERT_TRUE(recovered) << recovered.error().ToString();
    ASSERT_TRUE(h.RunUntil(done, 10s));
    std::set<std::string> keys;
    for (const testkit::CallRecord& call : provider.calls_to("release")) keys.insert(call.key);
    ASSERT_EQ(keys.size(), 1u) << "one operation id across lives";
    EXPECT_EQ(provider.effects(*keys.begin()), 1);
    h.Shutdown();
    const std::vector<Event> events = h.Events("order-9");
    EXPECT_EQ(BodiesOf<WorkflowCancelRequested>(events).size(), 1u) << EventNames(events);
    EXPECT_TRUE(std::holds_alternative<WorkflowCancelled>(events.back().body)) << EventNames(events);
  }
}

// A cancelled history replays against the code that wrote it; code that no longer cleans up
// is named as nondeterministic at the clean-up's step. The same events without the mark that
// the code was told (a history written before cancellation reached the code) replay only to
// the request, as they always did.
TEST_F(CancelCleanupTest, TheReplayerChecksTheCleanUp) {
  StartWaiting("order-10", "sleep");
  RECKON_ASSERT_OK(Cancel("order-10"));
  ASSERT_TRUE(UntilStatus("order-10", RunStatus::kCancelled));
  h_.Shutdown();
  auto read = ReadLatestHistory(h_.journal(), "order-10");
  ASSERT_TRUE(read) << read.error().message();
  const HistoryFile history = std::move(read).value();

  auto same = ReplayHistory(h_.workflows(), history, ReplayOptions{&h_.tools().contracts()});
  ASSERT_TRUE(same) << same.error().message();
  EXPECT_EQ(same.value().history_status, RunStatus::kCancelled);
  EXPECT_TRUE(same.value().code_finished);
  EXPECT_EQ(same.value().events_shown, history.events.size());

  WorkflowRegistry older;
  RECKON_ASSERT_OK(older.Register(
      "hold_release", [](WorkflowContext& ctx, json::value input) -> Task<WorkflowOutcome> {
        input.as_object()["cleanup"] = false;
        return HoldRelease(ctx, std::move(input));
      }));
  auto dropped = ReplayHistory(older, history, ReplayOptions{&h_.tools().contracts()});
  ASSERT_FALSE(dropped);
  EXPECT_EQ(dropped.error().code(), Errc::kNondeterminism);
  EXPECT_NE(dropped.error().message().find("'release'"), std::string::npos)
      << dropped.error().message();

  // Without the mark, only what precedes the request is shown (and the clean-up code, which
  // was never told, is not checked against it).
  HistoryFile unseen = history;
  for (Event& event : unseen.events) {
    if (auto* r = std::get_if<WorkflowCancelRequested>(&event.body)) r->to_code = false;
  }
  auto before = ReplayHistory(older, unseen, ReplayOptions{&h_.tools().contracts()});
  ASSERT_TRUE(before) << before.error().message();
  EXPECT_LT(before.value().events_shown, history.events.size());
}

}  // namespace
}  // namespace reckon
