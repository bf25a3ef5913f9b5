#include "reckon/telemetry/metrics_sink.h"

#include <algorithm>
#include <optional>
#include <set>
#include <type_traits>
#include <variant>

namespace reckon {
namespace {

// The operation an event is about, or nullptr for a workflow-level event.
const std::string* OperationOf(const storage::EventBody& body) {
  return std::visit(
      [](const auto& b) -> const std::string* {
        if constexpr (requires { b.operation_id; }) {
          return &b.operation_id;
        } else {
          return nullptr;
        }
      },
      body);
}

// outcome_unknown reasons are codes that workers report: bound how many distinct ones become
// series, so a misbehaving worker cannot blow up the scrape.
constexpr std::size_t kMaxReasons = 32;
constexpr std::size_t kMaxReasonLength = 64;

std::string BoundedReason(const std::string& reason, std::set<std::string>& seen) {
  std::string r = reason.substr(0, kMaxReasonLength);
  if (seen.count(r) != 0) return r;
  if (seen.size() >= kMaxReasons) return "other";
  seen.insert(r);
  return r;
}

std::vector<double> GroupSizeBuckets() { return {1, 2, 4, 8, 16, 32, 64, 128, 256, 512}; }

}  // namespace

MetricsSink::MetricsSink(MetricsRegistry& registry)
    : registry_(registry),
      transitions_(registry.Counter("reckon_operation_transitions_total",
                                    "Operation events made durable, by tool and event type.",
                                    {"tool", "kind"})),
      outcome_unknown_(registry.Counter(
          "reckon_outcome_unknown_total",
          "Attempts whose outcome became unknown, by tool and reason (the reported code).",
          {"tool", "reason"})),
      reconciliations_(registry.Counter("reckon_reconciliations_total",
                                        "Reconciliation lookups answered, by tool and result.",
                                        {"tool", "result"})),
      runs_started_(registry.Counter("reckon_runs_started_total",
                                     "Workflow runs started, by workflow type.",
                                     {"workflow_type"})),
      runs_finished_(registry.Counter("reckon_runs_finished_total",
                                      "Workflow runs that reached a terminal status.",
                                      {"workflow_type", "status"})),
      runs_stopped_(registry.Counter(
          "reckon_runs_stopped_total",
          "Runs the engine stopped driving (a bug or nondeterminism); each needs a person.")),
      commit_seconds_(registry.Histogram(
          "reckon_commit_seconds",
          "Duration of one group commit of the journal (transaction and fsync).",
          LatencyBuckets())),
      commit_group_size_(registry.Histogram("reckon_commit_group_size",
                                            "Appends (run batches) sharing one group commit.",
                                            GroupSizeBuckets())),
      commit_seconds_series_(commit_seconds_.Get()),
      commit_group_size_series_(commit_group_size_.Get()) {
  registry_.AddGaugeCallback(
      "reckon_operations", "Operations of running workflow runs, by state.", {"state"}, [this] {
        std::vector<GaugeSample> out;
        for (std::size_t i = 0; i < by_state_.size(); ++i) {
          out.push_back({{std::string(OperationStateName(static_cast<OperationState>(i)))},
                         static_cast<double>(by_state_[i])});
        }
        return out;
      });
  registry_.AddGaugeCallback(
      "reckon_approvals_waiting", "Operations waiting for an approval decision.", {}, [this] {
        return std::vector<GaugeSample>{
            {{}, static_cast<double>(operations_in(OperationState::kAwaitingApproval))}};
      });
  registry_.AddGaugeCallback(
      "reckon_needs_person", "Operations waiting for a person to resolve them (needs_human).",
      {}, [this] {
        return std::vector<GaugeSample>{
            {{}, static_cast<double>(operations_in(OperationState::kNeedsHuman))}};
      });
}

MetricsSink::~MetricsSink() {
  registry_.RemoveCallback("reckon_operations");
  registry_.RemoveCallback("reckon_approvals_waiting");
  registry_.RemoveCallback("reckon_needs_person");
}

Result<void> MetricsSink::Seed(storage::Journal& journal) {
  auto runs = journal.ListRuns(storage::RunStatus::kRunning);
  if (!runs) return runs.error();
  for (const storage::RunRow& run : runs.value()) {
    auto operations = journal.ListOperations(run.run_pk);
    if (!operations) return operations.error();
    for (const storage::OperationRow& row : operations.value()) {
      auto state = ParseOperationState(row.state);
      if (!state) continue;  // a state this build does not know: not counted
      SetState(run.ref.workflow_id, row.operation_id, state.value());
    }
  }
  return Ok();
}

void MetricsSink::SetState(const std::string& workflow_id, const std::string& operation_id,
                           std::optional<OperationState> state) {
  auto& ops = live_[workflow_id];
  auto it = ops.find(operation_id);
  if (it != ops.end()) {
    --by_state_[static_cast<std::size_t>(it->second)];
    if (!state) {
      ops.erase(it);
      return;
    }
    it->second = *state;
  } else {
    if (!state) return;
    ops.emplace(operation_id, *state);
  }
  ++by_state_[static_cast<std::size_t>(*state)];
}

void MetricsSink::DropRun(const std::string& workflow_id) {
  auto it = live_.find(workflow_id);
  if (it == live_.end()) return;
  for (const auto& [id, state] : it->second) --by_state_[static_cast<std::size_t>(state)];
  live_.erase(it);
}

MetricCounter& MetricsSink::Transitions(const std::string& tool, const storage::EventBody& body) {
  auto it = transition_cache_.find(tool);
  if (it == transition_cache_.end()) it = transition_cache_.emplace(tool, PerKind{}).first;
  MetricCounter*& counter = it->second[body.index()];
  if (counter == nullptr) {
    counter = &transitions_.With({tool, std::string(storage::EventTypeName(body))});
  }
  return *counter;
}

void MetricsSink::OnCommitted(const RunState& run, std::span<const storage::Event> events) {
  static const std::string kUnknownTool;
  const std::string& workflow_id = run.ref().workflow_id;
  std::vector<const std::string*> touched;  // operation ids, each once (batches are short)
  bool finished = false;
  for (const storage::Event& event : events) {
    const storage::EventBody& body = event.body;
    if (std::holds_alternative<storage::WorkflowStarted>(body)) {
      runs_started_.With({run.workflow_type()}).Inc();
      continue;
    }
    if (std::holds_alternative<storage::WorkflowCompleted>(body) ||
        std::holds_alternative<storage::WorkflowFailed>(body) ||
        std::holds_alternative<storage::WorkflowCancelled>(body)) {
      finished = true;
    }
    const std::string* operation_id = OperationOf(body);
    if (operation_id == nullptr) continue;
    const auto& operations = run.operations();
    auto op = operations.find(*operation_id);
    const std::string& tool = op == operations.end() ? kUnknownTool : op->second.tool;
    Transitions(tool, body).Inc();
    if (const auto* unknown = std::get_if<storage::OutcomeUnknown>(&body)) {
      outcome_unknown_.With({tool, BoundedReason(unknown->reason, reasons_)}).Inc();
    } else if (const auto* result = std::get_if<storage::ReconciliationResult>(&body)) {
      reconciliations_.With({tool, std::string(storage::ReconcileVerdictName(result->result))})
          .Inc();
    }
    if (std::find_if(touched.begin(), touched.end(), [&](const std::string* id) {
          return *id == *operation_id;
        }) == touched.end()) {
      touched.push_back(operation_id);
    }
  }
  if (run.terminal()) {
    if (finished) {
      runs_finished_
          .With({run.workflow_type(), std::string(storage::RunStatusName(run.status()))})
          .Inc();
    }
    DropRun(workflow_id);
    return;
  }
  for (const std::string* id : touched) {
    auto op = run.operations().find(*id);
    if (op == run.operations().end()) continue;
    SetState(workflow_id, *id, op->second.state);
  }
}

void MetricsSink::OnRunStopped(const RunState& run, std::string_view reason) {
  (void)run;
  (void)reason;
  runs_stopped_.Get().Inc();
}

void MetricsSink::ObserveCommit(std::size_t group_size, std::chrono::nanoseconds latency) {
  commit_group_size_series_.Observe(static_cast<double>(group_size));
  commit_seconds_series_.Observe(std::chrono::duration<double>(latency).count());
}

}  // namespace reckon
