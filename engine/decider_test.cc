// The pure decider, alone: no journal, no harness, no clock, no network. Each test builds a
// RunState (by deciding earlier batches, or by folding their events into a fresh state, as a
// restart does), feeds one input at a chosen time, and checks the events and actions of that
// one batch. The class-by-failure table (contract/failure_policy.h) is walked for every
// side-effect class; end-to-end versions of the same table, through a real engine and journal,
// are tests/engine/engine_failure_test.cc and tests/engine/engine_reconcile_test.cc.
#include "reckon/engine/decider.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include <ostream>
#include <string>
#include <vector>

#include "reckon/engine/approval.h"

namespace reckon {
namespace {

using namespace std::chrono_literals;
using namespace storage;
namespace json = boost::json;

constexpr char kTool[] = "tool";
constexpr char kStep[] = "s1";
const TimePoint kT0 = FromMicros(1'700'000'000'000'000);

// attempt_timeout 2s; 3 attempts, backoff 200ms doubling; "rate_limited" is retryable,
// "card_declined" definitive. Writes that reconcile look up with grace 500ms, backoff 1s
// doubling, at most 3 lookups.
ToolContract ContractOf(SideEffect side_effect, bool lookup = true) {
  ToolContract c;
  c.name = kTool;
  c.description = "A tool of class " + std::string(SideEffectName(side_effect)) + ".";
  c.side_effect = side_effect;
  c.attempt_timeout = 2s;
  c.retry = {.max_attempts = 3,
             .backoff = {200ms, 2.0, 5s},
             .retryable_codes = {"rate_limited"},
             .reconcile_on_unknown = side_effect == SideEffect::kNonRepeatableWrite};
  if (side_effect == SideEffect::kDeduplicatedWrite ||
      side_effect == SideEffect::kNonRepeatableWrite) {
    c.reconcile = lookup ? ReconcilePolicy{.mode = ReconcileMode::kLookup, .max_attempts = 3,
                                           .backoff = {1s, 2.0, 30s}, .grace = 500ms}
                         : ReconcilePolicy{.mode = ReconcileMode::kNeedsHuman};
  }
  if (side_effect == SideEffect::kDeduplicatedWrite) c.dedup_window = 60s;
  c.input_schema = json::parse(R"({"type": "object",
      "required": ["amount_cents"], "properties": {"amount_cents": {"type": "integer"}}})");
  c.definitive_codes = {"card_declined"};
  if (IsWrite(side_effect)) c.evidence = "The provider's reference.";
  return c;
}

ToolContract WithApproval(ToolContract c) {
  c.approval = {.kind = ApprovalKind::kAlways, .grant_ttl = 60s};
  return c;
}

AttemptOutcome Failed(FailureKind kind, std::string code) {
  AttemptOutcome outcome;
  outcome.kind = kind;
  outcome.code = std::move(code);
  return outcome;
}

AttemptOutcome Succeeded(std::string provider_ref) {
  AttemptOutcome outcome;
  outcome.success = true;
  outcome.output = json::object{{"ref", provider_ref}};
  outcome.provider_ref = std::move(provider_ref);
  return outcome;
}

// "start_attempt 2 deadline+2000ms", "arm_due+200ms", "cancel_attempt 1", "lookup 1":
// times relative to the batch's `now`.
std::string Describe(const Action& action, TimePoint now) {
  auto after = [&](std::int64_t us) {
    return "+" + std::to_string((FromMicros(us) - now) / 1ms) + "ms";
  };
  return std::visit(
      [&](const auto& a) -> std::string {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, StartAttemptAction>) {
          return "start_attempt " + std::to_string(a.attempt) + " deadline" +
                 after(a.deadline_us);
        } else if constexpr (std::is_same_v<T, CancelAttemptAction>) {
          return "cancel_attempt " + std::to_string(a.attempt);
        } else if constexpr (std::is_same_v<T, StartReconcileAction>) {
          return "lookup " + std::to_string(a.round);
        } else if constexpr (std::is_same_v<T, ArmDueAction>) {
          return "arm_due" + after(a.due_at_us);
        } else if constexpr (std::is_same_v<T, WatchChildAction>) {
          return "watch_child " + a.child_workflow_id;
        } else if constexpr (std::is_same_v<T, CancelChildAction>) {
          return "cancel_child " + a.child_workflow_id;
        } else {
          return "arm_timer " + a.timer_id + after(a.fire_at_us);
        }
      },
      action);
}

// What one batch emitted.
struct Batch {
  Errc error = Errc::kInternal;  // meaningful only when !ok
  bool ok = false;
  std::string events;  // type names in order, space-separated
  std::vector<std::string> actions;
  std::vector<Event> emitted;

