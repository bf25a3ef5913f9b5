#include "reckon/host/local_worker.h"

#include <chrono>
#include <memory>

#include "reckon/worker/run_inspection.h"

namespace reckon {

namespace {

std::chrono::steady_clock::time_point SteadyDeadline(std::int64_t deadline_us) {
  const auto now_system = std::chrono::system_clock::now();
  const auto now_steady = std::chrono::steady_clock::now();
  const auto deadline = std::chrono::system_clock::time_point(std::chrono::microseconds(deadline_us));
  return now_steady + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                          deadline - now_system);
}

}  // namespace

boost::asio::awaitable<Result<std::vector<Command>>> LocalWorker::Activate(
    ActivationRequest request) {
  const std::string& id = request.run.workflow_id;
  if (request.full_history) {
    const WorkflowFunction* function = workflows_.Find(request.workflow_type);
    if (function == nullptr) {
      co_return Err(Errc::kNotFound, "no workflow type '" + request.workflow_type +
                                         "' is registered with this worker");
    }
    instances_[id] = std::make_unique<WorkflowInstance>(*function, id, request.run.run_id);
  }
  auto it = instances_.find(id);
  if (it == instances_.end()) {
    co_return Err(Errc::kFailedPrecondition,
                  "workflow '" + id + "' is not cached here; activate it with its full history");
  }
  co_return it->second->Activate(request.events, request.now_us);
}

boost::asio::awaitable<Result<std::string>> LocalWorker::Query(QueryRequest request) {
  const WorkflowFunction* function = workflows_.Find(request.workflow_type);
  if (function == nullptr) {
    co_return Err(Errc::kNotFound, "no workflow type '" + request.workflow_type +
                                       "' is registered with this worker");
  }
  co_return InspectRun(*function, request);
}

void LocalWorker::Evict(const storage::RunRef& run) { instances_.erase(run.workflow_id); }

boost::asio::awaitable<AttemptOutcome> LocalWorker::RunAttempt(AttemptRequest request) {
  const Tool* tool = tools_.Find(request.tool);
  if (tool == nullptr) {
    co_return ToolFailed(FailureKind::kDefinitive, "unknown_tool",
                         "this worker hosts no tool '" + request.tool + "'");
  }
  // What the call reports leaves here redacted (worker/call_secrets.h).
  auto secrets = std::make_shared<CallSecrets>(tool->contract, request.input);
  ToolCallContext context{request.run.workflow_id, request.step_id, request.operation_id,
                          request.attempt, SteadyDeadline(request.deadline_us),
                          std::move(request.last_heartbeat_details_json)};
  context.secrets = secrets;
  AttemptOutcome outcome = co_await RunTool(*tool, std::move(request.input), std::move(context),
                                            request.heartbeat_timeout);
  co_return secrets->Redact(std::move(outcome));
}

boost::asio::awaitable<ReconcileOutcome> LocalWorker::Reconcile(ReconcileRequest request) {
  const Tool* tool = tools_.Find(request.tool);
  if (tool == nullptr || !tool->reconcile) {
    ReconcileOutcome outcome;
    outcome.verdict = ReconcileVerdict::kStillUnknown;
    outcome.message = "no reconcile lookup for tool '" + request.tool + "' here";
    co_return outcome;
  }
  auto secrets = std::make_shared<CallSecrets>(tool->contract, request.input);
  ToolCallContext context{request.run.workflow_id, "", request.operation_id, request.round,
                          SteadyDeadline(request.deadline_us)};
  context.secrets = secrets;
  ReconcileOutcome outcome = co_await tool->reconcile(std::move(request.input), std::move(context));
  co_return secrets->Redact(std::move(outcome));
}

}  // namespace reckon
