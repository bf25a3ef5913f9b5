#include "reckon/engine/run_state.h"

#include "reckon/base/jcs.h"
#include "reckon/engine/command.h"

namespace reckon {

using namespace storage;

// Folds one event of each type into a RunState; Apply visits the event's body with it. Every
// event type has its own function, so a new type that is not folded does not compile.
struct RunState::Fold {
  RunState& run;
  const EventBody& body;
  std::int64_t at;  // when the event was recorded

  // The operation the event names, moved along the lifecycle table by the event.
  Result<OperationRecord*> Advance(const std::string& operation_id) {
    RECKON_TRY(OperationRecord * op, run.Operation(operation_id, EventTypeName(body)));
    RECKON_TRY(run.Advance(*op, body));
    return op;
  }

  // --- the run -----------------------------------------------------------------------------
  Result<void> operator()(const WorkflowStarted& e) {
    run.workflow_type_ = e.workflow_type;
    run.input_json_ = e.input_json;
    run.started_by_ = e.started_by;
    run.definition_hash_ = e.definition_hash;
    run.id_scope_ = IdScope{e.id_version, e.id_namespace, run.ref_.workflow_id, run.ref_.run_id};
    run.previous_run_id_ = e.previous_run_id;
    run.parent_workflow_id_ = e.parent_workflow_id;
    run.parent_run_id_ = e.parent_run_id;
    run.parent_close_policy_ = e.parent_close_policy;
    run.run_deadline_us_ = e.run_deadline_us;
    run.run_timeout_ms_ = e.run_timeout_ms;
    return Ok();
  }

  // --- child workflows -----------------------------------------------------------------------
  Result<void> operator()(const ChildWorkflowInitiated& e) {
    auto policy = ParseParentClosePolicy(e.parent_close_policy);
    if (!policy || run.children_.count(e.step_id)) {
      return Err(Errc::kInternal, "run '" + run.ref_.workflow_id + "': child workflow step '" +
                                      e.step_id + "' is recorded twice or names policy '" +
                                      e.parent_close_policy + "'; the history is corrupt");
    }
    run.children_[e.step_id] = ChildRecord{e.step_id, e.child_workflow_id, e.child_run_id,
                                           e.workflow_type, *policy, false, ""};
    return Ok();
  }
  Result<void> operator()(const ChildWorkflowClosed& e) {
    auto it = run.children_.find(e.step_id);
    if (it == run.children_.end() || it->second.closed) {
      return Err(Errc::kInternal, "run '" + run.ref_.workflow_id + "': child workflow step '" +
                                      e.step_id + "' closed without being open; the history "
                                      "is corrupt");
    }
    it->second.closed = true;
    it->second.status = e.status;
    return Ok();
  }
  Result<void> operator()(const ChildPolicyApplied&) { return Ok(); }
  Result<void> operator()(const WorkflowContinuedAsNew& e) {
    run.status_ = RunStatus::kContinuedAsNew;
    run.next_run_id_ = e.next_run_id;
    return Ok();
  }
  Result<void> operator()(const WorkflowCompleted& e) {
    run.status_ = RunStatus::kCompleted;
    run.result_json_ = e.result_json;
    return Ok();
  }
  Result<void> operator()(const WorkflowFailed& e) {
    run.status_ = RunStatus::kFailed;
    run.failure_code_ = e.code;
    run.failure_message_ = e.message;
    return Ok();
  }
  Result<void> operator()(const WorkflowCancelled&) {
    run.status_ = RunStatus::kCancelled;
    return Ok();
  }
  // Recorded for the history; the state they imply arrives with later events.
  Result<void> operator()(const WorkflowCancelRequested& e) {
    run.cancel_reason_ = e.reason;
    run.cancel_requested_ = true;
    return Ok();
  }
  Result<void> operator()(const WorkflowTaskScheduled&) { return Ok(); }
  Result<void> operator()(const WorkflowTaskStarted& e) {
    run.last_build_ = e.build_id;
    return Ok();
  }
  Result<void> operator()(const WorkflowTaskCompleted&) { return Ok(); }
  // --- updates (ctx.OnUpdate) ----------------------------------------------------------------
  Result<void> operator()(const UpdateAccepted& e) {
    if (run.updates_.count(e.update_id)) {
      return Err(Errc::kInternal, "run '" + run.ref_.workflow_id + "': update '" + e.update_id +
                                      "' was accepted twice; the history is corrupt");
    }
    UpdateRecord& update = run.updates_[e.update_id];
    update.name = e.name;
    update.args_json = e.args_json;
    update.sent_by = e.sent_by;
    return Ok();
  }
  Result<void> operator()(const UpdateCompleted& e) {
    auto it = run.updates_.find(e.update_id);
    if (it == run.updates_.end() || it->second.completed) {
      return Err(Errc::kInternal, "run '" + run.ref_.workflow_id + "': update '" + e.update_id +
                                      "' completed without being open; the history is corrupt");
    }
    it->second.completed = true;
    it->second.result_json = e.result_json;
    it->second.error_code = e.error_code;
    it->second.error_message = e.error_message;
    return Ok();
  }
  Result<void> operator()(const SignalReceived& e) {
    ++run.signals_[e.name].received;
    if (!e.request_id.empty()) run.signal_request_ids_.insert(e.request_id);
    return Ok();
  }
  // now/random markers matter only to replay; a wait_signal marker says what the code awaits.
  Result<void> operator()(const MarkerRecorded& e) {
    if (e.kind != kWaitSignalMarker && e.kind != kWaitSignalEndMarker) return Ok();
    auto name = ParseStrictJson(e.value_json);
    if (!name || !name.value().is_string()) {
      return Err(Errc::kInternal, "run '" + run.ref_.workflow_id + "': wait_signal marker '" +
                                      e.step_id + "' holds " + e.value_json +
                                      ", not a signal name; the history is corrupt");
    }
    SignalTally& tally = run.signals_[std::string(name.value().as_string())];
    if (e.kind == kWaitSignalMarker) {
      ++tally.waits;
    } else {
      ++tally.timed_out;
    }
    return Ok();
  }

