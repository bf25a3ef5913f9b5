#include "reckon/engine/operation_state.h"

#include <array>
#include <string>

namespace reckon {
namespace {

using S = OperationState;
using I = OperationInput;

struct Edge {
  S from;
  I input;
  S to;
};

// Every legal transition. Anything not listed is refused.
constexpr Edge kEdges[] = {
    // Approval gate.
    {S::kPrepared, I::kApprovalRequested, S::kAwaitingApproval},
    {S::kRetryScheduled, I::kApprovalRequested, S::kAwaitingApproval},  // grant expired
    {S::kAwaitingApproval, I::kApprovalGranted, S::kApproved},
    {S::kAwaitingApproval, I::kApprovalDenied, S::kRejected},
    // Attempts.
    {S::kPrepared, I::kAttemptStarted, S::kInFlight},
    {S::kApproved, I::kAttemptStarted, S::kInFlight},
    {S::kRetryScheduled, I::kAttemptStarted, S::kInFlight},
    {S::kInFlight, I::kCommitted, S::kCommitted},
    {S::kInFlight, I::kRejected, S::kRejected},
    {S::kInFlight, I::kRetryableFailure, S::kRetryScheduled},
    {S::kInFlight, I::kOutcomeUnknown, S::kOutcomeUnknown},
    // Asynchronous completion: the provider accepted and reports later; its completion (or
    // none by the deadline: unknown) settles the operation as the attempt's reply would.
    {S::kInFlight, I::kAccepted, S::kAwaitingCompletion},
    {S::kAwaitingCompletion, I::kCommitted, S::kCommitted},
    {S::kAwaitingCompletion, I::kRejected, S::kRejected},
    {S::kAwaitingCompletion, I::kRetryableFailure, S::kRetryScheduled},
    {S::kAwaitingCompletion, I::kOutcomeUnknown, S::kOutcomeUnknown},
    // Invalid input is rejected before any attempt.
    {S::kPrepared, I::kRejected, S::kRejected},
    // Retries exhausted while waiting.
    {S::kRetryScheduled, I::kRejected, S::kRejected},
    // Unknown outcomes.
    {S::kOutcomeUnknown, I::kRetryScheduled, S::kRetryScheduled},
    {S::kOutcomeUnknown, I::kReconciliationStarted, S::kReconciling},
    {S::kOutcomeUnknown, I::kNeedsHuman, S::kNeedsHuman},
    {S::kOutcomeUnknown, I::kRejected, S::kRejected},  // read_only, attempts exhausted
    {S::kReconciling, I::kCommitted, S::kCommitted},
    {S::kReconciling, I::kRetryScheduled, S::kRetryScheduled},  // not_found
    {S::kReconciling, I::kStillUnknown, S::kOutcomeUnknown},
    {S::kReconciling, I::kNeedsHuman, S::kNeedsHuman},
    {S::kReconciling, I::kRejected, S::kRejected},  // not_found, attempts exhausted
    // A person decides.
    {S::kNeedsHuman, I::kCommitted, S::kCommitted},
    {S::kNeedsHuman, I::kRetryScheduled, S::kRetryScheduled},
    {S::kNeedsHuman, I::kRejected, S::kRejected},
    // Late evidence: an earlier attempt's completion proves the commit.
    {S::kOutcomeUnknown, I::kCommitted, S::kCommitted},
    {S::kRetryScheduled, I::kCommitted, S::kCommitted},
    {S::kAwaitingApproval, I::kCommitted, S::kCommitted},  // re-approval after an expired grant
    {S::kApproved, I::kCommitted, S::kCommitted},
};

constexpr std::array<std::string_view, kOperationStateCount> kStateNames = {
    "prepared",        "awaiting_approval", "approved",    "in_flight", "retry_scheduled",
    "outcome_unknown", "reconciling",       "needs_human", "committed", "rejected",
    "awaiting_completion"};

constexpr std::array<std::string_view, kOperationInputCount> kInputNames = {
    "approval_requested", "approval_granted",  "approval_denied",  "attempt_started",
    "committed",          "rejected",          "retryable_failure", "outcome_unknown",
    "retry_scheduled",    "reconciliation_started", "still_unknown", "needs_human",
    "accepted"};

using namespace storage;
struct InputVisitor {
  using I = OperationInput;
  std::optional<I> operator()(const ApprovalRequested&) const { return I::kApprovalRequested; }
  std::optional<I> operator()(const ApprovalGranted&) const { return I::kApprovalGranted; }
  std::optional<I> operator()(const ApprovalDenied&) const { return I::kApprovalDenied; }
  std::optional<I> operator()(const AttemptStarted&) const { return I::kAttemptStarted; }
  std::optional<I> operator()(const OperationCommitted&) const { return I::kCommitted; }
  std::optional<I> operator()(const OperationRejected&) const { return I::kRejected; }
  std::optional<I> operator()(const AttemptFailedRetryable&) const {
    return I::kRetryableFailure;
  }
  std::optional<I> operator()(const OutcomeUnknown&) const { return I::kOutcomeUnknown; }
  std::optional<I> operator()(const RetryScheduled&) const { return I::kRetryScheduled; }
  std::optional<I> operator()(const ReconciliationStarted&) const {
    return I::kReconciliationStarted;
  }
  std::optional<I> operator()(const ReconciliationResult& r) const {
    if (r.result == ReconcileVerdict::kStillUnknown) return I::kStillUnknown;
    return std::nullopt;
  }
  std::optional<I> operator()(const NeedsHuman&) const { return I::kNeedsHuman; }
  std::optional<I> operator()(const AttemptAccepted&) const { return I::kAccepted; }
  template <class T>
  std::optional<I> operator()(const T&) const {
    return std::nullopt;
  }
};

}  // namespace

std::string_view OperationStateName(OperationState state) {
  return kStateNames[static_cast<std::size_t>(state)];
}

Result<OperationState> ParseOperationState(std::string_view name) {
  for (std::size_t i = 0; i < kStateNames.size(); ++i) {
    if (kStateNames[i] == name) return static_cast<OperationState>(i);
  }
  return Err(Errc::kInvalidArgument, "unknown operation state '" + std::string(name) + "'");
}

std::string_view OperationInputName(OperationInput input) {
  return kInputNames[static_cast<std::size_t>(input)];
}

bool IsTerminal(OperationState state) {
  return state == S::kCommitted || state == S::kRejected;
}

Result<OperationState> Transition(OperationState from, OperationInput input) {
  for (const Edge& edge : kEdges) {
    if (edge.from == from && edge.input == input) return edge.to;
  }
  return Err(Errc::kInternal, "illegal operation transition: " +
                                  std::string(OperationStateName(from)) + " --" +
                                  std::string(OperationInputName(input)) +
                                  "--> (no such edge); this is an engine bug");
}

std::optional<OperationInput> InputOf(const storage::EventBody& event) {
  return std::visit(InputVisitor{}, event);
}

}  // namespace reckon
