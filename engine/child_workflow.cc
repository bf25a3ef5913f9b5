#include "reckon/engine/child_workflow.h"

namespace reckon {

std::string_view ParentClosePolicyName(ParentClosePolicy policy) {
  switch (policy) {
    case ParentClosePolicy::kAbandon: return "abandon";
    case ParentClosePolicy::kCancel: return "cancel";
    case ParentClosePolicy::kWait: return "wait";
  }
  return "cancel";
}

std::optional<ParentClosePolicy> ParseParentClosePolicy(std::string_view name) {
  if (name == "abandon") return ParentClosePolicy::kAbandon;
  if (name == "cancel") return ParentClosePolicy::kCancel;
  if (name == "wait") return ParentClosePolicy::kWait;
  return std::nullopt;
}

std::string DefaultChildId(std::string_view parent_workflow_id, std::string_view parent_run_id,
                           std::string_view step_id) {
  std::string id(parent_workflow_id);
  id += '/';
  id += parent_run_id;
  id += '/';
  // Step ids ("child#3") hold characters a workflow id may not.
  for (char c : step_id) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '_' || c == '-' || c == '.' || c == ':' || c == '@' || c == '/';
    id += plain ? c : '-';
  }
  return id;
}

}  // namespace reckon
