// What the engine does after an attempt fails: the class-by-failure table of the design brief
// ("What each class does after each kind of failure"), as two pure functions of the contract.
//
// The contract never loosens a report. A failure reported as unknown stays unknown whatever
// its code (only the reporter knew whether the request could have been processed); a code the
// contract lists as unknown makes any report unknown; and a non_repeatable_write retries only
// the codes it lists as retryable: any other "retryable" report might have been processed.
// Stateless and thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "reckon/contract/contract.h"

namespace reckon {

enum class FailureKind {
  kDefinitive,  // the provider refused; nothing happened
  kRetryable,   // provably not processed
  kUnknown,     // may or may not have happened: timeout, lost reply, crash mid-attempt
};

std::string_view FailureKindName(FailureKind kind);  // "definitive", "retryable", "unknown"

// The kind the engine acts on, given the kind the worker reported and the provider's code
// (empty if none): a code in unknown_codes -> kUnknown; in definitive_codes -> kDefinitive; in
// retry.retryable_codes -> kRetryable; a kUnknown report is never changed; a kRetryable report
// from a non_repeatable_write with an unlisted code -> kUnknown.
FailureKind ClassifyFailure(const ToolContract& contract, FailureKind reported,
                            std::string_view code);

enum class FailureAction {
  kFailStep,    // the step fails; the workflow sees the error
  kRetry,       // a new attempt with the same operation id, after `delay`
  kReconcile,   // look the operation up, `delay` after the attempt's hard deadline
  kNeedsHuman,  // park the operation until a person resolves it
};

std::string_view FailureActionName(FailureAction action);  // "fail_step", "retry", ...

struct FailureReport {
  FailureKind reported = FailureKind::kUnknown;
  std::string_view code;  // the provider's or the engine's code; may be empty
  int attempts_made = 1;  // attempts started so far, this one included
  // Some earlier attempt ended unknown and no lookup has since answered not_found: the effect
  // may already exist, so this operation can no longer simply fail.
  bool earlier_outcome_unknown = false;
  std::chrono::milliseconds since_first_attempt{0};  // for the dedup window
  // The dispatcher withdrew the attempt before any worker took it (a schedule-to-start
  // timeout): it is known not to have started, so it is retryable whatever the class and
  // whatever the code. Only the engine's own dispatcher sets it, never a worker's report.
  bool not_started = false;
};

// Codes the engine reports for attempts it gave up on (besides deadline_exceeded, lease_lost
// and engine_restart): the tool did not heartbeat within the contract's heartbeat_timeout (an
// unknown outcome), or no worker took the attempt within schedule_to_start_timeout (not
// started: retryable for every class).
inline constexpr std::string_view kHeartbeatTimeoutCode = "heartbeat_timeout";
inline constexpr std::string_view kScheduleToStartTimeoutCode = "schedule_to_start_timeout";

struct FailureDecision {
  FailureAction action = FailureAction::kFailStep;
  FailureKind kind = FailureKind::kUnknown;  // after ClassifyFailure
  std::chrono::milliseconds delay{0};
  std::string reason;  // for traces: "unknown outcome of a non_repeatable_write: reconcile"

  friend bool operator==(const FailureDecision&, const FailureDecision&) = default;
};

// Precondition: ValidateContract(contract) succeeded.
FailureDecision DecideAfterFailure(const ToolContract& contract, const FailureReport& report);

// After a lookup answered still_unknown; `lookups_made` counts the lookups so far. Reconciles
// again after reconcile.backoff, or needs a human once reconcile.max_attempts is reached.
FailureDecision DecideAfterStillUnknown(const ToolContract& contract, int lookups_made);

}  // namespace reckon
