// Child workflows: a run starting another workflow (ctx.StartChild) and awaiting its result.
//
// The child's first run is committed in the same transaction as the parent's
// ChildWorkflowInitiated (storage::AppendRequest::chained), so a crash leaves either both or
// neither: the child is never lost and never started twice. Its WorkflowStarted names the parent
// run and the parent-close policy. When the child's workflow id ends (the last run of its chain
// completes, fails or is cancelled), the engine tells the parent, which journals
// ChildWorkflowClosed; a parent that restarts asks the journal again for each child it still
// waits on, so the news is delivered at least once and journaled exactly once.
//
// The parent-close policy decides what happens to a child still running when the parent run
// closes (completes, fails, is cancelled or continues as new):
//   - kAbandon: nothing; the child runs on by itself.
//   - kCancel:  the child is asked to cancel (Engine::Cancel's rules: operations that may have
//               acted are never forgotten). The default.
//   - kWait:    the parent's code does not close the run while such a child runs: its result
//               (completion, failure, continue-as-new) is held until the child ends. A run the
//               engine ends by itself (cancelled, history too large) cannot wait: its children
//               are then cancelled.
// Plain value types and pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace reckon {

enum class ParentClosePolicy { kAbandon, kCancel, kWait };

std::string_view ParentClosePolicyName(ParentClosePolicy policy);
std::optional<ParentClosePolicy> ParseParentClosePolicy(std::string_view name);

// What a parent's history says of one child, by the step that started it.
struct ChildRecord {
  std::string step_id;
  std::string child_workflow_id;
  std::string child_run_id;  // empty: the start was refused
  std::string workflow_type;
  ParentClosePolicy policy = ParentClosePolicy::kCancel;
  bool closed = false;  // ChildWorkflowClosed journaled
  std::string status;   // of the close: completed | failed | cancelled | refused
};

// The child id a StartChild without an id gets: "<parent id>/<parent run id>/<step id>" with
// the characters a workflow id may not hold turned to '-' ("order-1/r17.../child-3"); unique
// per parent run and step, the same on every replay of the run.
std::string DefaultChildId(std::string_view parent_workflow_id, std::string_view parent_run_id,
                           std::string_view step_id);

// Child statuses in ChildWorkflowClosed.
inline constexpr std::string_view kChildCompleted = "completed";
inline constexpr std::string_view kChildFailed = "failed";
inline constexpr std::string_view kChildCancelled = "cancelled";
inline constexpr std::string_view kChildRefused = "refused";

}  // namespace reckon
