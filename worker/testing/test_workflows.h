// Small workflows that engine tests share.
#pragma once

#include <boost/json/value.hpp>

#include <string>

#include "reckon/worker/task.h"
#include "reckon/worker/workflow_context.h"

namespace reckon::testing {

inline constexpr char kCallOnce[] = "call_once";

// Calls input.tool with input.input (at input.step, if given) and completes with
// {"ref": provider reference, "output": the tool's output}, or fails with the call's failure.
Task<WorkflowOutcome> CallOnce(WorkflowContext& ctx, boost::json::value input);

boost::json::value CallOnceInput(const std::string& tool, boost::json::value tool_input,
                                 const std::string& step_id = "");

}  // namespace reckon::testing
