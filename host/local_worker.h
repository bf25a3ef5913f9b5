// LocalWorker: the worker of embedded mode. It hosts workflow instances and tools in the
// engine's own process and implements the engine's two seams (WorkflowHost, ToolDispatcher)
// directly, so embedded and server mode share every decision the engine makes.
//
// Secrets: what a call reports (the attempt's report, a lookup's) is redacted here, before the
// engine sees it, with every secret of the call (worker/call_secrets.h).
//
// Tool heartbeats (local_worker_attempt.cc): a tool's details go with its attempt's report,
// and the next attempt gets them (ToolCallContext::LastHeartbeatDetails); a contract's
// heartbeat_timeout is watched here, as the server does for remote workers. There is no queue,
// so schedule_to_start_timeout never applies in embedded mode.
//
// Lives on the engine's executor; not thread-safe. The registries must outlive it.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "reckon/engine/tool_dispatcher.h"
#include "reckon/engine/workflow_host.h"
#include "reckon/worker/tool.h"
#include "reckon/worker/workflow_registry.h"

namespace reckon {

class LocalWorker final : public WorkflowHost, public ToolDispatcher {
 public:
  LocalWorker(const WorkflowRegistry& workflows, const ToolRegistry& tools)
      : workflows_(workflows), tools_(tools) {}

  boost::asio::awaitable<Result<std::vector<Command>>> Activate(ActivationRequest request) override;
  void Evict(const storage::RunRef& run) override;
  // Answers from a fresh replay of the history the engine hands over (worker/run_inspection.h).
  boost::asio::awaitable<Result<std::string>> Query(QueryRequest request) override;
  boost::asio::awaitable<AttemptOutcome> RunAttempt(AttemptRequest request) override;
  boost::asio::awaitable<ReconcileOutcome> Reconcile(ReconcileRequest request) override;

  std::size_t cached_instances() const { return instances_.size(); }

 private:
  boost::asio::awaitable<AttemptOutcome> RunTool(const Tool& tool, boost::json::value input,
                                                 ToolCallContext context,
                                                 std::chrono::milliseconds heartbeat_timeout);
  const WorkflowRegistry& workflows_;
  const ToolRegistry& tools_;
  std::map<std::string, std::unique_ptr<WorkflowInstance>> instances_;  // by workflow id
};

}  // namespace reckon
