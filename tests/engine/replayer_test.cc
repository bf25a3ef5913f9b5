// The replayer over histories the engine really wrote: the same code passes, a history that
// ends mid-run replays to where it ends, and each kind of change is caught and named. The
// messages come from the workflow context, the engine or the replayer, whichever sees the
// change first; the tests check that they name the run and the step, not their wording.
#include "reckon/worker/replayer.h"

#include <gtest/gtest.h>

#include <boost/json/object.hpp>

#include <fstream>

#include "reckon/host/testing/engine_harness.h"
#include "reckon/testkit/gtest.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"

namespace reckon {
namespace {

using namespace reckon::testing;
using storage::HistoryFile;
using storage::RunStatus;
namespace json = boost::json;

constexpr char kOrder[] = "order-1";

// What a later release changed in the order workflow; the default is the first release.
struct Change {
  std::string hold_tool = "reserve";   // the tool of step "hold"
  std::int64_t hold_amount = 100;
  bool skip_hold = false;               // step "hold" removed
  bool notify_before_wait = false;      // a new call before waiting for "go"
  bool sleep_before_wait = false;       // a new timer before waiting for "go"
  bool wait_again_at_end = false;       // waits for "done" after the charge
};

// hold (reserve) -> wait for signal "go" -> charge (step "charge#2") -> complete.
Task<WorkflowOutcome> Order(WorkflowContext& ctx, json::value, Change change) {
  if (!change.skip_hold) {
    auto hold = ctx.Call(change.hold_tool, FastInput("acct-1", change.hold_amount),
                         CallOptions{"hold"});
    CallResult held = co_await hold;
    if (!held) co_return held.error();
  }
  if (change.notify_before_wait) {
    auto notify = ctx.Call("notify", FastInput("acct-1", 1));
    CallResult notified = co_await notify;
    if (!notified) co_return notified.error();
  }
  if (change.sleep_before_wait) co_await ctx.Sleep(std::chrono::milliseconds(1));
  auto go = ctx.WaitSignal("go");
  std::string payload = co_await go;
  auto charge = ctx.Call("charge", FastInput("acct-1", 100));
  CallResult charged = co_await charge;
  if (!charged) co_return charged.error();
  if (change.wait_again_at_end) {
    auto done = ctx.WaitSignal("done");
    co_await done;
  }
  co_return json::object{{"go", payload}};
}

WorkflowFunction Version(Change change) {
  return [change](WorkflowContext& ctx, json::value input) {
    return Order(ctx, std::move(input), change);
  };
}

enum class Until { kWaitingForGo, kCompleted, kCancelled };

class ReplayerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto [name, side_effect] : {std::pair{"reserve", SideEffect::kIdempotentWrite},
                                     std::pair{"charge", SideEffect::kNonRepeatableWrite},
                                     std::pair{"notify", SideEffect::kIdempotentWrite}}) {
      auto tool = testkit::ProviderTool(FastContract(name, side_effect), provider_);
      RECKON_ASSERT_OK(h_.tools().Register(std::move(tool)));
    }
    RECKON_ASSERT_OK(h_.workflows().Register("order", Version({})));
  }

  // Runs the first release until `until` and returns the run's history as a file would hold it.
  HistoryFile Record(Until until, const std::string& id = kOrder) {
    h_.Boot();
    auto started = h_.Start(id, "order", json::object{});
    EXPECT_TRUE(started);
    auto waiting = h_.Await(h_.engine().UntilSettled(id));
    EXPECT_TRUE(waiting && *waiting && waiting->value().wait.kind == WaitKind::kSignal);
    if (until == Until::kCompleted) {
      auto signalled = h_.Await(h_.engine().Signal(id, "go", "\"yes\""));
      EXPECT_TRUE(signalled && *signalled);
      auto settled = h_.Await(h_.engine().UntilSettled(id));
      EXPECT_TRUE(settled && *settled && settled->value().status == RunStatus::kCompleted);
    } else if (until == Until::kCancelled) {
      auto cancelled = h_.Await(h_.engine().Cancel(id, "changed my mind"));
      EXPECT_TRUE(cancelled && *cancelled);
    }
    h_.Shutdown();
    auto history = storage::ReadLatestHistory(h_.journal(), id);
    EXPECT_TRUE(history) << history.error().message();
    if (!history) return {};
    EXPECT_EQ(history.value().run_id, started.value().run_id);
    EXPECT_EQ(history.value().events.size(), h_.Events(id).size());
    return std::move(history).value();
  }

  Result<ReplayReport> Replay(const HistoryFile& history, Change change) {
    WorkflowRegistry later;
    EXPECT_TRUE(later.Register("order", Version(change)));
    return ReplayHistory(later, history, ReplayOptions{&h_.tools().contracts()});
  }

  // The replay fails as nondeterministic with a message that holds every one of `parts`.
  void ExpectDiverged(const HistoryFile& history, Change change,
                      std::initializer_list<std::string> parts) {
    auto replayed = Replay(history, change);
    ASSERT_FALSE(replayed);
    EXPECT_EQ(replayed.error().code(), Errc::kNondeterminism) << replayed.error().message();
    EXPECT_NE(replayed.error().message().find("run 'order-1'"), std::string::npos)
        << replayed.error().message();
    for (const std::string& part : parts) {
      EXPECT_NE(replayed.error().message().find(part), std::string::npos)
          << "'" << part << "' not in: " << replayed.error().message();
    }
  }

  testkit::FakeProvider provider_;
  EngineHarness h_;
};

