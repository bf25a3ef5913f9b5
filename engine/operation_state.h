// The operation lifecycle as one transition table (operation_state.cc). The table is the
// documentation: every legal edge is listed there, and everything else is refused.
//
//   prepared -> [awaiting_approval -> approved] -> in_flight(k) -> committed | rejected
//                                                              | retry_scheduled | outcome_unknown
//   retry_scheduled -> in_flight(k+1)
//   outcome_unknown -> reconciling -> committed | retry_scheduled (not_found)
//                                  | outcome_unknown (still_unknown) | needs_human
//   outcome_unknown -> retry_scheduled (classes that may repeat) | needs_human
//   needs_human -> committed | retry_scheduled | rejected (resolved by a person)
//   in_flight -> awaiting_completion (accepted; contract completion) -> committed | rejected
//                | retry_scheduled | outcome_unknown (the completion, or none by its deadline)
//   any non-terminal state that an earlier attempt may still land in -> committed (late
//   evidence: a completion from an attempt already marked unknown proves the commit)
//
// Each input is the journal event that carries it, so replaying a journal drives the same
// table. An illegal transition is a bug in the engine: Transition() returns
// Errc::kInternal naming the state and the input, and the caller stops rather than guess.
#pragma once

#include <optional>
#include <string_view>

#include "reckon/base/error.h"
#include "reckon/storage/event.h"

namespace reckon {

enum class OperationState {
  kPrepared,
  kAwaitingApproval,
  kApproved,
  kInFlight,
  kRetryScheduled,
  kOutcomeUnknown,
  kReconciling,
  kNeedsHuman,
  kCommitted,
  kRejected,
  kAwaitingCompletion,  // the provider accepted the request and reports later (appended)
};
inline constexpr int kOperationStateCount = 11;

enum class OperationInput {
  kApprovalRequested,
  kApprovalGranted,
  kApprovalDenied,
  kAttemptStarted,
  kCommitted,         // OperationCommitted: attempt, late completion, reconciliation or person
  kRejected,          // OperationRejected: definitive failure, exhausted attempts, person
  kRetryableFailure,  // AttemptFailedRetryable
  kOutcomeUnknown,    // OutcomeUnknown
  kRetryScheduled,    // RetryScheduled: the policy authorized a new attempt
  kReconciliationStarted,
  kStillUnknown,      // ReconciliationResult with result still_unknown
  kNeedsHuman,
  kAccepted,          // AttemptAccepted: the provider reports the result later
};
inline constexpr int kOperationInputCount = 13;

std::string_view OperationStateName(OperationState state);
Result<OperationState> ParseOperationState(std::string_view name);
std::string_view OperationInputName(OperationInput input);
bool IsTerminal(OperationState state);

// The next state, or Errc::kInternal for an edge the table does not have.
Result<OperationState> Transition(OperationState from, OperationInput input);

// The lifecycle input an event carries, if any (events of other kinds, and
// ReconciliationResult / HumanResolved whose consequence is a separate event, carry none).
std::optional<OperationInput> InputOf(const storage::EventBody& event);

}  // namespace reckon
