// Engine: child workflows (engine/child_workflow.h). The start of a child is chained to its
// parent's batch (Decider::StartChildWorkflow); from here the engine reserves the child's id
// while that batch commits, drives the child once it is durable, tells the parent when the
// child's chain ends, and applies the parent-close policy.
#include <spdlog/spdlog.h>

#include "reckon/engine/engine.h"
#include "reckon/engine/engine_slot.h"

namespace reckon {

using namespace storage;

ChildReserver Engine::ChildReserverFor(std::vector<std::string>& reserved) {
  return [this, &reserved](const std::string& child_id) -> Result<void> {
    auto in_use = [&] {
      return Err(Errc::kAlreadyExists,
                 "a workflow with id '" + child_id + "' exists already (or is being started); "
                 "give the child a workflow id of its own");
    };
    if (FindSlot(child_id) != nullptr || reserved_children_.count(child_id)) return in_use();
    RECKON_TRY(auto latest, Read(journal_.FindLatestRun(child_id)));
    if (latest) return in_use();
    reserved_children_.insert(child_id);
    reserved.push_back(child_id);
    return Ok();
  };
}

void Engine::ReleaseChildIds(const std::vector<std::string>& reserved) {
  for (const std::string& id : reserved) reserved_children_.erase(id);
}

void Engine::BeginChildren(const std::vector<NextRun>& children) {
  for (const NextRun& child : children) {
    auto slot = std::make_unique<Slot>(child.ref, next_serial_++);
    Slot& s = *slot;
    slots_[child.ref.workflow_id] = std::move(slot);
    if (auto folded = s.state.ApplyAll(child.events); !folded) {
      Stop(s, folded.error());
      continue;
    }
    s.start_type = s.state.workflow_type();
    s.start_input_json = s.state.input_json();
    s.replay_history = child.events;
    sinks_.OnCommitted(s.state, child.events);
    // Its first activation runs the code from WorkflowStarted, as a restart would.
    Submit(s, RecoverInput{});
  }
}

ChildWorkflowClosed Engine::ClosedOf(const RunState& run) {
  ChildWorkflowClosed closed;
  closed.child_workflow_id = run.ref().workflow_id;
  closed.child_run_id = run.ref().run_id;
  switch (run.status()) {
    case RunStatus::kCompleted:
      closed.status = std::string(kChildCompleted);
      closed.result_json = run.result_json();
      break;
    case RunStatus::kCancelled:
      closed.status = std::string(kChildCancelled);
      closed.code = "workflow_cancelled";
      closed.message = "child workflow '" + run.ref().workflow_id + "' was cancelled" +
                       (run.cancel_reason().empty() ? "" : ": " + run.cancel_reason());
      break;
    default:
      closed.status = std::string(kChildFailed);
      closed.code = run.failure_code().empty() ? "child_failed" : run.failure_code();
      closed.message = "child workflow '" + run.ref().workflow_id + "' failed" +
                       (run.failure_message().empty() ? "" : ": " + run.failure_message());
      break;
  }
  return closed;
}

void Engine::TellParent(const RunState& run) {
  if (run.parent_workflow_id().empty()) return;
  Slot* parent = FindSlot(run.parent_workflow_id());
  // A parent run that closed (or moved on to its next run) waits on nothing.
  if (parent == nullptr || parent->state.ref().run_id != run.parent_run_id() ||
      parent->state.terminal()) {
    return;
  }
  Submit(*parent, ChildDoneInput{ClosedOf(run)});
}

void Engine::WatchChild(Slot& parent, const WatchChildAction& action) {
  if (Slot* child = FindSlot(action.child_workflow_id); child != nullptr) {
    if (!child->state.terminal()) return;  // it tells the parent when it ends
    Submit(parent, ChildDoneInput{ClosedOf(child->state)});
    return;
  }
  auto latest = Read(journal_.FindLatestRun(action.child_workflow_id));
  if (!latest) {
    spdlog::error("run {}: cannot read child {}: {}", parent.state.ref().workflow_id,
                  action.child_workflow_id, latest.error().ToString());
    return;
  }
  ChildWorkflowClosed closed;
  closed.step_id = action.step_id;
  closed.child_workflow_id = action.child_workflow_id;
  if (!latest.value()) {
    // Its start was committed with the parent's batch, so only retention can have removed it.
    closed.status = std::string(kChildFailed);
    closed.code = "child_not_found";
    closed.message = "child workflow '" + action.child_workflow_id +
                     "' is no longer in the journal (archived?); its result is lost";
    Submit(parent, ChildDoneInput{std::move(closed)});
    return;
  }
  if (!IsTerminal(latest.value()->status) ||
      latest.value()->status == RunStatus::kContinuedAsNew) {
    return;  // running, held by another engine life or server: nothing to learn yet
  }
  auto events = Read(journal_.ReadEvents(latest.value()->ref));
  if (!events) return;
  RunState state(latest.value()->ref);
  if (!state.ApplyAll(events.value())) return;
  closed = ClosedOf(state);
  closed.step_id = action.step_id;
  Submit(parent, ChildDoneInput{std::move(closed)});
}

void Engine::CancelChild(const CancelChildAction& action) {
  Slot* child = FindSlot(action.child_workflow_id);
  if (child == nullptr || child->state.terminal()) return;
  child->cancel_wanted = action.reason;
  Submit(*child, CancelInput{action.reason, "reckon"});
}

void Engine::CancelOrphan(Slot& child) {
  const RunState& run = child.state;
  if (run.parent_workflow_id().empty() || run.terminal()) return;
  auto policy = ParseParentClosePolicy(run.parent_close_policy());
  if (policy && *policy == ParentClosePolicy::kAbandon) return;
  if (Slot* parent = FindSlot(run.parent_workflow_id()); parent != nullptr) {
    if (parent->state.ref().run_id == run.parent_run_id() && !parent->state.terminal()) return;
  } else {
    auto latest = Read(journal_.FindLatestRun(run.parent_workflow_id()));
    if (!latest) return;
    if (latest.value() && latest.value()->ref.run_id == run.parent_run_id() &&
        !IsTerminal(latest.value()->status)) {
      return;
    }
  }
  CancelChild(CancelChildAction{run.ref().workflow_id,
                                "its parent run '" + run.parent_workflow_id() + "' (run id " +
                                    run.parent_run_id() + ") closed"});
}

}  // namespace reckon
