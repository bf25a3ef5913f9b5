// MayHaveActed: whether an operation's effect may exist while its outcome is not known, so
// that closing the run now (a cancel, the run's timeout) would forget an effect. True in the
// states after an attempt started and before its outcome is known (approved, in_flight,
// awaiting_completion, outcome_unknown, reconciling, needs_human), and in retry_scheduled when an earlier attempt
// of a write ended unknown and nothing proved it absent since (a deduplicated or idempotent
// write retried with the same key: its retry is what settles whether the effect exists).
// Found by the deterministic simulator (tests/sim/, seed 810): a cancel rejected such a retry,
// and the journal said "rejected" for a payment the provider held. Pure function.
#pragma once

#include "reckon/engine/run_state.h"

namespace reckon {

inline bool MayHaveActed(const OperationRecord& op) {
  switch (op.state) {
    case OperationState::kApproved:
    case OperationState::kInFlight:
    case OperationState::kAwaitingCompletion:
    case OperationState::kOutcomeUnknown:
    case OperationState::kReconciling:
    case OperationState::kNeedsHuman:
      return true;
    case OperationState::kRetryScheduled:
      return op.earlier_outcome_unknown && op.side_effect != SideEffect::kReadOnly;
    case OperationState::kPrepared:
    case OperationState::kAwaitingApproval:
    case OperationState::kCommitted:
    case OperationState::kRejected:
      return false;
  }
  return true;
}

}  // namespace reckon