  // --- workflow timers -----------------------------------------------------------------------
  Result<void> operator()(const TimerStarted& e) {
    run.pending_timers_[e.timer_id] = e.fire_at_us;
    return Ok();
  }
  Result<void> operator()(const TimerFired& e) {
    run.pending_timers_.erase(e.timer_id);
    return Ok();
  }

  // --- operations ----------------------------------------------------------------------------
  Result<void> operator()(const OperationPrepared& e) {
    if (run.FindOperation(e.operation_id) != nullptr) {
      return Err(Errc::kInternal, "operation '" + e.operation_id + "' prepared twice");
    }
    OperationRecord op;
    op.operation_id = e.operation_id;
    op.step_id = e.step_id;
    op.tool = e.tool;
    op.side_effect = e.side_effect;
    op.contract_hash = e.contract_hash;
    op.intent_hash = e.intent_hash;
    op.redacted_input_json = e.input_json;
    op.max_attempts_override = e.max_attempts;
    op.require_approval_override = e.require_approval;
    run.step_to_operation_[e.step_id] = e.operation_id;
    run.operation_index_.Add(*run.operations_.emplace(e.operation_id, std::move(op)).first);
    return Ok();
  }
  Result<void> operator()(const ApprovalRequested& e) {
    RECKON_TRY(OperationRecord * op, Advance(e.operation_id));
    op->approval_id = e.approval_id;
    ++op->approval_requests;
    op->approval_state = ApprovalState::kRequested;
    op->approval_intent_hash = e.intent_hash;
    op->approval_expires_at_us = 0;
    // Only the approval deadline (0: none) is due now; a retry or attempt time left over from
    // before the request would otherwise read as a passed approval deadline.
    op->due_at_us = e.deadline_us;
    return Ok();
  }
  Result<void> operator()(const ApprovalGranted& e) {
    RECKON_TRY(OperationRecord * op, Advance(e.operation_id));
    op->approval_id = e.approval_id;
    op->approval_state = ApprovalState::kGranted;
    op->approval_intent_hash = e.intent_hash;
    op->approved_by = e.approved_by;
    op->approval_expires_at_us = e.expires_at_us;
    return Ok();
  }
  Result<void> operator()(const ApprovalDenied& e) {
    RECKON_TRY(OperationRecord * op, Advance(e.operation_id));
    op->approval_state = ApprovalState::kDenied;
    op->failure_code = "approval_denied";
    op->failure_message = e.reason;
    return Ok();
  }
  Result<void> operator()(const AttemptStarted& e) {
    RECKON_TRY(OperationRecord * op, Advance(e.operation_id));
    op->attempt = e.attempt;
    op->deadline_us = e.deadline_us;
    op->due_at_us = e.deadline_us;
    if (op->first_attempt_at_us == 0) op->first_attempt_at_us = at;
    return Ok();
  }
  Result<void> operator()(const OperationCommitted& e) {
    RECKON_TRY(OperationRecord * op, Advance(e.operation_id));
    op->provider_ref = e.provider_ref;
    op->result_json = e.result_json;
    op->due_at_us = 0;
    ++run.committed_operations_;
    return Ok();
  }
  Result<void> operator()(const OperationRejected& e) {
    RECKON_TRY(OperationRecord * op, Advance(e.operation_id));
    op->failure_code = e.code;
    op->failure_message = e.message;
    op->due_at_us = 0;
    return Ok();
  }
  Result<void> operator()(const AttemptFailedRetryable& e) {
    RECKON_TRY(OperationRecord * op, Advance(e.operation_id));
    op->due_at_us = e.retry_at_us;
    if (!e.heartbeat_details_json.empty()) {
      op->last_heartbeat_details_json = e.heartbeat_details_json;
    }
    return Ok();
  }
  Result<void> operator()(const OutcomeUnknown& e) {
    RECKON_TRY(OperationRecord * op, Advance(e.operation_id));
    op->earlier_outcome_unknown = true;
    if (!e.heartbeat_details_json.empty()) {
      op->last_heartbeat_details_json = e.heartbeat_details_json;
    }
    op->due_at_us = e.reconcile_at_us;
    return Ok();
  }
  Result<void> operator()(const RetryScheduled& e) {
    RECKON_TRY(OperationRecord * op, Advance(e.operation_id));
    op->due_at_us = e.retry_at_us;
    switch (e.reason) {
      case RetryReason::kReconciledNotFound:
      case RetryReason::kHumanNotCommitted:
        op->earlier_outcome_unknown = false;  // proven absent
        break;
      case RetryReason::kUnknownOutcome:
        break;
    }
    return Ok();
  }
  Result<void> operator()(const ReconciliationStarted& e) {
    RECKON_TRY(OperationRecord * op, Advance(e.operation_id));
    op->reconcile_rounds = e.round;
    op->due_at_us = 0;
    return Ok();
  }
  Result<void> operator()(const ReconciliationResult& e) {
    RECKON_TRY(OperationRecord * op, Advance(e.operation_id));
    if (e.result == ReconcileVerdict::kStillUnknown) op->due_at_us = e.next_at_us;
    return Ok();
  }
  Result<void> operator()(const NeedsHuman& e) {
    RECKON_TRY(OperationRecord * op, Advance(e.operation_id));
    op->due_at_us = 0;
    op->failure_message = e.reason;
    return Ok();
  }
  Result<void> operator()(const AttemptAccepted& e) {
    RECKON_TRY(OperationRecord * op, Advance(e.operation_id));
    op->provider_ref = e.provider_ref;
    op->due_at_us = e.completion_due_us;
    return Ok();
  }
  // Its consequence (OperationCommitted, or a failure's events) follows as events of its own.
  Result<void> operator()(const CompletionReceived& e) {
    RECKON_TRY(OperationRecord * op, run.Operation(e.operation_id, "CompletionReceived"));
    op->completion_deliveries.insert(e.delivery_id);
    return Ok();
  }
  // The decision itself arrives as the OperationCommitted or RetryScheduled that follows.
  Result<void> operator()(const HumanResolved& e) {
    RECKON_TRY(run.Operation(e.operation_id, "HumanResolved"));
    return Ok();
  }
};

std::vector<std::string> RunState::OutstandingSignalWaits() const {
  std::vector<std::string> names;
  for (const auto& [name, tally] : signals_) {
    if (tally.waits > tally.received + tally.timed_out) names.push_back(name);
  }
  return names;
}

OperationRecord* RunState::FindOperation(const std::string& operation_id) {
  return operation_index_.Find(operations_, operation_id);
}

OperationRecord* RunState::OperationIndex::Find(std::map<std::string, OperationRecord>& operations,
                                                std::string_view operation_id) {
  if (by_id_.size() != operations.size()) {  // a copy's first lookup
    by_id_.clear();
    by_id_.reserve(operations.size());
    for (auto& entry : operations) Add(entry);
  }
  auto it = by_id_.find(operation_id);
  return it == by_id_.end() ? nullptr : it->second;
}

OperationRecord* RunState::FindOperationByStep(const std::string& step_id) {
  auto it = step_to_operation_.find(step_id);
  return it == step_to_operation_.end() ? nullptr : FindOperation(it->second);
}

Result<OperationRecord*> RunState::Operation(const std::string& operation_id,
                                           std::string_view event) {
  OperationRecord* op = FindOperation(operation_id);
  if (op == nullptr) {
    return Err(Errc::kInternal, std::string(event) + " names operation '" + operation_id +
                                    "' that run '" + ref_.workflow_id +
                                    "' never prepared; the history is corrupt");
  }
  return op;
}

Result<void> RunState::Advance(OperationRecord& op, const EventBody& body) {
  auto input = InputOf(body);
  if (!input) return Ok();
  auto next = Transition(op.state, *input);
  if (!next) {
    return next.error().WithContext("run '" + ref_.workflow_id + "' operation '" +
                                    op.operation_id + "' (step '" + op.step_id + "')");
  }
  op.state = next.value();
  return Ok();
}

Result<void> RunState::Apply(const Event& event) {
  if (event.seq != next_seq_) {
    return Err(Errc::kInternal, "run '" + ref_.workflow_id + "': event " +
                                    std::to_string(event.seq) + " applied at position " +
                                    std::to_string(next_seq_));
  }
  RECKON_TRY(std::visit(Fold{*this, event.body, event.recorded_at_us}, event.body));
  ++next_seq_;
  return Ok();
}

Result<void> RunState::ApplyAll(const std::vector<Event>& events) {
  for (const Event& event : events) {
    RECKON_TRY(Apply(event));
  }
  return Ok();
}

}  // namespace reckon
