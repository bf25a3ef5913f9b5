#include "reckon/engine/decider.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "reckon/base/identifier.h"
#include "reckon/base/intent_hash.h"
#include "reckon/engine/may_have_acted.h"
#include "reckon/base/jcs.h"
#include "reckon/engine/approval.h"
#include "reckon/contract/failure_policy.h"
#include "reckon/contract/secret_fields.h"
#include "reckon/engine/operation_id.h"
#include "reckon/engine/outbox_message.h"
#include "reckon/engine/run_timeout.h"
#include "reckon/engine/tool_report.h"

namespace reckon {

using namespace storage;
namespace json = boost::json;

namespace {

bool IsWorkflowNews(const EventBody& body) {
  return std::holds_alternative<WorkflowStarted>(body) ||
         std::holds_alternative<OperationCommitted>(body) ||
         std::holds_alternative<OperationRejected>(body) ||
         std::holds_alternative<ApprovalDenied>(body) ||
         std::holds_alternative<TimerFired>(body) ||
         std::holds_alternative<SignalReceived>(body) ||
         std::holds_alternative<ChildWorkflowClosed>(body) ||
         std::holds_alternative<UpdateAccepted>(body) ||
         std::holds_alternative<WorkflowCancelRequested>(body);
}

}  // namespace

Decider::Decider(RunState& state, const ContractRegistry& contracts, TimePoint now,
                 DeciderOptions options)
    : state_(state),
      contracts_(contracts),
      now_(now),
      options_(std::move(options)),
      status_before_(state.status()) {}

Result<void> Decider::Emit(EventBody body) {
  Event event{state_.next_seq(), ToMicros(now_), std::move(body)};
  RECKON_TRY(state_.Apply(event));
  std::visit(
      [&](const auto& e) {
        if constexpr (requires { e.operation_id; }) touched_operations_.insert(e.operation_id);
      },
      event.body);
  if (auto* t = std::get_if<TimerStarted>(&event.body)) timers_set_.insert(t->timer_id);
  if (auto* t = std::get_if<TimerFired>(&event.body)) {
    timers_set_.erase(t->timer_id);
    timers_cleared_.insert(t->timer_id);
  }
  events_.push_back(std::move(event));
  return Ok();
}

bool Decider::HasWorkflowNews(std::size_t from) const {
  for (std::size_t i = from; i < events_.size(); ++i) {
    if (IsWorkflowNews(events_[i].body)) return true;
  }
  return false;
}

const RegisteredContract* Decider::ContractOf(const OperationRecord& op) const {
  const RegisteredContract* registered = contracts_.FindRegistered(op.tool);
  if (registered == nullptr ||
      (op.max_attempts_override == 0 && !op.require_approval_override)) {
    return registered;
  }
  // The call tightened its contract: decide with a stricter copy, built once per batch.
  auto cached = tightened_.find(op.operation_id);
  if (cached != tightened_.end()) return &cached->second;
  ToolContract contract = registered->contract();
  if (op.max_attempts_override > 0) {
    contract.retry.max_attempts =
        std::min(contract.retry.max_attempts, static_cast<int>(op.max_attempts_override));
  }
  if (op.require_approval_override) {
    contract.approval.kind = ApprovalKind::kAlways;
    contract.approval.when.clear();
    if (contract.approval.grant_ttl.count() == 0) contract.approval.grant_ttl = std::chrono::hours(1);
  }
  auto created = RegisteredContract::Create(std::move(contract));
  if (!created) {
    // Never fall back to the looser contract: the operation cannot be decided.
    spdlog::error("tightened contract of {} refused: {}", op.operation_id,
                  created.error().ToString());
    return nullptr;
  }
  return &tightened_.emplace(op.operation_id, std::move(created).value()).first->second;
}

Result<json::value> Decider::InputOf(const OperationRecord& op) const {
  if (op.input) return *op.input;
  return Err(Errc::kFailedPrecondition,
             "operation '" + op.operation_id + "' (step '" + op.step_id +
                 "') has no input in memory: the workflow has not replayed this step yet");
}

SecretRedactor Decider::RedactorFor(const OperationRecord& op) const {
  const ToolContract* contract = contracts_.Find(op.tool);
  if (contract == nullptr) return SecretRedactor{};
  return CallRedactor(*contract, op.input ? &*op.input : nullptr);
}

// --- workflow lifecycle ------------------------------------------------------------------

Result<void> Decider::Start(const std::string& workflow_type, const json::value& input,
                            const std::string& definition_hash, const std::string& started_by,
                            std::chrono::milliseconds run_timeout) {
  if (state_.started()) {
    return Err(Errc::kAlreadyExists, "run '" + state_.ref().workflow_id + "' already started");
  }
  RECKON_TRY(std::string canonical, CanonicalizeJson(input));
  WorkflowStarted started{workflow_type, std::move(canonical), definition_hash, started_by,
                          kRunScopedIds, options_.id_namespace, ""};
  if (run_timeout.count() > 0) {
    started.run_deadline_us = ToMicros(now_ + run_timeout);
    started.run_timeout_ms = run_timeout.count();
    actions_.push_back(
        ArmWorkflowTimerAction{std::string(kRunTimeoutTimer), started.run_deadline_us});
  }
  return Emit(std::move(started));
}

Result<void> Decider::ApplyCommands(std::vector<Command> commands) {
  for (Command& command : commands) {
    if (state_.terminal()) {
      return Err(Errc::kNondeterminism, "run '" + state_.ref().workflow_id +
                                            "' issued a command after it finished");
    }
    Result<void> applied = std::visit(
        [&](auto& c) -> Result<void> {
          using T = std::decay_t<decltype(c)>;
          if constexpr (std::is_same_v<T, ScheduleCall>) {
            return c.replayed ? ReplayCall(std::move(c)) : ScheduleNewCall(std::move(c));
          } else if constexpr (std::is_same_v<T, StartTimer>) {
            RECKON_TRY(Emit(TimerStarted{c.timer_id, c.fire_at_us}));
            actions_.push_back(ArmWorkflowTimerAction{c.timer_id, c.fire_at_us});
            return Ok();
          } else if constexpr (std::is_same_v<T, RecordMarker>) {
            if (c.kind == kPublishMarker) {
              RECKON_TRY(DecodePublishMarker(c.value_json));  // becomes an outbox row
            }
            return Emit(MarkerRecorded{c.step_id, c.kind, c.value_json});
          } else if constexpr (std::is_same_v<T, CompleteWorkflow>) {
            RECKON_TRY(CloseOpenUpdates("completed"));
            return EmitClose(WorkflowCompleted{c.result_json});
          } else if constexpr (std::is_same_v<T, ContinueAsNew>) {
            RECKON_TRY(CloseOpenUpdates("continued as new"));
            return Continue(std::move(c));
          } else if constexpr (std::is_same_v<T, StartChild>) {
            return StartChildWorkflow(std::move(c));
          } else if constexpr (std::is_same_v<T, CompleteUpdate>) {
            return FinishUpdate(std::move(c));
          } else {
            if (c.code == kWorkflowCancelledCode && state_.cancel_requested()) {
              RECKON_TRY(CloseOpenUpdates("cancelled"));
              return EmitClose(WorkflowCancelled{});
            }
            RECKON_TRY(CloseOpenUpdates("failed"));
            return EmitClose(WorkflowFailed{c.code, c.message});
          }
        },
        command);
    RECKON_TRY(applied);
  }
  return Ok();
}

// The code checked its own calls (WorkflowContext::ContinueAsNew); this checks the journal's
// operations too, since a new run must never forget an effect that may be happening.
Result<void> Decider::Continue(ContinueAsNew command) {
  std::string open;
  for (const auto& [id, op] : state_.operations()) {
    if (IsTerminal(op.state)) continue;
    open += (open.empty() ? "" : ", ") + id + " (step '" + op.step_id + "', " +
            std::string(OperationStateName(op.state)) + ")";
  }
  if (!open.empty()) {
    return EmitClose(WorkflowFailed{
        "continue_as_new_refused",
        "the run cannot continue as new while operations are not terminal: " + open +
            "; await their results before ctx.ContinueAsNew"});
  }
  auto parsed = ParseStrictJson(command.input_json);
  if (!parsed) {
    return EmitClose(WorkflowFailed{"invalid_input",
                                    "the input of ctx.ContinueAsNew is not JSON: " +
                                        parsed.error().message()});
  }
  // A run id of its own: the time of the batch and a digest of the run it continues, so that
  // no two runs of a chain share one even when the clock stands still (a test's clock).
  const RunRef& ref = state_.ref();
  const std::string next_id =
      "r" + std::to_string(ToMicros(now_)) + "-" + ToHex(Sha256(ref.run_id)).substr(0, 8);
  const std::int64_t now_us = ToMicros(now_);
  NextRun next{RunRef{ref.workflow_id, next_id}, state_.workflow_type(), {}};
  std::int64_t seq = 1;
  WorkflowStarted next_start{state_.workflow_type(), command.input_json,
                             state_.definition_hash(), state_.started_by(),
                             kRunScopedIds, options_.id_namespace, ref.run_id,
                             state_.parent_workflow_id(), state_.parent_run_id(),
                             state_.parent_close_policy()};
  if (state_.run_timeout_ms() > 0) {  // the next run gets the same timeout from its start
    next_start.run_timeout_ms = state_.run_timeout_ms();
    next_start.run_deadline_us = now_us + state_.run_timeout_ms() * 1000;
  }
  next.events.push_back(Event{seq++, now_us, std::move(next_start)});
  for (CarriedSignal& signal : command.signals) {
    next.events.push_back(Event{seq++, now_us,
                                SignalReceived{std::move(signal.name),
                                               std::move(signal.payload_json),
                                               std::move(signal.sent_by)}});
  }
  // The timers the run leaves behind will never fire for it.
  for (const auto& [timer_id, fire_at] : state_.pending_timers()) {
    timers_set_.erase(timer_id);
    timers_cleared_.insert(timer_id);
  }
  RECKON_TRY(EmitClose(WorkflowContinuedAsNew{next_id, command.input_json}));
  next_run_ = std::move(next);
  return Ok();
}

Result<void> Decider::ScheduleNewCall(ScheduleCall call) {
  if (state_.FindOperationByStep(call.step_id) != nullptr) {
    return Err(Errc::kNondeterminism, "step '" + call.step_id + "' of run '" +
                                          state_.ref().workflow_id +
                                          "' was issued twice; step ids must be unique");
  }
  const std::string operation_id = OperationIdFor(state_.id_scope(), call.step_id);
  const RegisteredContract* contract = contracts_.FindRegistered(call.tool);
  if (contract == nullptr) {
    RECKON_TRY(Emit(OperationPrepared{call.step_id, operation_id, call.tool, "", "",
                                      SideEffect::kNonRepeatableWrite, "null"}));
    return Emit(OperationRejected{operation_id, 0, "unknown_tool",
                                  "no tool '" + call.tool + "' is registered"});
  }
  const ToolContract& c = contract->contract();
  // The journal's copy of the input (canonical JSON without secret fields) is exactly what the
  // intent hash hashes, so it is canonicalized once and hashed directly.
  auto canonical = CanonicalizeJson(RemoveSecretFields(call.input, c.secret_fields));
  std::string redacted = canonical ? canonical.value() : std::string("null");
  Result<void> valid = contract->ValidateInput(call.input);
  if (!valid || !canonical) {
    RECKON_TRY(Emit(OperationPrepared{call.step_id, operation_id, call.tool, contract->hash(), "",
                                      c.side_effect, redacted}));
    const Error& error = !valid ? valid.error() : canonical.error();
    return Emit(OperationRejected{operation_id, 0, "invalid_input", error.message()});
  }
  RECKON_TRY(Emit(OperationPrepared{call.step_id, operation_id, call.tool, contract->hash(),
                                    ToHex(Sha256(redacted)), c.side_effect, redacted,
                                    call.overrides.max_attempts,
                                    call.overrides.require_approval}));
  OperationRecord* op = state_.FindOperation(operation_id);
  op->input = std::move(call.input);
  return StartNextAttempt(*op);  // refused past the run's deadline (engine/run_timeout.h)
}

Result<void> Decider::ReplayCall(ScheduleCall call) {
  OperationRecord* op = state_.FindOperationByStep(call.step_id);
  if (op == nullptr) {
    return Err(Errc::kNondeterminism, "step '" + call.step_id + "' was replayed but run '" +
                                          state_.ref().workflow_id + "' has no such step");
  }
  if (op->tool != call.tool) {
    return Err(Errc::kNondeterminism,
               "step '" + call.step_id + "' of run '" + state_.ref().workflow_id + "' calls '" +
                   call.tool + "', but the history records a call to '" + op->tool +
                   "'; the workflow code changed incompatibly");
  }
  if (call.overrides.max_attempts != op->max_attempts_override ||
      call.overrides.require_approval != op->require_approval_override) {
    return Err(Errc::kNondeterminism,
               "step '" + call.step_id + "' of run '" + state_.ref().workflow_id +
                   "' was called with other contract overrides than the history records");
  }
  if (const RegisteredContract* contract = ContractOf(*op); contract && !op->intent_hash.empty()) {
    // The recorded input passed the schema when it was prepared; a changed input shows as a
    // changed hash, so the schema is not checked again here.
    auto hash = IntentHash(call.input, contract->contract().secret_fields);
    if (!hash || hash.value() != op->intent_hash) {
      return Err(Errc::kNondeterminism,
                 "step '" + call.step_id + "' of run '" + state_.ref().workflow_id +
                     "' was called with a different input than the history records (intent " +
                     op->intent_hash.substr(0, 12) + "...); the workflow code is not deterministic");
    }
  }
  op->input = std::move(call.input);
  return Ok();
}

// --- attempts ------------------------------------------------------------------------------

Result<void> Decider::RequestApproval(OperationRecord& op) {
  const std::string approval_id = ApprovalIdFor(op.operation_id, int(op.approval_requests) + 1);
  std::optional<TimePoint> deadline;
  if (const RegisteredContract* contract = ContractOf(op);
      contract && contract->contract().approval.wait_deadline) {
    deadline = now_ + *contract->contract().approval.wait_deadline;
  }
  RECKON_TRY(Emit(ApprovalRequested{op.operation_id, approval_id, op.intent_hash,
                                    deadline ? ToMicros(*deadline) : 0}));
  if (deadline) actions_.push_back(ArmDueAction{op.operation_id, ToMicros(*deadline)});
  return Ok();
}

Result<void> Decider::StartNextAttempt(OperationRecord& op) {
  if (RunDeadlinePassed() && !MayHaveActed(op)) {
    // No attempt starts past the run's deadline, unless it retries one whose outcome is
    // unknown with the same key: rejecting it could forget an effect that exists.
    return RejectForRunTimeout(op);
  }
  const RegisteredContract* contract = ContractOf(op);
  if (contract == nullptr) {
    return Err(Errc::kInternal, "operation '" + op.operation_id + "' uses tool '" + op.tool +
                                    "', which is no longer registered");
  }
  const ToolContract& c = contract->contract();
  RECKON_TRY(json::value input, InputOf(op));
  RECKON_TRY(bool needs_approval, contract->ApprovalRequiredFor(input));
  std::string approval_id;
  if (needs_approval) {
    if (op.approval_state != ApprovalState::kGranted) return RequestApproval(op);
    ApprovalGrant grant{op.approval_id, op.operation_id, op.approval_intent_hash, op.approved_by,
                        FromMicros(op.approval_expires_at_us)};
    if (!CheckGrant(grant, op.operation_id, op.intent_hash, now_)) {
      return RequestApproval(op);  // expired or no longer bound: ask again
    }
    approval_id = op.approval_id;
  }
  const std::uint32_t attempt = op.attempt + 1;
  const std::int64_t deadline = ToMicros(now_ + c.attempt_timeout);
  RECKON_TRY(Emit(AttemptStarted{op.operation_id, attempt, options_.worker_name, deadline,
                                 approval_id}));
  actions_.push_back(StartAttemptAction{op.operation_id, attempt, deadline});
  actions_.push_back(ArmDueAction{op.operation_id, deadline});
  return Ok();
}

Result<void> Decider::AttemptFinished(const std::string& operation_id, std::uint32_t attempt,
                                      const AttemptOutcome& reported) {
  OperationRecord* op = state_.FindOperation(operation_id);
  if (op == nullptr || IsTerminal(op->state)) return Ok();  // nothing left to learn
  const bool current = op->state == OperationState::kInFlight && op->attempt == attempt;
  // What the tool reported is journaled without the call's secrets (engine/tool_report.h).
  const AttemptOutcome outcome = RedactReport(RedactorFor(*op), reported);
  if (outcome.success) {
    // From the current attempt: the result. From an attempt already given up on: late
    // evidence that the effect happened, never a reason for another one. Every non-terminal
    // state after a first attempt has an edge to committed for exactly this.
    return Emit(OperationCommitted{operation_id, attempt, json::serialize(outcome.output),
                                   outcome.provider_ref,
                                   current ? CommitSource::kAttempt
                                           : CommitSource::kLateCompletion});
  }
  if (!current) return Ok();  // a stale attempt's failure (or acceptance) proves nothing
  if (outcome.accepted) return Accepted(*op, outcome.provider_ref);
  return HandleFailure(*op, outcome.kind, outcome.code, outcome.message,
                       outcome.heartbeat_details_json, outcome.not_started);
}

// --- asynchronous completion --------------------------------------------------------------

Result<void> Decider::Accepted(OperationRecord& op, const std::string& provider_ref) {
  const RegisteredContract* contract = ContractOf(op);
  if (contract == nullptr || !contract->contract().completion.declared()) {
    // Nobody will hear back: the provider holds a request whose fate nothing will report.
    return HandleFailure(op, FailureKind::kUnknown, "accepted_without_completion",
                         "the tool answered accepted, but its contract declares no completion");
  }
  const std::int64_t due = ToMicros(now_ + contract->contract().completion.deadline);
  RECKON_TRY(Emit(AttemptAccepted{op.operation_id, op.attempt, provider_ref, due}));
  actions_.push_back(ArmDueAction{op.operation_id, due});
  return Ok();
}

Result<void> Decider::CompletionArrived(const Completion& completion) {
  OperationRecord* op = state_.FindOperation(completion.operation_id);
  if (op == nullptr) {
    return Err(Errc::kNotFound, "run '" + state_.ref().workflow_id + "' has no operation '" +
                                    completion.operation_id + "'");
  }
  if (completion.delivery_id.empty()) {
    return Err(Errc::kInvalidArgument,
               "a completion needs a delivery id (the sender's id of this delivery, the same on "
               "every redelivery)");
  }
  if (op->attempt == 0) {
    return Err(Errc::kFailedPrecondition,
               "operation '" + completion.operation_id + "' has not started an attempt, so no "
               "provider can have completed it; check the operation id");
  }
  // A redelivery, or news of an operation settled already: acknowledged, nothing changes.
  if (IsTerminal(op->state) || op->completion_deliveries.count(completion.delivery_id)) {
    return Ok();
  }
  // The provider's report is journaled without the call's secrets (engine/tool_report.h).
  const AttemptOutcome outcome = RedactReport(RedactorFor(*op), completion.outcome);
  const std::string& code = outcome.code;
  const bool waiting = op->state == OperationState::kAwaitingCompletion ||
                       op->state == OperationState::kInFlight;
  if (!outcome.success && !waiting) {
    // A failure report for an operation whose outcome went unknown: its reconciliation (or a
    // person) settles it. Nothing is concluded from it, and it is not recorded either, so a
    // later redelivery, once the operation waits again, is still heard.
    return Ok();
  }
  RECKON_TRY(Emit(CompletionReceived{op->operation_id, completion.delivery_id, outcome.success,
                                     code, completion.received_by}));
  if (outcome.success) {
    std::string provider_ref = outcome.provider_ref;
    if (provider_ref.empty()) provider_ref = op->provider_ref;  // the accepted request's
    return Emit(OperationCommitted{op->operation_id, op->attempt, json::serialize(outcome.output),
                                   std::move(provider_ref), CommitSource::kCallback});
  }
  return HandleFailure(*op, outcome.kind, code, outcome.message, "", false);
}

Result<void> Decider::HandleFailure(OperationRecord& op, FailureKind reported,
                                    const std::string& code, const std::string& message,
                                    const std::string& details, bool not_started) {
  const RegisteredContract* contract = ContractOf(op);
  if (contract == nullptr) {
    return Emit(OperationRejected{op.operation_id, op.attempt, code, message});
  }
  const ToolContract& c = contract->contract();
  FailureReport report;
  report.reported = reported;
  report.not_started = not_started;
  report.code = code;
  report.attempts_made = static_cast<int>(op.attempt);
  report.earlier_outcome_unknown = op.earlier_outcome_unknown;
  report.since_first_attempt = std::chrono::duration_cast<std::chrono::milliseconds>(
      now_ - FromMicros(op.first_attempt_at_us));
  FailureDecision decision = DecideAfterFailure(c, report);
  if (options_.mutant == DeciderMutant::kBlindRetryUnknown &&
      decision.kind == FailureKind::kUnknown && decision.action != FailureAction::kRetry &&
      op.attempt < static_cast<std::uint32_t>(c.retry.max_attempts)) {
    decision.action = FailureAction::kRetry;  // the bug the simulator must catch
    decision.delay = c.retry.backoff.initial;
  }
  const bool unknown = decision.kind == FailureKind::kUnknown;
  const std::string reason = code.empty() ? std::string("unknown") : code;
  switch (decision.action) {
    case FailureAction::kFailStep: {
      if (unknown) {
        RECKON_TRY(Emit(OutcomeUnknown{op.operation_id, op.attempt, reason, 0, details}));
      }
      return Emit(OperationRejected{op.operation_id, op.attempt, reason,
                                    message.empty() ? decision.reason : message});
    }
    case FailureAction::kRetry: {
      const std::int64_t retry_at = ToMicros(now_ + decision.delay);
      if (unknown) {
        RECKON_TRY(Emit(OutcomeUnknown{op.operation_id, op.attempt, reason, 0, details}));
        RECKON_TRY(Emit(RetryScheduled{op.operation_id, op.attempt + 1, retry_at,
                                       RetryReason::kUnknownOutcome}));
      } else {
        RECKON_TRY(Emit(AttemptFailedRetryable{op.operation_id, op.attempt, reason, message,
                                               retry_at, details}));
      }
      actions_.push_back(ArmDueAction{op.operation_id, retry_at});
      return Ok();
    }
    case FailureAction::kReconcile: {
      // The lookup race: never before the attempt's hard deadline plus the grace.
      const TimePoint after = options_.mutant == DeciderMutant::kReconcileBeforeDeadline
                                  ? now_  // the bug the simulator must catch
                                  : std::max(now_, FromMicros(op.deadline_us));
      const std::int64_t at = ToMicros(after + decision.delay);
      RECKON_TRY(Emit(OutcomeUnknown{op.operation_id, op.attempt, reason, at, details}));
      actions_.push_back(ArmDueAction{op.operation_id, at});
      return Ok();
    }
    case FailureAction::kNeedsHuman: {
      if (op.state == OperationState::kAwaitingCompletion) {
        // The completion deadline passed: the provider holds the request and did not say.
        RECKON_TRY(Emit(OutcomeUnknown{op.operation_id, op.attempt, reason, 0, details}));
        return Emit(NeedsHuman{op.operation_id, decision.reason});
      }
      if (op.state == OperationState::kInFlight) {
        // The lookup race holds for a person too: someone who checks the provider before the
        // attempt's hard deadline (plus the grace) may find nothing while the attempt is still
        // landing, and a "not committed" would then authorize a second effect. So the person
        // is asked only once the attempt can no longer land (Due, kOutcomeUnknown).
        // Found by the deterministic simulator (tests/sim/, seed 41).
        const TimePoint settled = FromMicros(op.deadline_us) + c.reconcile.grace;
        if (unknown && c.reconcile.mode != ReconcileMode::kLookup && settled > now_) {
          const std::int64_t at = ToMicros(settled);
          RECKON_TRY(Emit(OutcomeUnknown{op.operation_id, op.attempt, reason, at, details}));
          actions_.push_back(ArmDueAction{op.operation_id, at});
          return Ok();
        }
        RECKON_TRY(Emit(OutcomeUnknown{op.operation_id, op.attempt, reason, 0, details}));
      }
      return Emit(NeedsHuman{op.operation_id, decision.reason});
    }
  }
  return Err(Errc::kInternal, "unhandled failure action");
}

Result<void> Decider::Due(const std::string& operation_id) {
  OperationRecord* op = state_.FindOperation(operation_id);
  if (op != nullptr && IsTerminal(op->state) && op->attempt > 0 && op->deadline_us > 0 &&
      now_ >= FromMicros(op->deadline_us)) {
    // Settled by other evidence (an earlier attempt's late completion, a lookup, a person)
    // while its latest attempt still ran: that attempt, too, stops at its hard deadline, or
    // the run would wait on it forever (the engine lets a run go once its attempts reported).
    // Found by the deterministic simulator (tests/sim/, seed 3).
    actions_.push_back(CancelAttemptAction{op->operation_id, op->attempt});
    return Ok();
  }
  if (op == nullptr || op->due_at_us == 0 || now_ < FromMicros(op->due_at_us)) {
    return Ok();  // stale: settled, or re-armed for later
  }
  switch (op->state) {
    case OperationState::kInFlight:
      actions_.push_back(CancelAttemptAction{op->operation_id, op->attempt});
      return HandleFailure(*op, FailureKind::kUnknown, "deadline_exceeded",
                           "the attempt passed its hard deadline");
    case OperationState::kRetryScheduled:
      return StartNextAttempt(*op);
    case OperationState::kAwaitingCompletion:
      // No completion by the contract's deadline: the provider may or may not have acted.
      return HandleFailure(*op, FailureKind::kUnknown, "completion_timeout",
                           "no completion arrived by the contract's completion deadline");
    case OperationState::kOutcomeUnknown: {
      const RegisteredContract* contract = ContractOf(*op);
      if (contract != nullptr && contract->contract().reconcile.mode != ReconcileMode::kLookup) {
        // The attempt can no longer land (HandleFailure, kNeedsHuman): now a person decides.
        return Emit(NeedsHuman{op->operation_id,
                               "the outcome is unknown and the tool has no lookup: a person "
                               "must check with the provider whether it happened"});
      }
      const std::uint32_t round = op->reconcile_rounds + 1;
      RECKON_TRY(Emit(ReconciliationStarted{op->operation_id, round}));
      actions_.push_back(StartReconcileAction{op->operation_id, round});
      return Ok();
    }
    case OperationState::kAwaitingApproval:
      return Emit(ApprovalDenied{op->operation_id, op->approval_id, "reckon",
                                 "no decision before the approval deadline"});
    case OperationState::kPrepared:  // nothing is armed before the first attempt
    case OperationState::kApproved:  // its attempt starts in the same batch as the grant
    case OperationState::kReconciling:  // the lookup's own timeout ends it
    case OperationState::kNeedsHuman:
    case OperationState::kCommitted:
    case OperationState::kRejected:
      return Ok();
  }
  return Err(Errc::kInternal, "unhandled operation state");
}

// --- reconciliation -------------------------------------------------------------------------

Result<void> Decider::ReconcileFinished(const std::string& operation_id, std::uint32_t round,
                                        const ReconcileOutcome& reported) {
  OperationRecord* op = state_.FindOperation(operation_id);
  if (op == nullptr || op->state != OperationState::kReconciling ||
      op->reconcile_rounds != round) {
    return Ok();  // settled meanwhile (late evidence, a person): the lookup is moot
  }
  const RegisteredContract* contract = ContractOf(*op);
  if (contract == nullptr) return Err(Errc::kInternal, "tool of '" + operation_id + "' vanished");
  const ToolContract& c = contract->contract();
  // What the lookup reported is journaled without the call's secrets (engine/tool_report.h).
  const ReconcileOutcome outcome = RedactReport(RedactorFor(*op), reported);
  switch (outcome.verdict) {
    case ReconcileVerdict::kCommitted: {
      RECKON_TRY(Emit(ReconciliationResult{operation_id, round, ReconcileVerdict::kCommitted,
                                           outcome.provider_ref, 0}));
      return Emit(OperationCommitted{operation_id, op->attempt, json::serialize(outcome.output),
                                     outcome.provider_ref, CommitSource::kReconciliation});
    }
    case ReconcileVerdict::kNotFound: {
      RECKON_TRY(
          Emit(ReconciliationResult{operation_id, round, ReconcileVerdict::kNotFound, "", 0}));
      if (static_cast<int>(op->attempt) >= c.retry.max_attempts) {
        return Emit(OperationRejected{operation_id, op->attempt, "attempts_exhausted",
                                      "the provider has no record of the operation and all " +
                                          std::to_string(c.retry.max_attempts) +
                                          " attempts are used"});
      }
      // not_found authorizes exactly one new attempt, with the same operation id.
      RECKON_TRY(Emit(RetryScheduled{operation_id, op->attempt + 1, ToMicros(now_),
                                     RetryReason::kReconciledNotFound}));
      return StartNextAttempt(*op);
    }
    case ReconcileVerdict::kStillUnknown: {
      FailureDecision decision = DecideAfterStillUnknown(c, static_cast<int>(round));
      if (decision.action == FailureAction::kReconcile) {
        const std::int64_t next = ToMicros(now_ + decision.delay);
        RECKON_TRY(Emit(ReconciliationResult{operation_id, round, ReconcileVerdict::kStillUnknown,
                                             "", next}));
        actions_.push_back(ArmDueAction{operation_id, next});
        return Ok();
      }
      RECKON_TRY(Emit(
          ReconciliationResult{operation_id, round, ReconcileVerdict::kStillUnknown, "", 0}));
      return Emit(NeedsHuman{operation_id, decision.reason});
    }
  }
  return Err(Errc::kInternal, "unhandled reconcile verdict");
}

// --- timers and signals (cancels, approvals and people: decider_people.cc) ----------------

Result<void> Decider::WorkflowTimerFired(const std::string& timer_id) {
  if (timer_id == kRunTimeoutTimer) return RunTimedOut();
  if (state_.terminal()) return Ok();                          // cancelled meanwhile
  if (!state_.pending_timers().count(timer_id)) return Ok();  // already fired
  return Emit(TimerFired{timer_id});
}

Result<void> Decider::Signal(const std::string& name, const std::string& payload_json,
                             const std::string& sent_by, const std::string& request_id) {
  if (state_.SignalRequestSeen(request_id)) return Ok();  // a repeat: applied once already
  if (state_.terminal()) {
    return Err(Errc::kFailedPrecondition,
               "run '" + state_.ref().workflow_id + "' is " +
                   std::string(RunStatusName(state_.status())) + "; it takes no more signals");
  }
  RECKON_TRY(std::string canonical, CanonicalizeJson(payload_json));
  return Emit(SignalReceived{name, std::move(canonical), sent_by, request_id});
}

// --- restart -----------------------------------------------------------------------------

Result<void> Decider::Recover() {
  std::vector<std::string> ids;
  for (const auto& [id, op] : state_.operations()) {
    // An operation this batch already touched is new: the replay that precedes recovery
    // issued it past the end of the history, and its first attempt starts only once this
    // batch is durable. Nothing of it was in flight before the restart.
    if (!IsTerminal(op.state) && !touched_operations_.count(id)) ids.push_back(id);
  }
  for (const std::string& id : ids) {
    OperationRecord& op = *state_.FindOperation(id);
    switch (op.state) {
      case OperationState::kInFlight: {
        // The attempt may have landed: its outcome is unknown, never retried blindly.
        RECKON_TRY(HandleFailure(op, FailureKind::kUnknown, "engine_restart",
                                 "the engine restarted while the attempt was in flight"));
        break;
      }
      case OperationState::kPrepared:
      case OperationState::kApproved: {
        RECKON_TRY(StartNextAttempt(op));
        break;
      }
      case OperationState::kReconciling:
        actions_.push_back(StartReconcileAction{op.operation_id, op.reconcile_rounds});
        break;
      case OperationState::kRetryScheduled:
      case OperationState::kOutcomeUnknown:
      case OperationState::kAwaitingApproval:
      case OperationState::kAwaitingCompletion:  // the provider holds it; its deadline stands
        if (op.due_at_us > 0) actions_.push_back(ArmDueAction{op.operation_id, op.due_at_us});
        break;
      case OperationState::kNeedsHuman:  // waits for a person; nothing to re-arm
        break;
      case OperationState::kCommitted:
      case OperationState::kRejected:
        return Err(Errc::kInternal, "terminal operation " + id + " listed for recovery");
    }
  }
  for (const auto& [timer_id, fire_at] : state_.pending_timers()) {
    actions_.push_back(ArmWorkflowTimerAction{timer_id, fire_at});
  }
  for (const auto& [step, child] : state_.children()) {
    if (!child.closed && !child.child_run_id.empty()) {
      actions_.push_back(WatchChildAction{step, child.child_workflow_id});
    }
  }
  if (state_.run_deadline_us() > 0 && !state_.terminal()) {
    actions_.push_back(
        ArmWorkflowTimerAction{std::string(kRunTimeoutTimer), state_.run_deadline_us()});
  }
  return Ok();
}

// --- the append ----------------------------------------------------------------------------

AppendRequest Decider::BuildAppend() const {
  AppendRequest request;
  request.run = state_.ref();
  request.expected_next_seq = events_.empty() ? state_.next_seq() : events_.front().seq;
  request.now_us = ToMicros(now_);
  request.events.reserve(events_.size());
  for (const Event& event : events_) request.events.push_back(event.body);
  if (request.expected_next_seq == 1) request.workflow_type = state_.workflow_type();
  if (state_.status() != status_before_) request.status = state_.status();
  for (const std::string& id : touched_operations_) {
    OperationRecord* op = state_.FindOperation(id);
    if (op == nullptr) continue;
    request.operations.push_back(OperationRow{op->operation_id, op->step_id, op->tool,
                                              op->side_effect,
                                              std::string(OperationStateName(op->state)),
                                              op->attempt, op->intent_hash, op->contract_hash,
                                              op->provider_ref, op->due_at_us});
    if (op->approval_state) {
      request.approvals.push_back(ApprovalRow{op->approval_id, op->operation_id,
                                              op->approval_intent_hash, *op->approval_state,
                                              op->approved_by, op->approval_expires_at_us});
    }
  }
  for (const std::string& id : timers_set_) {
    request.timers_set.push_back(TimerRow{id, state_.pending_timers().at(id)});
  }
  request.timers_cleared.assign(timers_cleared_.begin(), timers_cleared_.end());
  // Each publish of the batch becomes its outbox message, committed with the marker.
  for (const Event& event : events_) {
    const auto* marker = std::get_if<MarkerRecorded>(&event.body);
    if (marker == nullptr || marker->kind != kPublishMarker) continue;
    auto value = DecodePublishMarker(marker->value_json);  // checked when it was emitted
    if (!value) continue;
    request.outbox.push_back(storage::OutboxMessage{
        MessageIdFor(state_.id_scope(), marker->step_id), marker->step_id,
        std::move(value.value().subject), std::move(value.value().payload)});
  }
  auto chain = [&](const NextRun& run) {
    AppendRequest start;
    start.run = run.ref;
    start.expected_next_seq = 1;
    start.now_us = request.now_us;
    start.workflow_type = run.workflow_type;
    for (const Event& event : run.events) start.events.push_back(event.body);
    request.chained.push_back(std::move(start));
  };
  for (const NextRun& child : child_starts_) chain(child);
  if (next_run_) chain(*next_run_);
  return request;
}

}  // namespace reckon
