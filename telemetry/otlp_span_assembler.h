// OtlpSpanAssembler: turns a run's durable events into OpenTelemetry spans as they commit.
//
// Shape of a trace (ids from telemetry/otlp_ids.h, so a replay or restart reproduces them):
//   - one root span per run, "workflow <type>", from WorkflowStarted to the run's terminal
//     event, with the run's own trace lines (started, timers, signals, completed/failed) as
//     span events;
//   - one child span per operation, "execute_tool <tool>", from OperationPrepared to its
//     commit or rejection, with one span event per transition: operation.prepared,
//     approval.requested/granted (with the principal), operation.attempted,
//     operation.outcome_unknown (with its reason), operation.reconciling/reconciled (with the
//     result), operation.committed or operation.rejected, and the rest of trace_lines.h.
//   Attributes: gen_ai.operation.name=execute_tool, gen_ai.tool.name, gen_ai.tool.call.id (the
//   operation id), reckon.workflow.id, reckon.run.id, reckon.step, reckon.side_effect,
//   reckon.attempt, reckon.state. Event attributes are the trace line's, minus what the span
//   already says. Inputs, results and secret fields never appear: only trace lines are used.
//
// A span is returned when it ends: an operation span at its commit or rejection, the run span
// (and any operation span still open, e.g. one awaiting approval when the run was cancelled)
// when the run ends. Until then its events wait here, so memory grows with the open runs and
// their events. A span whose beginning this assembler did not see (the process started while
// the run was under way) starts at the first event it saw and carries reckon.partial=true;
// its earlier events are in the journal (`reckon trace`). A run the engine stopped driving
// (OnRunStopped) is forgotten: a restart resumes it, and its spans end then.
//
// Not thread-safe: used on the engine's loop. The RunState is read only during Add().
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "reckon/engine/run_state.h"
#include "reckon/storage/event.h"
#include "reckon/telemetry/otlp_span.h"

namespace reckon {

class OtlpSpanAssembler {
 public:
  // Folds `events` (just committed, non-empty, already applied to `run`) and returns the spans
  // they ended, operation spans before their run span.
  std::vector<OtlpSpan> Add(const RunState& run, std::span<const storage::Event> events);
  // Forgets what it held of `run`.
  void Forget(const storage::RunRef& run);
  // Runs with at least one open span.
  std::size_t open_runs() const { return runs_.size(); }

 private:
  struct OpenSpan {
    std::int64_t start_us = 0;
    std::int64_t last_us = 0;
    bool saw_start = false;
    std::vector<OtlpEvent> events;
  };
  struct OpenRun {
    std::string trace_id;  // the run's ids (telemetry/otlp_ids.h), hashed once per run
    std::string span_id;
    OpenSpan span;
    std::string failure_code;
    std::map<std::string, OpenSpan> operations;  // by operation id
  };

  OtlpSpan FinishOperation(const RunState& run, const OpenRun& parent,
                           const std::string& operation_id, OpenSpan open);
  OtlpSpan FinishRun(const RunState& run, OpenRun open);

  std::unordered_map<std::string, OpenRun> runs_;  // by workflow id + '\n' + run id
};

}  // namespace reckon
