#include "reckon/telemetry/trace_lines.h"

#include <boost/json/serialize.hpp>
#include <boost/json/object.hpp>

#include <type_traits>

namespace reckon {

using namespace storage;

namespace {

std::string Short(const std::string& hash) { return hash.substr(0, 16); }

class LineBuilder {
 public:
  LineBuilder(const RunState& run, const Event& event, TraceLineDetail detail)
      : run_(run), event_(event), full_(detail == TraceLineDetail::kFull) {}

  std::vector<TraceLine> Build() {
    std::visit([&](const auto& e) { On(e); }, event_.body);
    return std::move(lines_);
  }

 private:
  TraceLine& Line(std::string name) {
    lines_.push_back(TraceLine{std::move(name), {}});
    if (full_) Add("workflow_id", run_.ref().workflow_id);
    return lines_.back();
  }
  void Add(std::string key, std::string value) {
    lines_.back().attributes.emplace_back(std::move(key), std::move(value));
  }
  // Operation attributes shared by every operation line.
  void Op(const std::string& operation_id) {
    if (!full_) return;
    Add("id", operation_id);
    auto it = run_.operations().find(operation_id);
    if (it == run_.operations().end()) return;
    Add("tool", it->second.tool);
    Add("step", it->second.step_id);
    Add("gen_ai.operation.name", "execute_tool");
    Add("gen_ai.tool.name", it->second.tool);
    Add("gen_ai.tool.call.id", operation_id);
  }

