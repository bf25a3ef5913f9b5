// The decider's part in child workflows (engine/child_workflow.h): starting a child in the
// parent's batch, journaling its end, and applying the parent-close policy when the run closes.
#include "reckon/engine/decider.h"

#include "reckon/base/identifier.h"
#include "reckon/base/intent_hash.h"
#include "reckon/base/jcs.h"

namespace reckon {

using namespace storage;

Result<void> Decider::StartChildWorkflow(StartChild command) {
  const RunRef& ref = state_.ref();
  if (state_.children().count(command.step_id)) {
    return Err(Errc::kNondeterminism, "step '" + command.step_id + "' of run '" +
                                          ref.workflow_id + "' started a child twice");
  }
  std::string child_id = command.workflow_id.empty()
                             ? DefaultChildId(ref.workflow_id, ref.run_id, command.step_id)
                             : command.workflow_id;
  const std::string policy(ParentClosePolicyName(command.policy));
  auto refuse = [&](std::string code, std::string message) -> Result<void> {
    RECKON_TRY(Emit(ChildWorkflowInitiated{command.step_id, child_id, "", command.workflow_type,
                                           command.input_json, policy}));
    return Emit(ChildWorkflowClosed{command.step_id, child_id, "", std::string(kChildRefused),
                                    "", std::move(code), std::move(message)});
  };
  if (auto valid = ValidateId(IdKind::kWorkflowId, child_id); !valid) {
    return refuse("invalid_child", "the child workflow id is not valid: " +
                                       valid.error().message() +
                                       (command.workflow_id.empty()
                                            ? "; the id derived from the parent's is too long, "
                                              "give the child an id of its own"
                                            : ""));
  }
  if (auto valid = ValidateId(IdKind::kWorkflowType, command.workflow_type); !valid) {
    return refuse("invalid_child", valid.error().message());
  }
  if (child_id == ref.workflow_id) {
    return refuse("invalid_child", "a workflow cannot start itself as its child ('" +
                                       child_id + "'); give the child another id");
  }
  if (!ParseStrictJson(command.input_json)) {
    return refuse("invalid_input", "the child's input is not JSON");
  }
  if (!child_reserver_) {
    return refuse("child_workflows_unavailable",
                  "this engine starts no child workflows (cluster mode; docs/ARCHITECTURE.md)");
  }
  if (auto reserved = child_reserver_(child_id); !reserved) {
    return refuse("child_id_in_use", reserved.error().message());
  }
  const std::int64_t now_us = ToMicros(now_);
  const std::string child_run =
      "r" + std::to_string(now_us) + "-" +
      ToHex(Sha256(ref.run_id + "/" + command.step_id)).substr(0, 8);
  RECKON_TRY(Emit(ChildWorkflowInitiated{command.step_id, child_id, child_run,
                                         command.workflow_type, command.input_json, policy}));
  NextRun start{RunRef{child_id, child_run}, command.workflow_type, {}};
  start.events.push_back(Event{1, now_us,
                               WorkflowStarted{command.workflow_type, command.input_json, "",
                                               state_.started_by(), kRunScopedIds,
                                               options_.id_namespace, "", ref.workflow_id,
                                               ref.run_id, policy}});
  child_starts_.push_back(std::move(start));
  return Ok();
}

Result<void> Decider::ChildClosed(ChildWorkflowClosed closed) {
  if (state_.terminal()) return Ok();  // it no longer waits on its children
  const ChildRecord* child = nullptr;
  for (const auto& [step, record] : state_.children()) {
    if (closed.step_id.empty() ? record.child_workflow_id == closed.child_workflow_id
                               : step == closed.step_id) {
      child = &record;
    }
  }
  if (child == nullptr || child->closed || child->child_run_id.empty()) return Ok();
  closed.step_id = child->step_id;
  return Emit(std::move(closed));
}

Result<void> Decider::EmitClose(EventBody terminal) {
  std::vector<std::pair<std::string, const ChildRecord*>> open;
  for (const auto& [step, child] : state_.children()) {
    if (!child.closed && !child.child_run_id.empty()) open.emplace_back(step, &child);
  }
  for (const auto& [step, child] : open) {
    ParentClosePolicy policy = child->policy;
    if (policy == ParentClosePolicy::kWait) {
      // The code holds its close while a `wait` child runs (WorkflowInstance); a run closed
      // anyway (cancelled, history too large) cannot wait, and its child is cancelled.
      policy = ParentClosePolicy::kCancel;
    }
    const std::string child_id = child->child_workflow_id;
    RECKON_TRY(Emit(ChildPolicyApplied{step, child_id, std::string(ParentClosePolicyName(policy))}));
    if (policy == ParentClosePolicy::kCancel) {
      actions_.push_back(CancelChildAction{
          child_id, "its parent run '" + state_.ref().workflow_id + "' (run id " +
                        state_.ref().run_id + ") closed"});
    }
  }
  return Emit(std::move(terminal));
}

}  // namespace reckon
