#include "reckon/storage/rows.h"

#include <array>

#include "reckon/base/enum_names.h"

namespace reckon::storage {
namespace {

constexpr std::array<std::string_view, 5> kRunStatuses = {"running", "completed", "failed",
                                                           "cancelled", "continued_as_new"};
constexpr std::array<std::string_view, 3> kApprovalStates = {"requested", "granted", "denied"};

}  // namespace

std::string_view RunStatusName(RunStatus status) { return EnumName(kRunStatuses, status); }
Result<RunStatus> ParseRunStatus(std::string_view name) {
  return ParseEnum<RunStatus>(kRunStatuses, "run status", name);
}

std::string_view ApprovalStateName(ApprovalState state) {
  return EnumName(kApprovalStates, state);
}
Result<ApprovalState> ParseApprovalState(std::string_view name) {
  return ParseEnum<ApprovalState>(kApprovalStates, "approval state", name);
}

}  // namespace reckon::storage
