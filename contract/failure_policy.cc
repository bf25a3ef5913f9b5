#include "reckon/contract/failure_policy.h"

#include <algorithm>
#include <vector>

namespace reckon {
namespace {

bool Lists(const std::vector<std::string>& codes, std::string_view code) {
  return !code.empty() && std::find(codes.begin(), codes.end(), code) != codes.end();
}

FailureKind Classify(const ToolContract& c, SideEffect effective, FailureKind reported,
                     std::string_view code) {
  if (reported == FailureKind::kUnknown || Lists(c.unknown_codes, code)) {
    return FailureKind::kUnknown;
  }
  if (Lists(c.definitive_codes, code)) return FailureKind::kDefinitive;
  if (Lists(c.retry.retryable_codes, code)) return FailureKind::kRetryable;
  if (reported == FailureKind::kRetryable && effective == SideEffect::kNonRepeatableWrite) {
    return FailureKind::kUnknown;
  }
  return reported;
}

// The effect may exist and cannot be retried: look it up, or ask a person.
FailureDecision Unresolved(const ToolContract& c, FailureKind kind, std::string why) {
  switch (c.reconcile.mode) {
    case ReconcileMode::kLookup:
      return {FailureAction::kReconcile, kind, c.reconcile.grace, why + ": reconcile"};
    case ReconcileMode::kNeedsHuman:
      return {FailureAction::kNeedsHuman, kind, {},
              why + ": needs_human (the contract's fallback)"};
    case ReconcileMode::kUnset:
      break;
  }
  // Only an idempotent_write may leave the mode unset (ValidateContract): repeating it later
  // is harmless, so failing the step with the outcome unknown is honest.
  return {FailureAction::kFailStep, kind, {}, why + ": no reconcile policy, the step fails"};
}

}  // namespace

std::string_view FailureKindName(FailureKind kind) {
  switch (kind) {
    case FailureKind::kDefinitive: return "definitive";
    case FailureKind::kRetryable: return "retryable";
    case FailureKind::kUnknown: return "unknown";
  }
  return "invalid";
}

std::string_view FailureActionName(FailureAction action) {
  switch (action) {
    case FailureAction::kFailStep: return "fail_step";
    case FailureAction::kRetry: return "retry";
    case FailureAction::kReconcile: return "reconcile";
    case FailureAction::kNeedsHuman: return "needs_human";
  }
  return "invalid";
}

FailureKind ClassifyFailure(const ToolContract& contract, FailureKind reported,
                            std::string_view code) {
  return Classify(contract, contract.side_effect, reported, code);
}

FailureDecision DecideAfterFailure(const ToolContract& c, const FailureReport& r) {
  const std::chrono::milliseconds retry_delay = c.retry.backoff.Delay(r.attempts_made);
  SideEffect effective = c.side_effect;
  std::string class_name(SideEffectName(effective));
  // A retry is sent `retry_delay` from now; the provider must still remember the key then.
  if (effective == SideEffect::kDeduplicatedWrite && c.dedup_window &&
      r.since_first_attempt + retry_delay >= *c.dedup_window) {
    effective = SideEffect::kNonRepeatableWrite;
    class_name = "deduplicated_write past its dedup window";
  }
  // Withdrawn before any worker saw it: nothing can have happened, whatever the class.
  const FailureKind kind =
      r.not_started ? FailureKind::kRetryable : Classify(c, effective, r.reported, r.code);
  const bool budget_left = r.attempts_made < c.retry.max_attempts;
  const bool write = IsWrite(effective);

  switch (kind) {
    case FailureKind::kDefinitive:
      if (write && r.earlier_outcome_unknown) {
        return Unresolved(c, kind, "definitive rejection after an earlier unknown outcome");
      }
      return {FailureAction::kFailStep, kind, {}, "definitive rejection: the step fails"};
    case FailureKind::kRetryable:
      if (budget_left) {
        return {FailureAction::kRetry, kind, retry_delay, "retryable: retry the same operation id"};
      }
      if (write && r.earlier_outcome_unknown) {
        return Unresolved(c, kind, "retries exhausted after an earlier unknown outcome");
      }
      return {FailureAction::kFailStep, kind, {}, "retryable, but retry.max_attempts reached"};
    case FailureKind::kUnknown:
      break;
  }
  if (effective == SideEffect::kReadOnly) {
    if (budget_left) return {FailureAction::kRetry, kind, retry_delay, "unknown read: retry"};
    return {FailureAction::kFailStep, kind, {}, "unknown read, and retry.max_attempts reached"};
  }
  if (effective != SideEffect::kNonRepeatableWrite && !c.retry.reconcile_on_unknown &&
      budget_left) {
    return {FailureAction::kRetry, kind, retry_delay,
            "unknown outcome of a " + class_name + ": retry the same operation id"};
  }
  std::string why = "unknown outcome of a " + class_name;
  if (effective != SideEffect::kNonRepeatableWrite && !c.retry.reconcile_on_unknown) {
    why += ", and retry.max_attempts reached";
  }
  return Unresolved(c, kind, why);
}

FailureDecision DecideAfterStillUnknown(const ToolContract& c, int lookups_made) {
  if (c.reconcile.mode == ReconcileMode::kLookup && lookups_made < c.reconcile.max_attempts) {
    return {FailureAction::kReconcile, FailureKind::kUnknown,
            c.reconcile.backoff.Delay(lookups_made), "still_unknown: look up again"};
  }
  return {FailureAction::kNeedsHuman, FailureKind::kUnknown, {},
          "still_unknown after reconcile.max_attempts lookups: needs_human"};
}

}  // namespace reckon
