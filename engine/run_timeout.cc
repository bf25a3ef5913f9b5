// Decider: the run timeout (engine/run_timeout.h).
#include "reckon/engine/run_timeout.h"

#include "reckon/engine/decider.h"
#include "reckon/engine/may_have_acted.h"

namespace reckon {

using namespace storage;

bool Decider::RunDeadlinePassed() const {
  return state_.run_deadline_us() > 0 && now_ >= FromMicros(state_.run_deadline_us());
}

Result<void> Decider::RejectForRunTimeout(OperationRecord& op) {
  return Emit(OperationRejected{op.operation_id, op.attempt, std::string(kRunTimeoutCode),
                                "the run's timeout passed before this operation could start "
                                "an attempt"});
}

Result<void> Decider::RunTimedOut() {
  if (state_.terminal() || !RunDeadlinePassed()) return Ok();  // finished, or stale
  std::vector<std::string> unacted;
  bool may_have_acted = false;
  for (const auto& [id, op] : state_.operations()) {
    if (MayHaveActed(op)) {
      may_have_acted = true;
    } else if (!IsTerminal(op.state)) {
      unacted.push_back(id);  // prepared, awaiting approval, or retrying what proved absent
    }
  }
  for (const std::string& id : unacted) {
    OperationRecord* op = state_.FindOperation(id);
    if (op->state == OperationState::kAwaitingApproval) {
      RECKON_TRY(Emit(ApprovalDenied{id, op->approval_id, "reckon",
                                     "the run's timeout passed before a decision"}));
    } else {
      RECKON_TRY(RejectForRunTimeout(*op));
    }
  }
  if (may_have_acted) {
    // An effect may exist: wait for its outcome (its contract drives it), then look again.
    actions_.push_back(ArmWorkflowTimerAction{std::string(kRunTimeoutTimer),
                                              ToMicros(now_ + kRunTimeoutRecheck)});
    return Ok();
  }
  RECKON_TRY(CloseOpenUpdates("failed"));
  return EmitClose(WorkflowFailed{std::string(kRunTimeoutCode),
                             "the run did not finish within its timeout of " +
                                 std::to_string(state_.run_timeout_ms()) + " ms"});
}

}  // namespace reckon
