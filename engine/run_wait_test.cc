// WaitOf, alone: run states folded from hand-written histories, one per kind, then the
// precedence between kinds when a run waits on several things at once, and the signal tally
// (waits recorded minus signals received, per name).
#include "reckon/engine/run_wait.h"

#include <gtest/gtest.h>

#include <vector>

#include "reckon/engine/command.h"

namespace reckon {
namespace {

using namespace storage;

constexpr std::int64_t kFireAt = 1'700'000'000'000'000;  // 2023-11-14T22:13:20Z

MarkerRecorded WaitMarker(const std::string& name, int k) {
  return {"signal:" + name + "#" + std::to_string(k), std::string(kWaitSignalMarker),
          "\"" + name + "\""};
}

OperationPrepared Prepared(const std::string& op) {
  return {.step_id = "step-" + op, .operation_id = op, .tool = "pay", .input_json = "{}"};
}

// A state folded from WorkflowStarted followed by `bodies`.
RunState Fold(const std::vector<EventBody>& bodies) {
  RunState state(RunRef{"wf", "r1"});
  std::vector<EventBody> all = {WorkflowStarted{"type", "{}", ""}};
  all.insert(all.end(), bodies.begin(), bodies.end());
  std::int64_t seq = 1;
  for (const EventBody& body : all) {
    auto applied = state.Apply(Event{seq++, kFireAt - 1000, body});
    EXPECT_TRUE(applied) << applied.error().ToString();
  }
  return state;
}

RunWait Wait(const std::vector<EventBody>& bodies) { return WaitOf(Fold(bodies), "", false); }

TEST(RunWaitTest, EachKindWithItsDetail) {
  EXPECT_EQ(Wait({WorkflowCompleted{"{}"}}), (RunWait{WaitKind::kNothing, ""}));
  EXPECT_EQ(Wait({Prepared("op-1"), AttemptStarted{"op-1", 1, "local", kFireAt, ""}}),
            (RunWait{WaitKind::kWorking, "op-1"}));
  EXPECT_EQ(Wait({TimerStarted{"sleep#1", kFireAt}}),
            (RunWait{WaitKind::kTimer, "2023-11-14T22:13:20Z", kFireAt}));
  EXPECT_EQ(Wait({WaitMarker("approved", 1)}), (RunWait{WaitKind::kSignal, "approved"}));
  EXPECT_EQ(Wait({Prepared("op-1"), ApprovalRequested{"op-1", "ap-1", "h", 0}}),
            (RunWait{WaitKind::kApproval, "op-1"}));
  EXPECT_EQ(Wait({Prepared("op-1"), AttemptStarted{"op-1", 1, "local", kFireAt, ""},
                  OutcomeUnknown{"op-1", 1, "deadline_exceeded", 0},
                  NeedsHuman{"op-1", "no lookup"}}),
            (RunWait{WaitKind::kPerson, "op-1"}));
  EXPECT_EQ(WaitOf(Fold({}), "nondeterminism: step 'hold' changed", false),
            (RunWait{WaitKind::kStopped, "nondeterminism: step 'hold' changed"}));
}

TEST(RunWaitTest, StoppedThenEngineWorkThenPeopleThenSignalsThenTimers) {
  const RunState all = Fold({TimerStarted{"sleep#1", kFireAt}, WaitMarker("go", 1),
                             Prepared("op-a"), ApprovalRequested{"op-a", "ap-1", "h", 0},
                             Prepared("op-p"), AttemptStarted{"op-p", 1, "local", kFireAt, ""},
                             OutcomeUnknown{"op-p", 1, "deadline_exceeded", 0},
                             NeedsHuman{"op-p", "no lookup"}, Prepared("op-w")});
  EXPECT_EQ(WaitOf(all, "a bug", true).kind, WaitKind::kStopped);
  EXPECT_EQ(WaitOf(all, "", true), (RunWait{WaitKind::kWorking, ""}));
  EXPECT_EQ(WaitOf(all, "", false), (RunWait{WaitKind::kWorking, "op-w"}));
  EXPECT_EQ(Wait({TimerStarted{"sleep#1", kFireAt}, WaitMarker("go", 1), Prepared("op-a"),
                  ApprovalRequested{"op-a", "ap-1", "h", 0}, Prepared("op-p"),
                  AttemptStarted{"op-p", 1, "local", kFireAt, ""},
                  OutcomeUnknown{"op-p", 1, "deadline_exceeded", 0},
                  NeedsHuman{"op-p", "no lookup"}}),
            (RunWait{WaitKind::kPerson, "op-p"}));
  EXPECT_EQ(Wait({TimerStarted{"sleep#1", kFireAt}, WaitMarker("go", 1), Prepared("op-a"),
                  ApprovalRequested{"op-a", "ap-1", "h", 0}}),
            (RunWait{WaitKind::kApproval, "op-a"}));
  EXPECT_EQ(Wait({TimerStarted{"sleep#1", kFireAt}, WaitMarker("go", 1)}).kind,
            WaitKind::kSignal);
  // A finished run waits on nothing, whatever its history left open; a batch in hand is work.
  EXPECT_EQ(Wait({WaitMarker("go", 1), WorkflowCompleted{"{}"}}).kind, WaitKind::kNothing);
  EXPECT_EQ(WaitOf(Fold({WorkflowCompleted{"{}"}}), "", true).kind, WaitKind::kWorking);
}

TEST(RunWaitTest, SignalsReceivedSettleWaitsPerNameInAnyOrder) {
  // Received before the wait: buffered, so the wait is satisfied at once.
  EXPECT_EQ(Wait({SignalReceived{"go", "1"}, WaitMarker("go", 1), TimerStarted{"t", kFireAt}}).kind,
            WaitKind::kTimer);
  // Two waits, one signal: still waiting. Another name's signal does not count.
  EXPECT_EQ(Wait({WaitMarker("go", 1), SignalReceived{"go", "1"}, WaitMarker("go", 2),
                  SignalReceived{"stop", "1"}}),
            (RunWait{WaitKind::kSignal, "go"}));
  EXPECT_EQ(Wait({WaitMarker("b", 1), WaitMarker("a", 1)}), (RunWait{WaitKind::kSignal, "a, b"}));
  EXPECT_EQ(Fold({WaitMarker("go", 1), SignalReceived{"go", "1"}}).OutstandingSignalWaits(),
            std::vector<std::string>{});
}

TEST(RunWaitTest, ARunningRunThatNamesNoWaitIsParkedInAnUnrecordedSignalWait) {
  // A history written before waits were recorded: the code waits, the journal does not say on
  // what; the only await that leaves no trace is WaitSignal.
  EXPECT_EQ(Wait({TimerStarted{"sleep#1", kFireAt}, TimerFired{"sleep#1"}}),
            (RunWait{WaitKind::kSignal, ""}));
}

TEST(RunWaitTest, AWaitMarkerWithoutANameIsACorruptHistory) {
  RunState state(RunRef{"wf", "r1"});
  ASSERT_TRUE(state.Apply(Event{1, 0, WorkflowStarted{"type", "{}", ""}}));
  auto applied =
      state.Apply(Event{2, 0, MarkerRecorded{"signal:x#1", std::string(kWaitSignalMarker), "7"}});
  ASSERT_FALSE(applied);
  EXPECT_EQ(applied.error().code(), Errc::kInternal);
  EXPECT_NE(applied.error().message().find("signal:x#1"), std::string::npos);
}

TEST(RunWaitTest, OnlyWorkAndTimersAreUnsettled) {
  for (WaitKind kind : {WaitKind::kNothing, WaitKind::kSignal, WaitKind::kApproval,
                        WaitKind::kPerson, WaitKind::kStopped}) {
    EXPECT_TRUE(Settled(RunWait{kind, ""})) << WaitKindName(kind);
  }
  EXPECT_FALSE(Settled(RunWait{WaitKind::kWorking, ""}));
  EXPECT_FALSE(Settled(RunWait{WaitKind::kTimer, ""}));
}

}  // namespace
}  // namespace reckon