  template <class T>
  const T& Only() const {
    const T* found = nullptr;
    for (const Event& e : emitted) {
      if (const T* body = std::get_if<T>(&e.body)) {
        EXPECT_EQ(found, nullptr) << "two " << EventTypeName(e.body) << " in the batch";
        found = body;
      }
    }
    if (found == nullptr) ADD_FAILURE() << "no such event in: " << events;
    static const T kNone{};
    return found ? *found : kNone;
  }
};

class DeciderTest : public ::testing::Test {
 protected:
  // Feeds one input to a Decider over the run's state at `now_`.
  template <class Input>
  Batch Decide(Input input) {
    Decider decider(state_, contracts_, now_);
    Result<void> result = input(decider);
    Batch batch;
    batch.ok = result.has_value();
    if (!batch.ok) batch.error = result.error().code();
    batch.emitted = decider.events();
    for (const Event& e : batch.emitted) {
      batch.events += (batch.events.empty() ? "" : " ") + std::string(EventTypeName(e.body));
      history_.push_back(e);
    }
    for (const Action& a : decider.actions()) batch.actions.push_back(Describe(a, now_));
    return batch;
  }

  void Register(ToolContract contract) { ASSERT_TRUE(contracts_.Register(std::move(contract))); }

  // Starts the run and schedules one call of the tool at kT0.
  Batch StartWithOneCall(std::int64_t amount_cents = 100) {
    now_ = kT0;
    return Decide([&](Decider& d) -> Result<void> {
      RECKON_TRY(d.Start("wf", json::object{}));
      std::vector<Command> commands;
      commands.push_back(
          ScheduleCall{kStep, kTool, json::object{{"amount_cents", amount_cents}}});
      return d.ApplyCommands(std::move(commands));
    });
  }

  OperationRecord& Op() { return *state_.FindOperationByStep(kStep); }
  std::string OpId() { return Op().operation_id; }

  Batch Finish(std::uint32_t attempt, AttemptOutcome outcome) {
    return Decide([&](Decider& d) { return d.AttemptFinished(OpId(), attempt, outcome); });
  }
  Batch Due() {
    return Decide([&](Decider& d) { return d.Due(OpId()); });
  }
  Batch Lookup(std::uint32_t round, ReconcileVerdict verdict) {
    ReconcileOutcome outcome;
    outcome.verdict = verdict;
    if (verdict == ReconcileVerdict::kCommitted) outcome.provider_ref = "ref-found";
    return Decide([&](Decider& d) { return d.ReconcileFinished(OpId(), round, outcome); });
  }
  // Moves the clock to the operation's due time.
  void AtDueTime() { now_ = FromMicros(Op().due_at_us); }

