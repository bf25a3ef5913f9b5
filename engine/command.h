// Commands: what workflow code asks the engine to do, returned by an activation
// (engine/workflow_host.h). The engine turns each command into journal events before acting.
// Plain value types.
#pragma once

#include <boost/json/value.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "reckon/contract/call_overrides.h"
#include "reckon/engine/child_workflow.h"

namespace reckon {

// Call a tool at a step. `replayed` marks a call that the code issued again while replaying a
// step already in the history: nothing new is scheduled, but the engine re-learns the full
// input (the journal holds it only without its secret fields) and checks it still matches.
struct ScheduleCall {
  std::string step_id;
  std::string tool;
  boost::json::value input;
  bool replayed = false;
  CallOverrides overrides;
};

struct StartTimer {
  std::string timer_id;
  std::int64_t fire_at_us = 0;
};

// The kind of the marker WorkflowContext::WaitSignal records: its value is the signal's name
// as a JSON string, its step id "signal:<name>#<k>" for the k-th wait on that name (a count of
// its own, so the step ids of calls, timers and other markers are what they were before waits
// were recorded). RunState folds these into the signals a run still waits for.
inline constexpr std::string_view kWaitSignalMarker = "wait_signal";
// A wait with a timeout (ctx.WaitSignal(name, timeout)) that timed out: the k-th wait on that
// name no longer waits. Its step id is "signal:<name>#<k>:timeout", its value the name as a
// JSON string; RunState counts it against the waits.
inline constexpr std::string_view kWaitSignalEndMarker = "wait_signal_end";

// A value the code drew from the world (now, random) that replay must see again, or a fact
// about the code worth keeping (kWaitSignalMarker).
struct RecordMarker {
  std::string step_id;
  std::string kind;
  std::string value_json;
};

struct CompleteWorkflow {
  std::string result_json;
};

struct FailWorkflow {
  std::string code;
  std::string message;
};

// The code of a FailWorkflow that ends a run as cancelled: the code let a cancellation it was
// told of (worker/workflow_cancelled.h) end the run. Without a cancel request in the history,
// a FailWorkflow of this code (a cancelled child's failure, passed on) fails the run as usual.
inline constexpr std::string_view kWorkflowCancelledCode = "workflow_cancelled";

// The kind of the marker ctx.Patched records the first time a run passes a patch: its step id
// is "patch:<change id>", its value the change id as a JSON string.
inline constexpr std::string_view kPatchMarker = "patch";

// A signal the run received and its code had not consumed when it continued as new: the next
// run receives it first.
struct CarriedSignal {
  std::string name;
  std::string payload_json;
  std::string sent_by;
};

// End the run and start the next run of its workflow id with `input_json` (canonical JSON), in
// one transaction (ctx.ContinueAsNew).
struct ContinueAsNew {
  std::string input_json;
  std::vector<CarriedSignal> signals;
};

// Start a child workflow at a step (ctx.StartChild; engine/child_workflow.h). Issued only the
// first time the code reaches the step: a replayed start is matched against the history by
// the code itself and sends nothing.
struct StartChild {
  std::string step_id;
  std::string workflow_id;  // the child's; empty: DefaultChildId
  std::string workflow_type;
  std::string input_json;   // canonical JSON
  ParentClosePolicy policy = ParentClosePolicy::kCancel;
};

// The handler of accepted update `update_id` returned (ctx.OnUpdate): its result (canonical
// JSON), or an error (error_code non-empty). The engine journals UpdateCompleted and answers
// the caller once it is durable.
struct CompleteUpdate {
  std::string update_id;
  std::string result_json;
  std::string error_code;
  std::string error_message;
};

using Command = std::variant<ScheduleCall, StartTimer, RecordMarker, CompleteWorkflow,
                             FailWorkflow, ContinueAsNew, StartChild, CompleteUpdate>;

}  // namespace reckon
