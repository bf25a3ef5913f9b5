#include "reckon/telemetry/otlp_span_assembler.h"

#include <optional>
#include <algorithm>
#include <type_traits>

#include "reckon/telemetry/otlp_ids.h"
#include "reckon/telemetry/trace_lines.h"

namespace reckon {

using namespace storage;

namespace {

std::string Key(const RunRef& ref) { return ref.workflow_id + '\n' + ref.run_id; }

// The operation an event is about, if any.
std::optional<std::string> OperationOf(const Event& event) {
  return std::visit(
      [](const auto& body) -> std::optional<std::string> {
        if constexpr (requires { body.operation_id; }) {
          return body.operation_id;
        } else {
          return std::nullopt;
        }
      },
      event.body);
}

// What a span already carries, so its events need not repeat it.
bool OnTheSpan(const std::string& key) {
  return key == "workflow_id" || key == "run" || key == "id" || key == "tool" ||
         key == "step" || key.rfind("gen_ai.", 0) == 0;
}

OtlpEvent EventFrom(const Event& event, TraceLine line) {
  OtlpEvent out{event.recorded_at_us * 1000, std::move(line.name), {}};
  for (auto& [key, value] : line.attributes) {
    if (OnTheSpan(key)) continue;
    out.attributes.emplace_back(std::move(key), OtlpValue(std::move(value)));
  }
  return out;
}

void Touch(OtlpSpan& span, std::int64_t start_us, std::int64_t end_us) {
  span.start_unix_ns = start_us * 1000;
  span.end_unix_ns = std::max(start_us, end_us) * 1000;
}

}  // namespace

std::vector<OtlpSpan> OtlpSpanAssembler::Add(const RunState& run, std::span<const Event> events) {
  std::vector<OtlpSpan> ended;
  if (events.empty()) return ended;
  auto [it, fresh] = runs_.try_emplace(Key(run.ref()));
  OpenRun& open = it->second;
  if (fresh) {
    open.span.start_us = events.front().recorded_at_us;
    open.trace_id = OtlpTraceId(run.ref().workflow_id, run.ref().run_id);
    open.span_id = OtlpRunSpanId(run.ref().workflow_id, run.ref().run_id);
  }
  std::vector<std::string> touched;  // operations of this batch, each once (a few at most)
  for (const Event& event : events) {
    std::vector<TraceLine> lines =
        TraceLinesFor(run, std::span<const Event>(&event, 1), TraceLineDetail::kEventOnly);
    const std::optional<std::string> operation_id = OperationOf(event);
    OpenSpan* span = &open.span;
    if (operation_id) {
      auto [op, op_fresh] = open.operations.try_emplace(*operation_id);
      if (op_fresh) op->second.start_us = event.recorded_at_us;
      if (std::holds_alternative<OperationPrepared>(event.body)) op->second.saw_start = true;
      span = &op->second;
      if (std::find(touched.begin(), touched.end(), *operation_id) == touched.end()) {
        touched.push_back(*operation_id);
      }
    } else if (std::holds_alternative<WorkflowStarted>(event.body)) {
      open.span.saw_start = true;
    } else if (const auto* failed = std::get_if<WorkflowFailed>(&event.body)) {
      open.failure_code = failed->code;
    }
    span->last_us = event.recorded_at_us;
    open.span.last_us = event.recorded_at_us;
    for (TraceLine& line : lines) span->events.push_back(EventFrom(event, std::move(line)));
  }
  for (const std::string& operation_id : touched) {
    auto record = run.operations().find(operation_id);
    if (record == run.operations().end()) continue;
    const OperationState state = record->second.state;
    if (state != OperationState::kCommitted && state != OperationState::kRejected) continue;
    auto node = open.operations.extract(operation_id);
    ended.push_back(FinishOperation(run, open, operation_id, std::move(node.mapped())));
  }
  if (run.terminal()) {
    for (auto& [operation_id, span] : open.operations) {
      span.last_us = open.span.last_us;
      ended.push_back(FinishOperation(run, open, operation_id, std::move(span)));
    }
    OpenRun done = std::move(open);
    runs_.erase(it);
    ended.push_back(FinishRun(run, std::move(done)));
  }
  return ended;
}

void OtlpSpanAssembler::Forget(const RunRef& run) { runs_.erase(Key(run)); }

OtlpSpan OtlpSpanAssembler::FinishOperation(const RunState& run, const OpenRun& parent,
                                            const std::string& operation_id, OpenSpan open) {
  const RunRef& ref = run.ref();
  OtlpSpan span;
  span.trace_id = parent.trace_id;
  span.span_id = OtlpOperationSpanId(ref.workflow_id, ref.run_id, operation_id);
  span.parent_span_id = parent.span_id;
  Touch(span, open.start_us, open.last_us);
  span.events = std::move(open.events);
  span.attributes = {{"gen_ai.operation.name", OtlpValue(std::string("execute_tool"))},
                     {"gen_ai.tool.call.id", OtlpValue(operation_id)},
                     {"reckon.workflow.id", OtlpValue(ref.workflow_id)},
                     {"reckon.run.id", OtlpValue(ref.run_id)}};
  span.name = "execute_tool";
  auto record = run.operations().find(operation_id);
  if (record != run.operations().end()) {
    const OperationRecord& op = record->second;
    span.name += " " + op.tool;
    span.attributes.emplace_back("gen_ai.tool.name", OtlpValue(op.tool));
    span.attributes.emplace_back("reckon.step", OtlpValue(op.step_id));
    span.attributes.emplace_back("reckon.side_effect",
                                 OtlpValue(std::string(SideEffectName(op.side_effect))));
    span.attributes.emplace_back("reckon.attempt", OtlpValue(std::int64_t{op.attempt}));
    span.attributes.emplace_back("reckon.state",
                                 OtlpValue(std::string(OperationStateName(op.state))));
    if (op.state == OperationState::kRejected) {
      span.error = true;
      span.status_message = op.failure_code;
    }
  }
  if (!open.saw_start) span.attributes.emplace_back("reckon.partial", OtlpValue(true));
  return span;
}

OtlpSpan OtlpSpanAssembler::FinishRun(const RunState& run, OpenRun open) {
  const RunRef& ref = run.ref();
  OtlpSpan span;
  span.trace_id = std::move(open.trace_id);
  span.span_id = std::move(open.span_id);
  span.name = "workflow " + run.workflow_type();
  Touch(span, open.span.start_us, open.span.last_us);
  span.events = std::move(open.span.events);
  span.attributes = {
      {"reckon.workflow.id", OtlpValue(ref.workflow_id)},
      {"reckon.run.id", OtlpValue(ref.run_id)},
      {"reckon.workflow.type", OtlpValue(run.workflow_type())},
      {"reckon.run.status", OtlpValue(std::string(RunStatusName(run.status())))},
      {"reckon.operations.committed", OtlpValue(std::int64_t{run.committed_operations()})}};
  if (!open.span.saw_start) span.attributes.emplace_back("reckon.partial", OtlpValue(true));
  if (run.status() == RunStatus::kFailed) {
    span.error = true;
    span.status_message = open.failure_code;
  }
  return span;
}

}  // namespace reckon