TEST_F(ReplayerTest, TheSameCodeReplaysACompletedHistory) {
  const HistoryFile history = Record(Until::kCompleted);
  auto replayed = Replay(history, {});
  ASSERT_TRUE(replayed) << replayed.error().message();
  const ReplayReport& report = replayed.value();
  EXPECT_EQ(report.history_status, RunStatus::kCompleted);
  EXPECT_TRUE(report.code_finished);
  EXPECT_EQ(report.calls_replayed, 2u);
  EXPECT_EQ(report.events, history.events.size());
  EXPECT_EQ(report.events_shown, history.events.size());
  EXPECT_TRUE(report.inputs_checked);
  EXPECT_EQ(DescribeReplay(report).rfind("order-1 (order, run " + history.run_id + "): ", 0), 0u);
}

TEST_F(ReplayerTest, AHistoryThatEndsMidRunReplaysToWhereItEnds) {
  const HistoryFile history = Record(Until::kWaitingForGo);
  auto replayed = Replay(history, {});
  ASSERT_TRUE(replayed) << replayed.error().message();
  EXPECT_EQ(replayed.value().history_status, RunStatus::kRunning);
  EXPECT_FALSE(replayed.value().code_finished);
  EXPECT_EQ(replayed.value().calls_replayed, 1u);
}

// The code was told of the cancel (worker/workflow_cancelled.h) and let it end the run: the
// replay shows it everything and checks that it ends the run the same way.
TEST_F(ReplayerTest, ACancelledHistoryReplaysWhatTheCodeSaw) {
  const HistoryFile history = Record(Until::kCancelled);
  auto replayed = Replay(history, {});
  ASSERT_TRUE(replayed) << replayed.error().message();
  EXPECT_EQ(replayed.value().history_status, RunStatus::kCancelled);
  EXPECT_EQ(replayed.value().events_shown, history.events.size());
  EXPECT_TRUE(replayed.value().code_finished);
}

TEST_F(ReplayerTest, ADifferentToolAtAStepIsNamed) {
  ExpectDiverged(Record(Until::kCompleted), Change{.hold_tool = "notify"},
                 {"'hold'", "'notify'", "'reserve'"});
}

TEST_F(ReplayerTest, ADifferentInputAtAStepIsCaughtWithTheContracts) {
  const HistoryFile history = Record(Until::kCompleted);
  ExpectDiverged(history, Change{.hold_amount = 999}, {"'hold'"});
  // Without the contracts the intent hash cannot be computed, and the report says so.
  WorkflowRegistry later;
  RECKON_ASSERT_OK(later.Register("order", Version(Change{.hold_amount = 999})));
  auto unchecked = ReplayHistory(later, history);
  ASSERT_TRUE(unchecked) << unchecked.error().message();
  EXPECT_FALSE(unchecked.value().inputs_checked);
  EXPECT_NE(DescribeReplay(unchecked.value()).find("inputs not checked"), std::string::npos);
}

