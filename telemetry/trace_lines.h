// Trace lines: the structured, human-facing form of journal events, one or more lines per
// event (`operation.attempted id=... attempt=2`). Derived from events after they are durable,
// so a trace never claims what the journal does not hold. Pure functions; every trace sink
// (telemetry/log_trace_sink.h, telemetry/jsonl_trace_sink.h) and `reckon trace` use them.
//
// What a line carries: workflow and operation ids, tool, step, attempt, intent hash (a prefix
// of the hash only), policy decision, approval reference, reconciliation result, provider
// reference, and OpenTelemetry GenAI names (gen_ai.operation.name=execute_tool,
// gen_ai.tool.name, gen_ai.tool.call.id). What it never carries: inputs, results, secrets,
// payment details.
#pragma once

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "reckon/engine/run_state.h"
#include "reckon/storage/event.h"

namespace reckon {

struct TraceLine {
  std::string name;  // "operation.attempted"
  std::vector<std::pair<std::string, std::string>> attributes;
};

// How much of the run and operation identity a line repeats: all of it (workflow_id, and on
// operation lines id, tool, step and the gen_ai.* names: the log and JSON-lines sinks), or
// none of it (kEventOnly: the OTLP span assembler, whose spans carry it once for all their
// events). The lines' names and other attributes are the same either way.
enum class TraceLineDetail { kFull, kEventOnly };

// The trace lines for `events` of `run`. `run` must already include the events (operation
// attributes such as the tool are looked up in it).
std::vector<TraceLine> TraceLinesFor(const RunState& run, std::span<const storage::Event> events,
                                     TraceLineDetail detail = TraceLineDetail::kFull);

// One line of the JSON-lines trace: {"ts_us":..,"seq":..,"event":"operation.attempted",...}
// (no trailing newline). `event` is the journal event the line was derived from.
std::string TraceLineJson(const storage::Event& event, const TraceLine& line);

}  // namespace reckon
