// The decider's side of per-tool timeouts: heartbeat details journaled with the event that ends
// a failed attempt (secrets removed) and folded back after a restart, and an attempt withdrawn
// before it started (a schedule-to-start timeout) retried whatever the class.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "reckon/engine/decider.h"
#include "reckon/engine/run_timeout.h"

namespace reckon {
namespace {

using namespace std::chrono_literals;
using namespace storage;
namespace json = boost::json;

const TimePoint kT0 = FromMicros(1'700'000'000'000'000);

ToolContract Contract(SideEffect side_effect) {
  ToolContract c;
  c.name = "tool";
  c.description = "A tool.";
  c.side_effect = side_effect;
  c.attempt_timeout = 2s;
  c.heartbeat_timeout = 500ms;
  c.schedule_to_start_timeout = 1s;
  c.retry = {.max_attempts = 3, .backoff = {200ms, 2.0, 5s}, .retryable_codes = {},
             .reconcile_on_unknown = side_effect == SideEffect::kNonRepeatableWrite};
  if (side_effect == SideEffect::kNonRepeatableWrite) {
    c.reconcile = {.mode = ReconcileMode::kLookup, .max_attempts = 3, .backoff = {1s, 2.0, 30s},
                   .grace = 500ms};
    c.evidence = "The provider's reference.";
  }
  c.secret_fields = {"card_token"};
  c.input_schema = json::parse(
      R"({"type": "object", "properties": {"card_token": {"type": "string"}}})");
  return c;
}

class DeciderTimeoutsTest : public ::testing::Test {
 protected:
  void Start(SideEffect side_effect) {
    auto registered = contracts_.Register(Contract(side_effect));
    ASSERT_TRUE(registered) << registered.error().ToString();
    Decider d(state_, contracts_, kT0);
    ASSERT_TRUE(d.Start("wf", json::object{}));
    std::vector<Command> commands;
    commands.push_back(ScheduleCall{"s1", "tool", json::object{{"card_token", "tok_secret"}}});
    ASSERT_TRUE(d.ApplyCommands(std::move(commands)));
    Keep(d);
  }
  void Keep(const Decider& d) { history_.insert(history_.end(), d.events().begin(), d.events().end()); }
  OperationRecord& Op() { return *state_.FindOperationByStep("s1"); }

  ContractRegistry contracts_;
  RunState state_{RunRef{"wf-1", "r1"}};
  std::vector<Event> history_;
};

TEST_F(DeciderTimeoutsTest, HeartbeatDetailsAreJournaledRedactedAndSurviveAFold) {
  Start(SideEffect::kReadOnly);
  AttemptOutcome lost;
  lost.kind = FailureKind::kUnknown;
  lost.code = "heartbeat_timeout";
  lost.heartbeat_details_json = R"({"page": 3, "note": "tok_secret", "card_token": "x"})";
  Decider d(state_, contracts_, kT0 + 600ms);
  ASSERT_TRUE(d.AttemptFinished(Op().operation_id, 1, lost));
  Keep(d);
  ASSERT_EQ(d.events().size(), 2u);  // OutcomeUnknown RetryScheduled
  const auto& unknown = std::get<OutcomeUnknown>(d.events()[0].body);
  EXPECT_EQ(unknown.reason, "heartbeat_timeout");
  EXPECT_EQ(unknown.heartbeat_details_json.find("tok_secret"), std::string::npos);
  EXPECT_EQ(unknown.heartbeat_details_json.find("card_token"), std::string::npos);
  EXPECT_NE(unknown.heartbeat_details_json.find("\"page\":3"), std::string::npos);
  EXPECT_EQ(Op().last_heartbeat_details_json, unknown.heartbeat_details_json);

  // A restart folds the journal: the next attempt still gets the details.
  RunState folded{RunRef{"wf-1", "r1"}};
  ASSERT_TRUE(folded.ApplyAll(history_));
  EXPECT_EQ(folded.FindOperationByStep("s1")->last_heartbeat_details_json,
            unknown.heartbeat_details_json);

  // A later failure without details keeps the last ones.
  Decider retry(state_, contracts_, kT0 + 900ms);
  ASSERT_TRUE(retry.Due(Op().operation_id));
  AttemptOutcome plain;
  plain.kind = FailureKind::kUnknown;
  plain.code = "lease_lost";
  Decider again(state_, contracts_, kT0 + 1200ms);
  ASSERT_TRUE(again.AttemptFinished(Op().operation_id, 2, plain));
  EXPECT_EQ(Op().last_heartbeat_details_json, unknown.heartbeat_details_json);
}

TEST_F(DeciderTimeoutsTest, ANotStartedAttemptIsRetriedEvenForANonRepeatableWrite) {
  Start(SideEffect::kNonRepeatableWrite);
  AttemptOutcome withdrawn;
  withdrawn.kind = FailureKind::kRetryable;
  withdrawn.code = "schedule_to_start_timeout";
  withdrawn.not_started = true;
  Decider d(state_, contracts_, kT0 + 1s);
  ASSERT_TRUE(d.AttemptFinished(Op().operation_id, 1, withdrawn));
  ASSERT_EQ(d.events().size(), 1u);
  const auto& failed = std::get<AttemptFailedRetryable>(d.events()[0].body);
  EXPECT_EQ(failed.code, "schedule_to_start_timeout");
  EXPECT_EQ(Op().state, OperationState::kRetryScheduled);
  EXPECT_FALSE(Op().earlier_outcome_unknown);

  // The same report from a worker (no proof) is an unknown outcome, reconciled.
  RunState other{RunRef{"wf-2", "r1"}};
  Decider start(other, contracts_, kT0);
  ASSERT_TRUE(start.Start("wf", json::object{}));
  std::vector<Command> commands;
  commands.push_back(ScheduleCall{"s1", "tool", json::object{}});
  ASSERT_TRUE(start.ApplyCommands(std::move(commands)));
  withdrawn.not_started = false;
  Decider late(other, contracts_, kT0 + 1s);
  ASSERT_TRUE(late.AttemptFinished(other.FindOperationByStep("s1")->operation_id, 1, withdrawn));
  EXPECT_EQ(other.FindOperationByStep("s1")->state, OperationState::kOutcomeUnknown);
}

TEST_F(DeciderTimeoutsTest, OutOfAttemptsANotStartedAttemptRejectsTheOperation) {
  Start(SideEffect::kNonRepeatableWrite);
  for (std::uint32_t attempt = 1; attempt <= 3; ++attempt) {
    AttemptOutcome withdrawn;
    withdrawn.kind = FailureKind::kRetryable;
    withdrawn.code = "schedule_to_start_timeout";
    withdrawn.not_started = true;
    const TimePoint now = kT0 + std::chrono::seconds(10 * attempt);
    Decider d(state_, contracts_, now);
    ASSERT_TRUE(d.AttemptFinished(Op().operation_id, attempt, withdrawn));
    if (attempt < 3) {
      Decider due(state_, contracts_, now + 5s);
      ASSERT_TRUE(due.Due(Op().operation_id));
      ASSERT_EQ(Op().attempt, attempt + 1);
    }
  }
  EXPECT_EQ(Op().state, OperationState::kRejected);
  EXPECT_EQ(Op().failure_code, "schedule_to_start_timeout");
}

TEST_F(DeciderTimeoutsTest, ARunTimeoutWaitsForAnEffectThatMayExistThenFailsTheRun) {
  ASSERT_TRUE(contracts_.Register(Contract(SideEffect::kReadOnly)));
  {
    Decider d(state_, contracts_, kT0);
    ASSERT_TRUE(d.Start("wf", json::object{}, "", "", 1s));
    std::vector<Command> commands;
    commands.push_back(ScheduleCall{"s1", "tool", json::object{}});
    ASSERT_TRUE(d.ApplyCommands(std::move(commands)));
    Keep(d);
    EXPECT_EQ(state_.run_deadline_us(), ToMicros(kT0 + 1s));
  }
  const std::string timer(kRunTimeoutTimer);
  {  // The deadline passes with the attempt in flight: nothing is forgotten, look again later.
    Decider d(state_, contracts_, kT0 + 1s);
    ASSERT_TRUE(d.WorkflowTimerFired(timer));
    EXPECT_TRUE(d.events().empty());
    ASSERT_EQ(d.actions().size(), 1u);
    EXPECT_TRUE(std::holds_alternative<ArmWorkflowTimerAction>(d.actions()[0]));
  }
  {  // The attempt fails retryable: no new attempt starts past the deadline.
    AttemptOutcome refused;
    refused.kind = FailureKind::kUnknown;
    refused.code = "reply_lost";
    Decider d(state_, contracts_, kT0 + 1200ms);
    ASSERT_TRUE(d.AttemptFinished(Op().operation_id, 1, refused));
    Keep(d);
    Decider due(state_, contracts_, FromMicros(Op().due_at_us));
    ASSERT_TRUE(due.Due(Op().operation_id));
    Keep(due);
    EXPECT_EQ(Op().state, OperationState::kRejected);
    EXPECT_EQ(Op().failure_code, "run_timeout");
    EXPECT_EQ(Op().attempt, 1u);
  }
  {  // Nothing may have acted any more: the run fails with run_timeout.
    Decider d(state_, contracts_, kT0 + 2200ms);
    ASSERT_TRUE(d.WorkflowTimerFired(timer));
    Keep(d);
    ASSERT_EQ(d.events().size(), 1u);
    EXPECT_EQ(std::get<WorkflowFailed>(d.events()[0].body).code, "run_timeout");
    EXPECT_EQ(state_.status(), RunStatus::kFailed);
  }
  // A restart re-arms the deadline from WorkflowStarted (here: the run is over, so not).
  RunState folded{RunRef{"wf-1", "r1"}};
  ASSERT_TRUE(folded.ApplyAll(history_));
  EXPECT_EQ(folded.run_deadline_us(), ToMicros(kT0 + 1s));
}

TEST_F(DeciderTimeoutsTest, RecoveryReArmsTheRunDeadline) {
  {
    Decider d(state_, contracts_, kT0);
    ASSERT_TRUE(d.Start("wf", json::object{}, "", "", 5s));
    Keep(d);
  }
  RunState folded{RunRef{"wf-1", "r1"}};
  ASSERT_TRUE(folded.ApplyAll(history_));
  Decider d(folded, contracts_, kT0 + 1s);
  ASSERT_TRUE(d.Recover());
  ASSERT_EQ(d.actions().size(), 1u);
  const auto& armed = std::get<ArmWorkflowTimerAction>(d.actions()[0]);
  EXPECT_EQ(armed.timer_id, kRunTimeoutTimer);
  EXPECT_EQ(armed.fire_at_us, ToMicros(kT0 + 5s));
  Decider fired(folded, contracts_, kT0 + 5s);
  ASSERT_TRUE(fired.WorkflowTimerFired(std::string(kRunTimeoutTimer)));
  EXPECT_EQ(folded.status(), RunStatus::kFailed);
}

}  // namespace
}  // namespace reckon
