#include "reckon/storage/event.h"

#include <array>

#include "reckon/base/enum_names.h"

namespace reckon::storage {
namespace {

constexpr std::array<std::string_view, 5> kCommitSources = {"attempt", "late_completion",
                                                            "reconciliation", "human", "callback"};
constexpr std::array<std::string_view, 3> kVerdicts = {"committed", "not_found",
                                                       "still_unknown"};
constexpr std::array<std::string_view, 3> kRetryReasons = {
    "unknown_outcome", "reconciled_not_found", "human_not_committed"};

}  // namespace

std::string_view CommitSourceName(CommitSource source) {
  return EnumName(kCommitSources, source);
}
Result<CommitSource> ParseCommitSource(std::string_view name) {
  return ParseEnum<CommitSource>(kCommitSources, "commit source", name);
}

std::string_view ReconcileVerdictName(ReconcileVerdict verdict) {
  return EnumName(kVerdicts, verdict);
}
Result<ReconcileVerdict> ParseReconcileVerdict(std::string_view name) {
  return ParseEnum<ReconcileVerdict>(kVerdicts, "reconcile verdict", name);
}

std::string_view RetryReasonName(RetryReason reason) { return EnumName(kRetryReasons, reason); }
Result<RetryReason> ParseRetryReason(std::string_view name) {
  return ParseEnum<RetryReason>(kRetryReasons, "retry reason", name);
}

}  // namespace reckon::storage