  ContractRegistry contracts_;
  RunState state_{RunRef{"wf-1", "r1"}};
  TimePoint now_ = kT0;
  std::vector<Event> history_;  // every event decided so far, in order
};

// --- the class-by-failure table ----------------------------------------------------------------

struct FailureCase {
  const char* name;
  SideEffect side_effect;
  bool lookup;  // the write's reconcile mode: lookup, else needs_human
  FailureKind kind;
  const char* code;
  std::chrono::milliseconds finished_after;  // since the attempt started
  const char* events;
  std::vector<std::string> actions;
  OperationState state_after;
};

// Names the case in test listings instead of its bytes.
void PrintTo(const FailureCase& c, std::ostream* out) { *out << c.name; }

constexpr auto kRO = SideEffect::kReadOnly;
constexpr auto kIW = SideEffect::kIdempotentWrite;
constexpr auto kDW = SideEffect::kDeduplicatedWrite;
constexpr auto kNR = SideEffect::kNonRepeatableWrite;
constexpr auto kDef = FailureKind::kDefinitive;
constexpr auto kRet = FailureKind::kRetryable;
constexpr auto kUnk = FailureKind::kUnknown;

// Finished 100ms into the attempt unless stated: a lookup then waits for the hard deadline
// (2000ms after the start) plus the grace (500ms), i.e. 2400ms from now.
const FailureCase kFailureCases[] = {
    {"read_only_definitive", kRO, true, kDef, "card_declined", 100ms, "OperationRejected", {},
     OperationState::kRejected},
    {"read_only_retryable", kRO, true, kRet, "rate_limited", 100ms, "AttemptFailedRetryable",
     {"arm_due+200ms"}, OperationState::kRetryScheduled},
    {"read_only_unknown", kRO, true, kUnk, "reply_lost", 100ms, "OutcomeUnknown RetryScheduled",
     {"arm_due+200ms"}, OperationState::kRetryScheduled},
    {"idempotent_definitive", kIW, true, kDef, "card_declined", 100ms, "OperationRejected", {},
     OperationState::kRejected},
    {"idempotent_retryable", kIW, true, kRet, "rate_limited", 100ms, "AttemptFailedRetryable",
     {"arm_due+200ms"}, OperationState::kRetryScheduled},
    {"idempotent_unknown", kIW, true, kUnk, "reply_lost", 100ms, "OutcomeUnknown RetryScheduled",
     {"arm_due+200ms"}, OperationState::kRetryScheduled},
    {"deduplicated_definitive", kDW, true, kDef, "card_declined", 100ms, "OperationRejected", {},
     OperationState::kRejected},
    {"deduplicated_retryable", kDW, true, kRet, "rate_limited", 100ms, "AttemptFailedRetryable",
     {"arm_due+200ms"}, OperationState::kRetryScheduled},
    {"deduplicated_unknown_inside_window", kDW, true, kUnk, "reply_lost", 100ms,
     "OutcomeUnknown RetryScheduled", {"arm_due+200ms"}, OperationState::kRetryScheduled},
    // A retry would reach the provider after it forgot the key: treated as non-repeatable.
    {"deduplicated_unknown_past_window", kDW, true, kUnk, "reply_lost", 120s, "OutcomeUnknown",
     {"arm_due+500ms"}, OperationState::kOutcomeUnknown},
    {"non_repeatable_definitive", kNR, true, kDef, "card_declined", 100ms, "OperationRejected",
     {}, OperationState::kRejected},
    {"non_repeatable_retryable_listed", kNR, true, kRet, "rate_limited", 100ms,
     "AttemptFailedRetryable", {"arm_due+200ms"}, OperationState::kRetryScheduled},
    // "Retryable" with a code the contract does not list might have been processed.
    {"non_repeatable_retryable_unlisted", kNR, true, kRet, "server_busy", 100ms,
     "OutcomeUnknown", {"arm_due+2400ms"}, OperationState::kOutcomeUnknown},
    {"non_repeatable_unknown_with_lookup", kNR, true, kUnk, "reply_lost", 100ms,
     "OutcomeUnknown", {"arm_due+2400ms"}, OperationState::kOutcomeUnknown},
    // A person is asked only once the attempt can no longer land (decision 50): at the hard
    // deadline (this contract has no grace), 1900ms from now.
    {"non_repeatable_unknown_without_lookup", kNR, false, kUnk, "reply_lost", 100ms,
     "OutcomeUnknown", {"arm_due+1900ms"}, OperationState::kOutcomeUnknown},
};

class FailureTableTest : public DeciderTest,
                         public ::testing::WithParamInterface<FailureCase> {};

TEST_P(FailureTableTest, FirstAttemptFails) {
  const FailureCase& c = GetParam();
  Register(ContractOf(c.side_effect, c.lookup));
  Batch start = StartWithOneCall();
  ASSERT_TRUE(start.ok);
  EXPECT_EQ(start.events, "WorkflowStarted OperationPrepared AttemptStarted");
  EXPECT_EQ(start.actions,
            (std::vector<std::string>{"start_attempt 1 deadline+2000ms", "arm_due+2000ms"}));
  EXPECT_EQ(start.Only<OperationPrepared>().side_effect, c.side_effect);

  now_ = kT0 + c.finished_after;
  Batch failed = Finish(1, Failed(c.kind, c.code));
  ASSERT_TRUE(failed.ok);
  EXPECT_EQ(failed.events, c.events);
  EXPECT_EQ(failed.actions, c.actions);
  EXPECT_EQ(Op().state, c.state_after) << OperationStateName(Op().state);
  if (c.state_after == OperationState::kRetryScheduled) {
    // The retry starts at its due time, with the same operation id and the next attempt.
    AtDueTime();
    Batch retry = Due();
    ASSERT_TRUE(retry.ok);
    EXPECT_EQ(retry.events, "AttemptStarted");
    EXPECT_EQ(retry.Only<AttemptStarted>().attempt, 2u);
    EXPECT_EQ(retry.Only<AttemptStarted>().operation_id, OpId());
  }
  if (std::string(c.events).find("RetryScheduled") != std::string::npos) {
    EXPECT_EQ(failed.Only<RetryScheduled>().reason, RetryReason::kUnknownOutcome);
  }
  if (c.state_after == OperationState::kOutcomeUnknown && !c.lookup) {
    AtDueTime();
    Batch parked = Due();
    ASSERT_TRUE(parked.ok);
    EXPECT_EQ(parked.events, "NeedsHuman");
    EXPECT_EQ(Op().state, OperationState::kNeedsHuman);
  }
}

INSTANTIATE_TEST_SUITE_P(EachClassEachFailure, FailureTableTest,
                         ::testing::ValuesIn(kFailureCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST_F(DeciderTest, SuccessCommitsFromTheAttempt) {
  Register(ContractOf(kNR));
  ASSERT_TRUE(StartWithOneCall().ok);
  now_ = kT0 + 100ms;
  Batch done = Finish(1, Succeeded("ref-1"));
  ASSERT_TRUE(done.ok);
  EXPECT_EQ(done.events, "OperationCommitted");
  EXPECT_EQ(done.Only<OperationCommitted>().source, CommitSource::kAttempt);
  EXPECT_EQ(Op().provider_ref, "ref-1");
  EXPECT_TRUE(done.actions.empty());
}

TEST_F(DeciderTest, RetriesRunOutIntoARejection) {
  Register(ContractOf(kIW));
  ASSERT_TRUE(StartWithOneCall().ok);
  for (std::uint32_t attempt = 1; attempt < 3; ++attempt) {
    ASSERT_EQ(Finish(attempt, Failed(kRet, "rate_limited")).events, "AttemptFailedRetryable");
    AtDueTime();
    ASSERT_EQ(Due().events, "AttemptStarted");
  }
  Batch last = Finish(3, Failed(kRet, "rate_limited"));
  EXPECT_EQ(last.events, "OperationRejected");
  EXPECT_EQ(Op().state, OperationState::kRejected);
}

// --- due times -----------------------------------------------------------------------------

TEST_F(DeciderTest, HardDeadlineCancelsTheAttemptAndCountsAsUnknown) {
  Register(ContractOf(kNR));
  ASSERT_TRUE(StartWithOneCall().ok);
  now_ = kT0 + 1999ms;
  Batch early = Due();
  EXPECT_TRUE(early.ok);
  EXPECT_EQ(early.events, "");  // not due yet: a stale wake-up changes nothing
  EXPECT_TRUE(early.actions.empty());

  AtDueTime();
  Batch due = Due();
  ASSERT_TRUE(due.ok);
  EXPECT_EQ(due.events, "OutcomeUnknown");
  EXPECT_EQ(due.Only<OutcomeUnknown>().reason, "deadline_exceeded");
  EXPECT_EQ(due.actions, (std::vector<std::string>{"cancel_attempt 1", "arm_due+500ms"}));
}

TEST_F(DeciderTest, LateCompletionOfAnAbandonedAttemptProvesTheCommit) {
  Register(ContractOf(kNR));
  ASSERT_TRUE(StartWithOneCall().ok);
  AtDueTime();
  ASSERT_EQ(Due().events, "OutcomeUnknown");
  now_ += 10ms;
  // A failure from the abandoned attempt proves nothing ...
  Batch stale = Finish(1, Failed(kDef, "card_declined"));
  EXPECT_TRUE(stale.ok);
  EXPECT_EQ(stale.events, "");
  // ... but its success proves the effect exists.
  Batch late = Finish(1, Succeeded("ref-late"));
  ASSERT_TRUE(late.ok);
  EXPECT_EQ(late.events, "OperationCommitted");
  EXPECT_EQ(late.Only<OperationCommitted>().source, CommitSource::kLateCompletion);
  EXPECT_EQ(Op().state, OperationState::kCommitted);
}

// Found by the simulator (tests/sim/, seed 3): an operation settled by other evidence while its
// latest attempt still ran; at that attempt's deadline the attempt is stopped too, or the
// engine would wait on it (and keep the run) forever.
TEST_F(DeciderTest, AnAttemptStillRunningAfterItsOperationSettledStopsAtItsDeadline) {
  Register(ContractOf(kDW));
  ASSERT_TRUE(StartWithOneCall().ok);
  now_ = kT0 + 100ms;
  ASSERT_EQ(Finish(1, Failed(kUnk, "reply_lost")).events, "OutcomeUnknown RetryScheduled");
  AtDueTime();
  ASSERT_EQ(Due().events, "AttemptStarted");
  const TimePoint second_deadline = FromMicros(Op().deadline_us);
  now_ += 10ms;
  Batch late = Finish(1, Succeeded("ref-late"));  // the first attempt did land
  ASSERT_EQ(late.events, "OperationCommitted");
  now_ = second_deadline;
  Batch due = Due();
  ASSERT_TRUE(due.ok);
  EXPECT_EQ(due.events, "");
  EXPECT_EQ(due.actions, (std::vector<std::string>{"cancel_attempt 2"}));
}

// Found by the simulator (seed 810): a deduplicated write retrying after an unknown outcome
// may have acted; a cancel that rejected it left the journal saying "rejected" for a payment
// the provider held. The cancel is refused until the retry settles the outcome.
TEST_F(DeciderTest, CancelWaitsForTheRetryOfAnUnknownOutcome) {
  Register(ContractOf(kDW));
  ASSERT_TRUE(StartWithOneCall().ok);
  now_ = kT0 + 100ms;
  ASSERT_EQ(Finish(1, Failed(kUnk, "reply_lost")).events, "OutcomeUnknown RetryScheduled");
  Batch refused = Decide([](Decider& d) { return d.Cancel("changed my mind", "bob"); });
  EXPECT_FALSE(refused.ok);
  EXPECT_EQ(refused.error, Errc::kFailedPrecondition);
  EXPECT_EQ(refused.events, "");
  EXPECT_EQ(Op().state, OperationState::kRetryScheduled);

  // The retry, with the same key, settles whether the effect exists.
  AtDueTime();
  ASSERT_EQ(Due().events, "AttemptStarted");
  now_ += 10ms;
  ASSERT_EQ(Finish(2, Succeeded("ref-1")).events, "OperationCommitted");
}

// --- lookups ---------------------------------------------------------------------------------

class LookupTest : public DeciderTest {
 protected:
  // A non_repeatable_write whose first attempt ended unknown, now reconciling round 1.
  void SetUp() override {
    Register(ContractOf(kNR));
    ASSERT_TRUE(StartWithOneCall().ok);
    now_ = kT0 + 100ms;
    ASSERT_EQ(Finish(1, Failed(kUnk, "reply_lost")).events, "OutcomeUnknown");
    AtDueTime();
    Batch started = Due();
    ASSERT_EQ(started.events, "ReconciliationStarted");
    ASSERT_EQ(started.actions, (std::vector<std::string>{"lookup 1"}));
  }
};

TEST_F(LookupTest, CommittedSettlesTheOperation) {
  Batch b = Lookup(1, ReconcileVerdict::kCommitted);
  ASSERT_TRUE(b.ok);
  EXPECT_EQ(b.events, "ReconciliationResult OperationCommitted");
  EXPECT_EQ(b.Only<ReconciliationResult>().result, ReconcileVerdict::kCommitted);
  EXPECT_EQ(b.Only<OperationCommitted>().source, CommitSource::kReconciliation);
  EXPECT_EQ(Op().provider_ref, "ref-found");
  EXPECT_EQ(Op().state, OperationState::kCommitted);
}

TEST_F(LookupTest, NotFoundAuthorizesExactlyOneNewAttempt) {
  Batch b = Lookup(1, ReconcileVerdict::kNotFound);
  ASSERT_TRUE(b.ok);
  EXPECT_EQ(b.events, "ReconciliationResult RetryScheduled AttemptStarted");
  EXPECT_EQ(b.Only<ReconciliationResult>().result, ReconcileVerdict::kNotFound);
  EXPECT_EQ(b.Only<RetryScheduled>().reason, RetryReason::kReconciledNotFound);
  EXPECT_EQ(b.actions,
            (std::vector<std::string>{"start_attempt 2 deadline+2000ms", "arm_due+2000ms"}));
  EXPECT_FALSE(Op().earlier_outcome_unknown);  // proven absent
}

TEST_F(LookupTest, StillUnknownLooksAgainThenNeedsAPerson) {
  Batch b = Lookup(1, ReconcileVerdict::kStillUnknown);
  ASSERT_TRUE(b.ok);
  EXPECT_EQ(b.events, "ReconciliationResult");
  EXPECT_EQ(b.Only<ReconciliationResult>().result, ReconcileVerdict::kStillUnknown);
  EXPECT_EQ(b.actions, (std::vector<std::string>{"arm_due+1000ms"}));
  EXPECT_EQ(Op().state, OperationState::kOutcomeUnknown);
  for (std::uint32_t round = 2; round <= 3; ++round) {
    AtDueTime();
    ASSERT_EQ(Due().actions, (std::vector<std::string>{"lookup " + std::to_string(round)}));
    Batch again = Lookup(round, ReconcileVerdict::kStillUnknown);
    ASSERT_TRUE(again.ok);
    EXPECT_EQ(again.events,
              round < 3 ? "ReconciliationResult" : "ReconciliationResult NeedsHuman");
  }
  EXPECT_EQ(Op().state, OperationState::kNeedsHuman);
}

TEST_F(LookupTest, AnAnswerToAnOlderRoundIsMoot) {
  Batch b = Lookup(7, ReconcileVerdict::kCommitted);
  EXPECT_TRUE(b.ok);
  EXPECT_EQ(b.events, "");
  EXPECT_EQ(Op().state, OperationState::kReconciling);
}

TEST_F(DeciderTest, NotFoundWithNoAttemptLeftRejects) {
  ToolContract c = ContractOf(kNR);
  c.retry.max_attempts = 1;
  Register(c);
  ASSERT_TRUE(StartWithOneCall().ok);
  ASSERT_EQ(Finish(1, Failed(kUnk, "reply_lost")).events, "OutcomeUnknown");
  AtDueTime();
  ASSERT_EQ(Due().events, "ReconciliationStarted");
  Batch b = Lookup(1, ReconcileVerdict::kNotFound);
  EXPECT_EQ(b.events, "ReconciliationResult OperationRejected");
  EXPECT_EQ(b.Only<OperationRejected>().code, "attempts_exhausted");
}

// --- a person decides --------------------------------------------------------------------------

class ResolutionTest : public DeciderTest {
 protected:
  // A non_repeatable_write without a lookup whose first attempt ended unknown.
  void SetUp() override {
    Register(ContractOf(kNR, /*lookup=*/false));
    ASSERT_TRUE(StartWithOneCall().ok);
    ASSERT_EQ(Finish(1, Failed(kUnk, "reply_lost")).events, "OutcomeUnknown");
    AtDueTime();  // a person is asked once the attempt can no longer land (decision 50)
    ASSERT_EQ(Due().events, "NeedsHuman");
  }
  Batch Resolve(bool committed, std::string provider_ref) {
    HumanResolution r{OpId(), committed, std::move(provider_ref), "carol", "checked"};
    return Decide([&](Decider& d) { return d.Resolve(r); });
  }
};

TEST_F(ResolutionTest, CommittedNeedsEvidence) {
  Batch refused = Resolve(true, "");
  EXPECT_FALSE(refused.ok);
  EXPECT_EQ(refused.error, Errc::kInvalidArgument);
  EXPECT_EQ(refused.events, "");

  Batch b = Resolve(true, "ref-9");
  ASSERT_TRUE(b.ok);
  EXPECT_EQ(b.events, "HumanResolved OperationCommitted");
  EXPECT_EQ(b.Only<OperationCommitted>().source, CommitSource::kHuman);
  EXPECT_EQ(Op().provider_ref, "ref-9");
}

TEST_F(ResolutionTest, NotCommittedStartsTheNextAttempt) {
  Batch b = Resolve(false, "");
  ASSERT_TRUE(b.ok);
  EXPECT_EQ(b.events, "HumanResolved RetryScheduled AttemptStarted");
  EXPECT_EQ(b.Only<RetryScheduled>().reason, RetryReason::kHumanNotCommitted);
  EXPECT_EQ(b.Only<AttemptStarted>().attempt, 2u);
}

// --- approval binding ----------------------------------------------------------------------

class ApprovalTest : public DeciderTest {
 protected:
  void SetUp() override {
    Register(WithApproval(ContractOf(kNR)));
    Batch start = StartWithOneCall();
    ASSERT_EQ(start.events, "WorkflowStarted OperationPrepared ApprovalRequested");
    ASSERT_TRUE(start.actions.empty());  // no attempt, and no approval deadline
  }
  Batch Approve(std::string intent_hash, bool granted = true) {
    ApprovalDecision decision{Op().approval_id, "", std::move(intent_hash), granted, "alice",
                              granted ? "" : "too much"};
    return Decide([&](Decider& d) { return d.ApprovalDecided(decision); });
  }
};

TEST_F(ApprovalTest, AGrantForTheReviewedIntentStartsTheAttempt) {
  EXPECT_EQ(Op().approval_state, ApprovalState::kRequested);
  now_ = kT0 + 5s;
  Batch b = Approve(Op().intent_hash);
  ASSERT_TRUE(b.ok);
  EXPECT_EQ(b.events, "ApprovalGranted AttemptStarted");
  EXPECT_EQ(b.Only<ApprovalGranted>().intent_hash, Op().intent_hash);
  EXPECT_EQ(FromMicros(b.Only<ApprovalGranted>().expires_at_us), now_ + 60s);
  EXPECT_EQ(b.Only<AttemptStarted>().approval_id, Op().approval_id);
  EXPECT_EQ(Op().approval_state, ApprovalState::kGranted);
}

TEST_F(ApprovalTest, AChangedIntentNeedsANewReview) {
  Batch b = Approve(std::string(64, '0'));
  EXPECT_FALSE(b.ok);
  EXPECT_EQ(b.error, Errc::kPermissionDenied);
  EXPECT_EQ(b.events, "");
  EXPECT_EQ(Op().state, OperationState::kAwaitingApproval);
}

TEST_F(ApprovalTest, ADenialRejectsTheOperation) {
  Batch b = Approve(Op().intent_hash, /*granted=*/false);
  ASSERT_TRUE(b.ok);
  EXPECT_EQ(b.events, "ApprovalDenied");
  EXPECT_EQ(Op().state, OperationState::kRejected);
  EXPECT_EQ(Op().approval_state, ApprovalState::kDenied);
}

TEST_F(ApprovalTest, ARetryReusesALiveGrantAndAsksAgainOnceItExpired) {
  ASSERT_TRUE(Approve(Op().intent_hash).ok);
  // Inside the grant's life: the retry consumes the same grant.
  now_ = kT0 + 100ms;
  ASSERT_EQ(Finish(1, Failed(kRet, "rate_limited")).events, "AttemptFailedRetryable");
  AtDueTime();
  Batch reused = Due();
  EXPECT_EQ(reused.events, "AttemptStarted");
  EXPECT_EQ(reused.Only<AttemptStarted>().approval_id, Op().approval_id);
  // Past it: the next retry waits for a new approval instead of starting.
  ASSERT_EQ(Finish(2, Failed(kRet, "rate_limited")).events, "AttemptFailedRetryable");
  const std::string first_approval = Op().approval_id;
  now_ = kT0 + 61s;
  Batch expired = Due();
  ASSERT_TRUE(expired.ok);
  EXPECT_EQ(expired.events, "ApprovalRequested");
  EXPECT_NE(Op().approval_id, first_approval);
  EXPECT_EQ(Op().state, OperationState::kAwaitingApproval);
}

TEST(GrantTest, BindsOperationIntentAndTime) {
  const ApprovalGrant grant{"ap-1", "op-1", "hash-a", "alice", kT0 + 60s};
  EXPECT_TRUE(CheckGrant(grant, "op-1", "hash-a", kT0));
  auto other_op = CheckGrant(grant, "op-2", "hash-a", kT0);
  ASSERT_FALSE(other_op);
  EXPECT_EQ(other_op.error().code(), Errc::kPermissionDenied);
  auto changed = CheckGrant(grant, "op-1", "hash-b", kT0);
  ASSERT_FALSE(changed);
  EXPECT_NE(changed.error().message().find("input changed"), std::string::npos);
  auto expired = CheckGrant(grant, "op-1", "hash-a", kT0 + 60s + 1500ms);
  ASSERT_FALSE(expired);
  EXPECT_NE(expired.error().message().find("expired 1500 ms ago"), std::string::npos);
}

// --- restart ---------------------------------------------------------------------------------

// The state a restart rebuilds: a fresh RunState folded from the history so far.
class RestartTest : public DeciderTest {
 protected:
  void Restart() {
    RunState rebuilt(state_.ref());
    ASSERT_TRUE(rebuilt.ApplyAll(history_));
    state_ = std::move(rebuilt);
  }
  Batch Recover() {
    return Decide([](Decider& d) { return d.Recover(); });
  }
};

TEST_F(RestartTest, AnAttemptInFlightOfAWriteIsReconciledNeverRepeated) {
  Register(ContractOf(kNR));
  ASSERT_TRUE(StartWithOneCall().ok);
  Restart();
  now_ = kT0 + 3s;  // past the attempt's hard deadline
  Batch b = Recover();
  ASSERT_TRUE(b.ok);
  EXPECT_EQ(b.events, "OutcomeUnknown");
  EXPECT_EQ(b.Only<OutcomeUnknown>().reason, "engine_restart");
  EXPECT_EQ(b.actions, (std::vector<std::string>{"arm_due+500ms"}));
}

TEST_F(RestartTest, AnAttemptInFlightOfAReadIsRetried) {
  Register(ContractOf(kRO));
  ASSERT_TRUE(StartWithOneCall().ok);
  Restart();
  now_ = kT0 + 3s;
  Batch b = Recover();
  ASSERT_TRUE(b.ok);
  EXPECT_EQ(b.events, "OutcomeUnknown RetryScheduled");
  EXPECT_EQ(b.actions, (std::vector<std::string>{"arm_due+200ms"}));
}

TEST_F(RestartTest, WaitingOperationsAreReArmedWithoutNewEvents) {
  Register(ContractOf(kIW));
  ASSERT_TRUE(StartWithOneCall().ok);
  now_ = kT0 + 100ms;
  ASSERT_EQ(Finish(1, Failed(kRet, "rate_limited")).events, "AttemptFailedRetryable");
  Restart();
  Batch b = Recover();
  ASSERT_TRUE(b.ok);
  EXPECT_EQ(b.events, "");
  EXPECT_EQ(b.actions, (std::vector<std::string>{"arm_due+200ms"}));
  EXPECT_EQ(Op().state, OperationState::kRetryScheduled);
}

TEST_F(RestartTest, TheFoldedStateMatchesTheDecidedOne) {
  Register(ContractOf(kNR));
  ASSERT_TRUE(StartWithOneCall().ok);
  now_ = kT0 + 100ms;
  ASSERT_TRUE(Finish(1, Failed(kUnk, "reply_lost")).ok);
  const OperationRecord decided = Op();
  Restart();
  EXPECT_EQ(Op().state, decided.state);
  EXPECT_EQ(Op().due_at_us, decided.due_at_us);
  EXPECT_EQ(Op().side_effect, SideEffect::kNonRepeatableWrite);
  EXPECT_TRUE(Op().earlier_outcome_unknown);
  EXPECT_EQ(state_.status(), RunStatus::kRunning);
}

}  // namespace
}  // namespace reckon