  void On(const WorkflowStarted& e) {
    Line("workflow.started");
    Add("run", run_.ref().run_id);
    Add("type", e.workflow_type);
    if (!e.started_by.empty()) Add("by", e.started_by);
  }
  void On(const WorkflowCompleted&) {
    Line("workflow.completed");
    Add("run", run_.ref().run_id);
    Add("outcome", "completed");
  }
  void On(const WorkflowFailed& e) {
    Line("workflow.failed");
    Add("run", run_.ref().run_id);
    Add("code", e.code);
  }
  void On(const OperationPrepared& e) {
    Line("operation.prepared");
    Op(e.operation_id);
    Add("class", std::string(SideEffectName(e.side_effect)));
    Add("intent_hash", Short(e.intent_hash));
    Add("contract", Short(e.contract_hash));
  }
  void On(const ApprovalRequested& e) {
    Line("approval.requested");
    Op(e.operation_id);
    Add("approval", e.approval_id);
    Add("intent", Short(e.intent_hash));
  }
  void On(const ApprovalGranted& e) {
    Line("approval.granted");
    Op(e.operation_id);
    Add("approval", e.approval_id);
    Add("by", e.approved_by);
    Add("intent", Short(e.intent_hash));
  }
  void On(const ApprovalDenied& e) {
    Line("approval.denied");
    Op(e.operation_id);
    Add("approval", e.approval_id);
    Add("by", e.denied_by);
  }
  void On(const AttemptStarted& e) {
    Line("operation.attempted");
    Op(e.operation_id);
    Add("attempt", std::to_string(e.attempt));
    Add("deadline_ms", std::to_string((e.deadline_us - event_.recorded_at_us) / 1000));
    if (!e.approval_id.empty()) Add("approval", e.approval_id);
  }
  void On(const OperationCommitted& e) {
    Line("operation.committed");
    Op(e.operation_id);
    Add("attempt", std::to_string(e.attempt));
    Add("source", std::string(CommitSourceName(e.source)));
    if (!e.provider_ref.empty()) Add("provider_ref", e.provider_ref);
  }
  void On(const OperationRejected& e) {
    Line("operation.rejected");
    Op(e.operation_id);
    Add("attempt", std::to_string(e.attempt));
    Add("code", e.code);
  }
  void On(const AttemptFailedRetryable& e) {
    Line("operation.retryable_failure");
    Op(e.operation_id);
    Add("attempt", std::to_string(e.attempt));
    Add("code", e.code);
    Add("decision", "retry");
    Add("retry_in_ms", std::to_string((e.retry_at_us - event_.recorded_at_us) / 1000));
  }
  void On(const OutcomeUnknown& e) {
    Line("operation.outcome_unknown");
    Op(e.operation_id);
    Add("attempt", std::to_string(e.attempt));
    Add("reason", e.reason);
    if (e.reconcile_at_us > 0) {
      Add("decision", "reconcile");
      Add("reconcile_in_ms", std::to_string((e.reconcile_at_us - event_.recorded_at_us) / 1000));
    }
  }
  void On(const RetryScheduled& e) {
    Line("operation.retry_scheduled");
    Op(e.operation_id);
    Add("next_attempt", std::to_string(e.next_attempt));
    Add("reason", std::string(RetryReasonName(e.reason)));
    Add("decision", "retry_same_operation_id");
  }
  void On(const ReconciliationStarted& e) {
    Line("operation.reconciling");
    Op(e.operation_id);
    Add("round", std::to_string(e.round));
    Add("method", "lookup");
  }
  void On(const ReconciliationResult& e) {
    Line("operation.reconciled");
    Op(e.operation_id);
    Add("round", std::to_string(e.round));
    Add("result", std::string(ReconcileVerdictName(e.result)));
    if (!e.provider_ref.empty()) Add("provider_ref", e.provider_ref);
  }
  void On(const NeedsHuman& e) {
    Line("operation.needs_human");
    Op(e.operation_id);
    Add("reason", e.reason);
  }
  void On(const HumanResolved& e) {
    Line("operation.human_resolved");
    Op(e.operation_id);
    Add("committed", e.committed ? "true" : "false");
    Add("by", e.resolved_by);
    if (!e.provider_ref.empty()) Add("provider_ref", e.provider_ref);
  }
  void On(const AttemptAccepted& e) {
    Line("operation.accepted");
    Op(e.operation_id);
    Add("attempt", std::to_string(e.attempt));
    if (!e.provider_ref.empty()) Add("provider_ref", e.provider_ref);
    Add("completion_in_ms", std::to_string((e.completion_due_us - event_.recorded_at_us) / 1000));
  }
  void On(const CompletionReceived& e) {
    Line("operation.completion_received");
    Op(e.operation_id);
    Add("delivery", e.delivery_id);
    Add("succeeded", e.succeeded ? "true" : "false");
    if (!e.code.empty()) Add("code", e.code);
    if (!e.received_by.empty()) Add("by", e.received_by);
  }
  void On(const TimerStarted& e) {
    Line("workflow.timer_started");
    Add("timer", e.timer_id);
  }
  void On(const TimerFired& e) {
    Line("workflow.timer_fired");
    Add("timer", e.timer_id);
  }
  void On(const SignalReceived& e) {
    Line("workflow.signal_received");
    Add("signal", e.name);
    if (!e.sent_by.empty()) Add("by", e.sent_by);
    if (!e.request_id.empty()) Add("request", e.request_id);
  }
  void On(const UpdateAccepted& e) {
    Line("workflow.update_accepted");
    Add("update", e.update_id);
    Add("name", e.name);
    if (!e.sent_by.empty()) Add("by", e.sent_by);
  }
  void On(const UpdateCompleted& e) {
    Line("workflow.update_completed");
    Add("update", e.update_id);
    if (!e.error_code.empty()) Add("code", e.error_code);
  }
  template <class T>
  void On(const T&) {}  // task bookkeeping and markers are not effect transitions

  const RunState& run_;
  const Event& event_;
  const bool full_;
  std::vector<TraceLine> lines_;
};

}  // namespace

std::vector<TraceLine> TraceLinesFor(const RunState& run, std::span<const Event> events,
                                     TraceLineDetail detail) {
  std::vector<TraceLine> lines;
  for (const Event& event : events) {
    auto more = LineBuilder(run, event, detail).Build();
    for (auto& line : more) lines.push_back(std::move(line));
  }
  return lines;
}

std::string TraceLineJson(const Event& event, const TraceLine& line) {
  boost::json::object object;
  object["ts_us"] = event.recorded_at_us;
  object["seq"] = event.seq;
  object["event"] = line.name;
  for (const auto& [key, value] : line.attributes) object[key] = value;
  return boost::json::serialize(object);
}

}  // namespace reckon
