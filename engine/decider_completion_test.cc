// The decider's side of asynchronous completion (contract completion, Decider::CompletionArrived)
// and of signal request ids: an attempt answered "accepted", the operation waits durably for
// its completion, a redelivered completion or signal is applied once, and a completion that
// never comes is an unknown outcome that goes to reconciliation or to a person, never to a
// blind retry. End to end through a real engine and journal:
// tests/engine/engine_completion_test.cc.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include <string>
#include <vector>

#include "reckon/engine/decider.h"
#include "reckon/engine/run_wait.h"

namespace reckon {
namespace {

using namespace std::chrono_literals;
using namespace storage;
namespace json = boost::json;

const TimePoint kT0 = FromMicros(1'700'000'000'000'000);

// A non-repeatable write whose provider reports within 10 s; attempts time out after 2 s.
ToolContract AsyncContract(ReconcileMode mode = ReconcileMode::kLookup) {
  ToolContract c;
  c.name = "payout";
  c.description = "Send a payout; the provider reports the result by webhook.";
  c.side_effect = SideEffect::kNonRepeatableWrite;
  c.attempt_timeout = 2s;
  c.retry = {.max_attempts = 3, .backoff = {200ms, 2.0, 5s}, .retryable_codes = {"rate_limited"},
             .reconcile_on_unknown = true};
  c.reconcile = mode == ReconcileMode::kLookup
                    ? ReconcilePolicy{.mode = mode, .max_attempts = 3, .backoff = {1s, 2.0, 30s},
                                      .grace = 500ms}
                    : ReconcilePolicy{.mode = mode};
  c.input_schema = json::parse(R"({"type": "object"})");
  c.definitive_codes = {"account_closed"};
  c.evidence = "The payout id.";
  c.completion.deadline = 10s;
  return c;
}

AttemptOutcome Accepted(std::string ref) {
  AttemptOutcome outcome;
  outcome.accepted = true;
  outcome.provider_ref = std::move(ref);
  return outcome;
}

Completion Succeeded(std::string operation_id, std::string delivery) {
  Completion completion;
  completion.operation_id = std::move(operation_id);
  completion.delivery_id = std::move(delivery);
  completion.outcome.success = true;
  completion.outcome.output = json::object{{"status", "paid"}};
  return completion;
}

Completion Failed(std::string operation_id, std::string delivery, std::string code) {
  Completion completion;
  completion.operation_id = std::move(operation_id);
  completion.delivery_id = std::move(delivery);
  completion.outcome.kind = FailureKind::kDefinitive;
  completion.outcome.code = std::move(code);
  return completion;
}

class DeciderCompletionTest : public ::testing::Test {
 protected:
  struct Batch {
    Result<void> result = Ok();
    std::string events;  // type names, space-separated
    std::vector<Event> emitted;
    std::vector<Action> actions;
  };

  template <class Input>
  Batch Decide(Input input) {
    Decider decider(state_, contracts_, now_);
    Batch batch;
    batch.result = input(decider);
    batch.emitted = decider.events();
    batch.actions = decider.actions();
    for (const Event& e : batch.emitted) {
      batch.events += (batch.events.empty() ? "" : " ") + std::string(EventTypeName(e.body));
      history_.push_back(e);
    }
    return batch;
  }

  void Start(ToolContract contract = AsyncContract()) {
    ASSERT_TRUE(contracts_.Register(std::move(contract)));
    Batch start = Decide([](Decider& d) -> Result<void> {
      RECKON_TRY(d.Start("wf", json::object{}));
      std::vector<Command> commands;
      commands.push_back(ScheduleCall{"s1", "payout", json::object{}});
      return d.ApplyCommands(std::move(commands));
    });
    ASSERT_TRUE(start.result) << start.result.error().ToString();
    ASSERT_EQ(start.events, "WorkflowStarted OperationPrepared AttemptStarted");
  }

  // The first attempt answers "accepted" 100 ms in.
  void Accept() {
    now_ = kT0 + 100ms;
    Batch accepted = Decide([&](Decider& d) { return d.AttemptFinished(OpId(), 1, Accepted("po_1")); });
    ASSERT_TRUE(accepted.result) << accepted.result.error().ToString();
    ASSERT_EQ(accepted.events, "AttemptAccepted");
  }

  Batch Complete(const Completion& completion) {
    return Decide([&](Decider& d) { return d.CompletionArrived(completion); });
  }

  OperationRecord& Op() { return *state_.FindOperationByStep("s1"); }
  std::string OpId() { return Op().operation_id; }

  ContractRegistry contracts_;
  RunState state_{RunRef{"wf-1", "r1"}};
  TimePoint now_ = kT0;
  std::vector<Event> history_;
};

TEST_F(DeciderCompletionTest, AcceptedWaitsForItsCompletionUntilTheDeadline) {
  Start();
  Accept();
  EXPECT_EQ(Op().state, OperationState::kAwaitingCompletion);
  EXPECT_EQ(Op().provider_ref, "po_1");
  const auto& accepted = std::get<AttemptAccepted>(history_.back().body);
  EXPECT_EQ(accepted.completion_due_us, ToMicros(now_ + 10s));
  EXPECT_EQ(Op().due_at_us, accepted.completion_due_us);
  // The run waits on the outside, so an embedded host's UntilIdle does not hold on to it.
  const RunWait wait = WaitOf(state_, "", false);
  EXPECT_EQ(wait.kind, WaitKind::kCompletion);
  EXPECT_EQ(wait.detail, OpId());
  EXPECT_TRUE(Settled(wait));
  // The attempt's own deadline (2 s) passing changes nothing: the provider holds the request.
  now_ = kT0 + 2s;
  EXPECT_EQ(Decide([&](Decider& d) { return d.Due(OpId()); }).events, "");
  EXPECT_EQ(Op().state, OperationState::kAwaitingCompletion);
}

TEST_F(DeciderCompletionTest, ASuccessCommitsOnceWhateverTheRedeliveries) {
  Start();
  Accept();
  Batch first = Complete(Succeeded(OpId(), "evt_1"));
  ASSERT_TRUE(first.result);
  EXPECT_EQ(first.events, "CompletionReceived OperationCommitted");
  const auto& committed = std::get<OperationCommitted>(first.emitted.back().body);
  EXPECT_EQ(committed.source, CommitSource::kCallback);
  EXPECT_EQ(committed.provider_ref, "po_1");  // the accepted request's, none given
  EXPECT_EQ(committed.result_json, R"({"status":"paid"})");
  // The same delivery again, another delivery, a contradicting one: acknowledged, no change.
  for (const Completion& again : {Succeeded(OpId(), "evt_1"), Succeeded(OpId(), "evt_2"),
                                  Failed(OpId(), "evt_3", "account_closed")}) {
    Batch repeat = Complete(again);
    EXPECT_TRUE(repeat.result);
    EXPECT_EQ(repeat.events, "");
  }
  EXPECT_EQ(Op().state, OperationState::kCommitted);
}

TEST_F(DeciderCompletionTest, ARedeliveryIsRecognisedAfterARestart) {
  Start();
  Accept();
  Completion failure = Failed(OpId(), "evt_1", "rate_limited");  // retryable: a new attempt
  ASSERT_EQ(Complete(failure).events, "CompletionReceived AttemptFailedRetryable");
  RunState restarted(state_.ref());
  ASSERT_TRUE(restarted.ApplyAll(history_));
  EXPECT_EQ(restarted.FindOperationByStep("s1")->completion_deliveries.count("evt_1"), 1u);
  state_ = restarted;
  EXPECT_EQ(Complete(failure).events, "");  // the same delivery, once more
}

TEST_F(DeciderCompletionTest, ADefinitiveFailureRejects) {
  Start();
  Accept();
  Batch failed = Complete(Failed(OpId(), "evt_1", "account_closed"));
  EXPECT_EQ(failed.events, "CompletionReceived OperationRejected");
  EXPECT_EQ(Op().state, OperationState::kRejected);
}

TEST_F(DeciderCompletionTest, NoCompletionByTheDeadlineIsReconciledNeverRetried) {
  Start();
  Accept();
  now_ = FromMicros(Op().due_at_us);
  Batch due = Decide([&](Decider& d) { return d.Due(OpId()); });
  EXPECT_EQ(due.events, "OutcomeUnknown");
  EXPECT_EQ(std::get<OutcomeUnknown>(due.emitted[0].body).reason, "completion_timeout");
  EXPECT_EQ(Op().state, OperationState::kOutcomeUnknown);
  ASSERT_EQ(due.actions.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<ArmDueAction>(due.actions[0]));
  // A late success is still evidence; a late failure concludes nothing (the lookup will).
  EXPECT_EQ(Complete(Failed(OpId(), "evt_9", "account_closed")).events, "");
  Batch late = Complete(Succeeded(OpId(), "evt_10"));
  EXPECT_EQ(late.events, "CompletionReceived OperationCommitted");
}

TEST_F(DeciderCompletionTest, WithoutALookupAPersonDecides) {
  Start(AsyncContract(ReconcileMode::kNeedsHuman));
  Accept();
  now_ = FromMicros(Op().due_at_us);
  EXPECT_EQ(Decide([&](Decider& d) { return d.Due(OpId()); }).events, "OutcomeUnknown NeedsHuman");
  EXPECT_EQ(Op().state, OperationState::kNeedsHuman);
}

TEST_F(DeciderCompletionTest, ACompletionThatRacesTheAttemptsReplySettlesIt) {
  Start();
  now_ = kT0 + 50ms;
  Batch early = Complete(Succeeded(OpId(), "evt_1"));
  EXPECT_EQ(early.events, "CompletionReceived OperationCommitted");
  now_ = kT0 + 100ms;  // the attempt's "accepted" arrives after: nothing left to learn
  EXPECT_EQ(Decide([&](Decider& d) { return d.AttemptFinished(OpId(), 1, Accepted("po_1")); })
                .events,
            "");
}

TEST_F(DeciderCompletionTest, AcceptedWithoutACompletionPolicyIsAnUnknownOutcome) {
  ToolContract c = AsyncContract();
  c.completion = {};
  Start(c);
  Batch accepted = Decide([&](Decider& d) { return d.AttemptFinished(OpId(), 1, Accepted("x")); });
  EXPECT_EQ(accepted.events, "OutcomeUnknown");
  EXPECT_EQ(std::get<OutcomeUnknown>(accepted.emitted[0].body).reason,
            "accepted_without_completion");
}

TEST_F(DeciderCompletionTest, ARestartKeepsWaitingUntilTheSameDeadline) {
  Start();
  Accept();
  const std::int64_t due = Op().due_at_us;
  RunState restarted(state_.ref());
  ASSERT_TRUE(restarted.ApplyAll(history_));
  state_ = restarted;
  now_ = kT0 + 5s;
  Batch recovered = Decide([](Decider& d) { return d.Recover(); });
  EXPECT_EQ(recovered.events, "");  // not turned into an unknown outcome: nothing was lost
  ASSERT_EQ(recovered.actions.size(), 1u);
  EXPECT_EQ(std::get<ArmDueAction>(recovered.actions[0]).due_at_us, due);
}

TEST_F(DeciderCompletionTest, ACancelMustNotForgetAnAcceptedRequest) {
  Start();
  Accept();
  Batch cancel = Decide([](Decider& d) { return d.Cancel("changed my mind", "alice"); });
  ASSERT_FALSE(cancel.result);
  EXPECT_EQ(cancel.result.error().code(), Errc::kFailedPrecondition);
  EXPECT_EQ(cancel.events, "");
}

TEST_F(DeciderCompletionTest, BadCompletionsAreRefusedAndChangeNothing) {
  Start();
  Batch unknown_op = Complete(Succeeded("op-nope", "evt_1"));
  EXPECT_EQ(unknown_op.result.error().code(), Errc::kNotFound);
  Batch no_delivery = Complete(Succeeded(OpId(), ""));
  EXPECT_EQ(no_delivery.result.error().code(), Errc::kInvalidArgument);
  EXPECT_EQ(unknown_op.events + no_delivery.events, "");
}

TEST_F(DeciderCompletionTest, ASignalWithARequestIdIsAppliedOnce) {
  Start();
  Batch first = Decide([](Decider& d) { return d.Signal("go", "{}", "alice", "req-1"); });
  EXPECT_EQ(first.events, "SignalReceived");
  EXPECT_EQ(std::get<SignalReceived>(first.emitted[0].body).request_id, "req-1");
  EXPECT_EQ(Decide([](Decider& d) { return d.Signal("go", "{}", "alice", "req-1"); }).events, "");
  EXPECT_EQ(Decide([](Decider& d) { return d.Signal("go", "{}", "alice", "req-2"); }).events,
            "SignalReceived");
  // Without a request id every signal counts, as before.
  EXPECT_EQ(Decide([](Decider& d) { return d.Signal("go", "{}", "alice", ""); }).events,
            "SignalReceived");
  EXPECT_EQ(Decide([](Decider& d) { return d.Signal("go", "{}", "alice", ""); }).events,
            "SignalReceived");
  RunState restarted(state_.ref());
  ASSERT_TRUE(restarted.ApplyAll(history_));
  EXPECT_TRUE(restarted.SignalRequestSeen("req-1"));
  EXPECT_FALSE(restarted.SignalRequestSeen(""));
}

}  // namespace
}  // namespace reckon
