// The decider's inputs from people (docs/ARCHITECTURE.md, decisions 15, 47 and 50): a cancel
// request, an approval decision bound to one operation and intent, and a person's resolution of
// an operation whose outcome is unknown, with separation of duties between who started a run
// and who decides about it.
#include "reckon/engine/decider.h"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "reckon/engine/may_have_acted.h"

namespace reckon {

using namespace storage;
namespace json = boost::json;

Result<void> Decider::Cancel(const std::string& reason, const std::string& requested_by) {
  if (state_.terminal()) {
    return Err(Errc::kFailedPrecondition,
               "run '" + state_.ref().workflow_id + "' is already " +
                   std::string(RunStatusName(state_.status())) + "; there is nothing to cancel");
  }
  if (state_.cancel_requested()) return Ok();  // its code is cleaning up already
  for (const auto& [id, op] : state_.operations()) {
    if (!MayHaveActed(op)) continue;
    const std::string state =
        op.state == OperationState::kRetryScheduled
            ? "retrying after an attempt whose outcome is unknown"
            : std::string(OperationStateName(op.state));
    return Err(Errc::kFailedPrecondition,
               "cannot cancel '" + state_.ref().workflow_id + "' yet: operation " + id +
                   " (step '" + op.step_id + "', tool '" + op.tool + "') is " + state +
                   " and may have acted; cancel again once its outcome is known (it is "
                   "reconciled automatically, or resolve it by hand)");
  }
  RECKON_TRY(Emit(WorkflowCancelRequested{reason, requested_by, /*to_code=*/true}));
  std::vector<std::string> pending;
  for (const auto& [id, op] : state_.operations()) {
    if (!IsTerminal(op.state)) pending.push_back(id);
  }
  const std::string why = reason.empty() ? "the workflow was cancelled" : reason;
  for (const std::string& id : pending) {
    OperationRecord* op = state_.FindOperation(id);
    if (op->state == OperationState::kAwaitingApproval) {
      RECKON_TRY(Emit(ApprovalDenied{id, op->approval_id, "reckon", "workflow cancelled: " + why}));
    } else {
      RECKON_TRY(Emit(OperationRejected{id, op->attempt, std::string(kWorkflowCancelledCode),
                                        why}));
    }
  }
  // The code closes the run: WorkflowCancelRequested is news for it (HasWorkflowNews).
  return Ok();
}

Result<void> Decider::SeparateDuties(const OperationRecord& op, const RegisteredContract* contract,
                                     const std::string& by, std::string_view what) const {
  const std::string& starter = state_.started_by();
  if (starter.empty() || by != starter) return Ok();
  if (contract != nullptr && contract->contract().approval.allow_self_approval) return Ok();
  return Err(Errc::kPermissionDenied,
             "separation of duties: '" + by + "' started run '" + state_.ref().workflow_id +
                 "', so another principal must " + std::string(what) + " operation '" +
                 op.operation_id + "' (tool '" + op.tool +
                 "'); a tool's contract may allow it with approval.allow_self_approval");
}

Result<void> Decider::ApprovalDecided(const ApprovalDecision& decision) {
  OperationRecord* op = nullptr;
  if (!decision.operation_id.empty()) {
    op = state_.FindOperation(decision.operation_id);
  } else {
    for (const auto& [id, view] : state_.operations()) {
      if (view.approval_id == decision.approval_id) op = state_.FindOperation(id);
    }
  }
  const std::string what = decision.approval_id.empty() ? decision.operation_id
                                                        : decision.approval_id;
  if (op == nullptr) {
    return Err(Errc::kNotFound, "no approval or operation '" + what + "' in run '" +
                                    state_.ref().workflow_id + "'");
  }
  if (!decision.approval_id.empty() && op->approval_id != decision.approval_id) {
    return Err(Errc::kPermissionDenied,
               "approval '" + decision.approval_id + "' is not the current approval of operation '" +
                   op->operation_id + "' (that is '" + op->approval_id + "')");
  }
  if (op->state != OperationState::kAwaitingApproval) {
    return Err(Errc::kFailedPrecondition,
               "operation '" + op->operation_id + "' is " +
                   std::string(OperationStateName(op->state)) + ", not awaiting approval");
  }
  if (!decision.expected_intent_hash.empty() &&
      decision.expected_intent_hash != op->intent_hash &&
      options_.mutant != DeciderMutant::kReuseGrantAcrossIntents) {  // the mutant's bug
    return Err(Errc::kPermissionDenied,
               "the intent of operation '" + op->operation_id + "' is " + op->intent_hash +
                   ", not the " + decision.expected_intent_hash +
                   " you reviewed; review it again before approving");
  }
  const RegisteredContract* contract = ContractOf(*op);
  RECKON_TRY(SeparateDuties(*op, contract, decision.decided_by, "approve or deny"));
  if (!decision.granted) {
    return Emit(ApprovalDenied{op->operation_id, op->approval_id, decision.decided_by,
                               decision.reason.empty() ? "denied"
                                                       : RedactorFor(*op).Text(decision.reason)});
  }
  const std::chrono::seconds ttl =
      contract ? contract->contract().approval.grant_ttl : std::chrono::seconds(0);
  RECKON_TRY(Emit(ApprovalGranted{op->operation_id, op->approval_id, op->intent_hash,
                                  decision.decided_by, ToMicros(now_ + ttl),
                                  RedactorFor(*op).Text(decision.note)}));
  return StartNextAttempt(*op);
}

Result<void> Decider::Resolve(const HumanResolution& resolution) {
  OperationRecord* op = state_.FindOperation(resolution.operation_id);
  if (op == nullptr) {
    return Err(Errc::kNotFound, "no operation '" + resolution.operation_id + "' in run '" +
                                    state_.ref().workflow_id + "'");
  }
  if (op->state != OperationState::kNeedsHuman) {
    return Err(Errc::kFailedPrecondition,
               "operation '" + op->operation_id + "' is " +
                   std::string(OperationStateName(op->state)) +
                   "; only an operation that needs a human can be resolved");
  }
  if (resolution.committed && resolution.provider_ref.empty()) {
    return Err(Errc::kInvalidArgument,
               "resolving '" + op->operation_id +
                   "' as committed needs the provider's reference as evidence");
  }
  RECKON_TRY(SeparateDuties(*op, ContractOf(*op), resolution.resolved_by, "resolve"));
  // A person's texts are journaled as a tool's report is: without the call's secrets.
  const SecretRedactor redact = RedactorFor(*op);
  const std::string provider_ref = redact.Text(resolution.provider_ref);
  RECKON_TRY(Emit(HumanResolved{op->operation_id, resolution.committed, provider_ref,
                                resolution.resolved_by, redact.Text(resolution.note)}));
  if (resolution.committed) {
    json::object result{{"provider_ref", provider_ref}, {"resolved_by", resolution.resolved_by}};
    return Emit(OperationCommitted{op->operation_id, op->attempt, json::serialize(result),
                                   provider_ref, CommitSource::kHuman});
  }
  const RegisteredContract* contract = ContractOf(*op);
  const int max_attempts = contract ? contract->contract().retry.max_attempts : 0;
  if (static_cast<int>(op->attempt) >= max_attempts) {
    return Emit(OperationRejected{op->operation_id, op->attempt, "not_committed",
                                  "resolved by " + resolution.resolved_by +
                                      " as not committed, and no attempts are left"});
  }
  RECKON_TRY(Emit(RetryScheduled{op->operation_id, op->attempt + 1, ToMicros(now_),
                                 RetryReason::kHumanNotCommitted}));
  return StartNextAttempt(*op);
}

}  // namespace reckon
