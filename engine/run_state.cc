#include "engine/run_state.h"

#include <type_traits>

namespace reckon {

using namespace storage;

OperationView* RunState::FindOperation(const std::string& operation_id) {
  auto it = operations_.find(operation_id);
  return it == operations_.end() ? nullptr : &it->second;
}

OperationView* RunState::FindOperationByStep(const std::string& step_id) {
  auto it = step_to_operation_.find(step_id);
  return it == step_to_operation_.end() ? nullptr : FindOperation(it->second);
}

Result<OperationView*> RunState::Operation(const std::string& operation_id,
                                           std::string_view event) {
  OperationView* op = FindOperation(operation_id);
  if (op == nullptr) {
    return Err(Errc::kInternal, std::string(event) + " names operation '" + operation_id +
                                    "' that run '" + ref_.workflow_id +
                                    "' never prepared; the history is corrupt");
  }
  return op;
}

Result<void> RunState::Advance(OperationView& op, const EventBody& body) {
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
  const EventBody& body = event.body;
  const std::int64_t at = event.recorded_at_us;
  Result<void> applied = std::visit(
      [&](const auto& e) -> Result<void> {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, WorkflowStarted>) {
          workflow_type_ = e.workflow_type;
          input_json_ = e.input_json;
        } else if constexpr (std::is_same_v<T, WorkflowCompleted>) {
          status_ = "completed";
          result_json_ = e.result_json;
        } else if constexpr (std::is_same_v<T, WorkflowFailed>) {
          status_ = "failed";
        } else if constexpr (std::is_same_v<T, WorkflowCancelled>) {
          status_ = "cancelled";
        } else if constexpr (std::is_same_v<T, OperationPrepared>) {
          if (operations_.count(e.operation_id)) {
            return Err(Errc::kInternal, "operation '" + e.operation_id + "' prepared twice");
          }
          OperationView op;
          op.operation_id = e.operation_id;
          op.step_id = e.step_id;
          op.tool = e.tool;
          op.side_effect = e.side_effect;
          op.contract_hash = e.contract_hash;
          op.fingerprint = e.fingerprint;
          op.redacted_input_json = e.input_json;
          op.max_attempts_override = e.max_attempts;
          op.require_approval_override = e.require_approval;
          step_to_operation_[e.step_id] = e.operation_id;
          operations_.emplace(e.operation_id, std::move(op));
        } else if constexpr (std::is_same_v<T, ApprovalRequested>) {
          RECKON_TRY(OperationView * op, Operation(e.operation_id, "ApprovalRequested"));
          RECKON_TRY(Advance(*op, body));
          op->approval_id = e.approval_id;
          ++op->approval_requests;
          op->approval_state = "requested";
          op->approval_intent_hash = e.intent_hash;
          op->approval_expires_at_us = 0;
          // Only the approval deadline (0: none) is due now; a retry or attempt time left
          // over from before the request would otherwise read as a passed approval deadline.
          op->due_at_us = e.deadline_us;
        } else if constexpr (std::is_same_v<T, ApprovalGranted>) {
          RECKON_TRY(OperationView * op, Operation(e.operation_id, "ApprovalGranted"));
          RECKON_TRY(Advance(*op, body));
          op->approval_id = e.approval_id;
          op->approval_state = "granted";
          op->approval_intent_hash = e.intent_hash;
          op->approved_by = e.approved_by;
          op->approval_expires_at_us = e.expires_at_us;
        } else if constexpr (std::is_same_v<T, ApprovalDenied>) {
          RECKON_TRY(OperationView * op, Operation(e.operation_id, "ApprovalDenied"));
          RECKON_TRY(Advance(*op, body));
          op->approval_state = "denied";
          op->failure_code = "approval_denied";
          op->failure_message = e.reason;
        } else if constexpr (std::is_same_v<T, AttemptStarted>) {
          RECKON_TRY(OperationView * op, Operation(e.operation_id, "AttemptStarted"));
          RECKON_TRY(Advance(*op, body));
          op->attempt = e.attempt;
          op->deadline_us = e.deadline_us;
          op->due_at_us = e.deadline_us;
          if (op->first_attempt_at_us == 0) op->first_attempt_at_us = at;
        } else if constexpr (std::is_same_v<T, OperationCommitted>) {
          RECKON_TRY(OperationView * op, Operation(e.operation_id, "OperationCommitted"));
          RECKON_TRY(Advance(*op, body));
          op->provider_ref = e.provider_ref;
          op->result_json = e.result_json;
          op->due_at_us = 0;
          ++committed_operations_;
        } else if constexpr (std::is_same_v<T, OperationRejected>) {
          RECKON_TRY(OperationView * op, Operation(e.operation_id, "OperationRejected"));
          RECKON_TRY(Advance(*op, body));
          op->failure_code = e.code;
          op->failure_message = e.message;
          op->due_at_us = 0;
        } else if constexpr (std::is_same_v<T, AttemptFailedRetryable>) {
          RECKON_TRY(OperationView * op, Operation(e.operation_id, "AttemptFailedRetryable"));
          RECKON_TRY(Advance(*op, body));
          op->due_at_us = e.retry_at_us;
        } else if constexpr (std::is_same_v<T, OutcomeUnknown>) {
          RECKON_TRY(OperationView * op, Operation(e.operation_id, "OutcomeUnknown"));
          RECKON_TRY(Advance(*op, body));
          op->earlier_outcome_unknown = true;
          op->due_at_us = e.reconcile_at_us;
        } else if constexpr (std::is_same_v<T, RetryScheduled>) {
          RECKON_TRY(OperationView * op, Operation(e.operation_id, "RetryScheduled"));
          RECKON_TRY(Advance(*op, body));
          op->due_at_us = e.retry_at_us;
          if (e.reason == "reconciled_not_found" || e.reason == "human_not_committed") {
            op->earlier_outcome_unknown = false;  // proven absent
          }
        } else if constexpr (std::is_same_v<T, ReconciliationStarted>) {
          RECKON_TRY(OperationView * op, Operation(e.operation_id, "ReconciliationStarted"));
          RECKON_TRY(Advance(*op, body));
          op->reconcile_rounds = e.round;
          op->due_at_us = 0;
        } else if constexpr (std::is_same_v<T, ReconciliationResult>) {
          RECKON_TRY(OperationView * op, Operation(e.operation_id, "ReconciliationResult"));
          RECKON_TRY(Advance(*op, body));
          if (e.result == "still_unknown") op->due_at_us = e.next_at_us;
        } else if constexpr (std::is_same_v<T, NeedsHuman>) {
          RECKON_TRY(OperationView * op, Operation(e.operation_id, "NeedsHuman"));
          RECKON_TRY(Advance(*op, body));
          op->due_at_us = 0;
          op->failure_message = e.reason;
        } else if constexpr (std::is_same_v<T, HumanResolved>) {
          RECKON_TRY(Operation(e.operation_id, "HumanResolved"));
        } else if constexpr (std::is_same_v<T, TimerStarted>) {
          pending_timers_[e.timer_id] = e.fire_at_us;
        } else if constexpr (std::is_same_v<T, TimerFired>) {
          pending_timers_.erase(e.timer_id);
        }
        return Ok();
      },
      body);
  if (!applied) return applied;
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