TEST_F(ReplayerTest, AStepTheCodeNoLongerIssuesIsNamed) {
  ExpectDiverged(Record(Until::kWaitingForGo), Change{.skip_hold = true}, {"'hold'"});
}

TEST_F(ReplayerTest, ANewCallBeforeWhereTheRunWaitsIsNamed) {
  ExpectDiverged(Record(Until::kWaitingForGo), Change{.notify_before_wait = true},
                 {"'notify'", "'notify#2'"});
}

TEST_F(ReplayerTest, ANewTimerBeforeWhereTheRunWaitsIsNamed) {
  ExpectDiverged(Record(Until::kWaitingForGo), Change{.sleep_before_wait = true},
                 {"'sleep#2'"});
}

TEST_F(ReplayerTest, ARunTheHistoryCompletedThatNowWaitsIsCaught) {
  const HistoryFile history = Record(Until::kCompleted);
  ExpectDiverged(history, Change{.wait_again_at_end = true},
                 {"now waits for signal \"done\" (step 'signal:done#1')",
                  "completed it at seq " + std::to_string(history.events.size())});
  // A run still in flight at that point goes on waiting: that is no divergence.
  auto mid_run =
      Replay(Record(Until::kWaitingForGo, "order-2"), Change{.wait_again_at_end = true});
  EXPECT_TRUE(mid_run) << mid_run.error().message();
}

TEST_F(ReplayerTest, AnUnregisteredTypeIsNotFound) {
  const HistoryFile history = Record(Until::kCompleted);
  WorkflowRegistry empty;
  auto replayed = ReplayHistory(empty, history);
  ASSERT_FALSE(replayed);
  EXPECT_EQ(replayed.error().code(), Errc::kNotFound);
  EXPECT_NE(replayed.error().message().find("workflow type 'order'"), std::string::npos);
  EXPECT_EQ(storage::ReadLatestHistory(h_.journal(), "absent").error().code(), Errc::kNotFound);
}

TEST_F(ReplayerTest, AHistoryThatDoesNotFoldIntoARunIsRefused) {
  HistoryFile history = Record(Until::kCompleted);
  // The first AttemptStarted removed: its operation then commits an attempt never started.
  for (std::size_t i = 0; i < history.events.size(); ++i) {
    if (std::holds_alternative<storage::AttemptStarted>(history.events[i].body)) {
      history.events.erase(history.events.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
  for (std::size_t i = 0; i < history.events.size(); ++i) history.events[i].seq = i + 1;
  auto replayed = Replay(history, {});
  ASSERT_FALSE(replayed);
  EXPECT_EQ(replayed.error().code(), Errc::kInvalidArgument) << replayed.error().message();
  EXPECT_NE(replayed.error().message().find("does not fold into a run"), std::string::npos);
}

TEST_F(ReplayerTest, ADirectoryReplaysEachFileOnItsOwn) {
  const HistoryFile completed = Record(Until::kCompleted);
  TempDir dir;
  RECKON_ASSERT_OK(storage::WriteHistoryFile(dir.File("a-completed.json"), completed));
  std::ofstream(dir.File("b-broken.json")) << "{}";
  std::ofstream(dir.File("notes.txt")) << "not a history";
  WorkflowRegistry same;
  RECKON_ASSERT_OK(same.Register("order", Version({})));
  auto replay = ReplayHistoryDirectory(same, dir.path().string());
  ASSERT_TRUE(replay) << replay.error().message();
  ASSERT_EQ(replay.value().files.size(), 2u);
  EXPECT_TRUE(replay.value().files[0].result);
  EXPECT_EQ(replay.value().failures(), 1u);
  EXPECT_NE(replay.value().FailureText().find("b-broken.json: invalid_argument: "),
            std::string::npos)
      << replay.value().FailureText();

  TempDir empty;
  auto none = ReplayHistoryDirectory(same, empty.path().string());
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code(), Errc::kInvalidArgument);
  EXPECT_EQ(ReplayHistoryDirectory(same, dir.File("absent")).error().code(), Errc::kNotFound);
}

}  // namespace
}  // namespace reckon
