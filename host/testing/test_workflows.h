// Small workflows that engine tests (and the test worker, reckon-test-worker) share.
#pragma once

#include <boost/json/value.hpp>

#include <chrono>
#include <string>

#include "reckon/base/error.h"
#include "reckon/worker/task.h"
#include "reckon/worker/workflow_context.h"
#include "reckon/worker/workflow_registry.h"

namespace reckon::testing {

inline constexpr char kCallOnce[] = "call_once";
inline constexpr char kSleepThenCall[] = "sleep_then_call";
inline constexpr char kSignalThenCall[] = "signal_then_call";
inline constexpr char kCallThenPublish[] = "call_then_publish";
inline constexpr char kStartChild[] = "start_child";
inline constexpr char kLedger[] = "ledger";
inline constexpr char kUndoOnCancel[] = "undo_on_cancel";
inline constexpr char kContinueN[] = "continue_n";

// Calls input.tool with input.input (at input.step, if given) and completes with
// {"ref": provider reference, "output": the tool's output}, or fails with the call's failure.
Task<WorkflowOutcome> CallOnce(WorkflowContext& ctx, boost::json::value input);

boost::json::value CallOnceInput(const std::string& tool, boost::json::value tool_input,
                                 const std::string& step_id = "");

// Starts child workflow input.id (empty: a derived id) of type input.type with input.input,
// awaits it, and completes with {"child": its result}, or fails with its failure.
Task<WorkflowOutcome> StartChildOnce(WorkflowContext& ctx, boost::json::value input);

// Sleeps input.sleep_ms (a durable timer, step "sleep#1"), then does what CallOnce does with
// input.tool and input.input.
Task<WorkflowOutcome> SleepThenCall(WorkflowContext& ctx, boost::json::value input);

boost::json::value SleepThenCallInput(std::chrono::milliseconds sleep, const std::string& tool,
                                      boost::json::value tool_input);

// Waits for the signal named input.signal, then does what CallOnce does with input.tool and
// input.input; completes with {"signal": the payload as JSON text, "ref", "output"}.
Task<WorkflowOutcome> SignalThenCall(WorkflowContext& ctx, boost::json::value input);

boost::json::value SignalThenCallInput(const std::string& signal, const std::string& tool,
                                       boost::json::value tool_input);

// SignalThenCall's input, with cancellation handled (worker/workflow_cancelled.h): calls
// input.tool with input.input (step "<tool>#1"), then waits for signal input.signal. Told of a
// cancel, it calls the tool again at step "undo" with the same input, then ends the run
// cancelled; with the signal, it completes with {"signal": the payload}.
Task<WorkflowOutcome> UndoOnCancel(WorkflowContext& ctx, boost::json::value input);

// A chain of runs: input {"n", "rounds"}; while n < rounds it continues as new with n + 1,
// then completes with {"n": n}. So rounds + 1 runs.
Task<WorkflowOutcome> ContinueN(WorkflowContext& ctx, boost::json::value input);

// Does what CallOnce does with input.tool and input.input, then publishes input.messages
// (default 1) messages to input.subject through the outbox (ctx.Publish, steps publish#2 ..
// publish#N+1: the call is step 1),
// each {"workflow": the workflow id, "n": 1..N, "ref": the call's provider reference};
// completes with {"ref", "message_ids": [...]}. A failed call publishes nothing.
Task<WorkflowOutcome> CallThenPublish(WorkflowContext& ctx, boost::json::value input);

boost::json::value CallThenPublishInput(const std::string& tool, boost::json::value tool_input,
                                        const std::string& subject, int messages);

// Queries and updates: keeps a total. Query "total" answers it. Update "add" takes
// {"n": a positive whole number (else the validator rejects it), "hold": optional bool}: with
// hold it first waits for signal "release" (so a test can stop the server mid-handler), then
// charges n cents to account acct-7 through tool "charge" and answers {"total": the new total}.
// The run completes with {"total"} on signal "stop".
Task<WorkflowOutcome> Ledger(WorkflowContext& ctx, boost::json::value input);

// Registers the workflows above under their names.
Result<void> RegisterTestWorkflows(WorkflowRegistry& workflows);

}  // namespace reckon::testing
