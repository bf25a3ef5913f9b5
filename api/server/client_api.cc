#include "reckon/protocol/failure_kind_wire.h"
#include "reckon/api/server/client_api.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "reckon/protocol/wire_convert.h"
#include "reckon/api/server/request_fields.h"
#include "reckon/api/server/workers_query.h"
#include "reckon/plan/plan.h"

namespace reckon::api {
namespace asio = boost::asio;
namespace json = boost::json;
using std::chrono::milliseconds;

ClientApi::ClientApi(storage::Journal& journal, const ContractRegistry& contracts, Engine& engine,
                     const TaskQueues& tasks)
    : journal_(journal),
      contracts_(contracts),
      engine_(engine),
      tasks_(tasks),
      queries_(journal, engine, contracts) {}

asio::awaitable<Result<void>> ClientApi::Handle(const auth::Principal& caller,
                                                wire::Request::Method::Reader method,
                                                milliseconds timeout,
                                                wire::Response::Builder out) {
  switch (method.which()) {
    case wire::Request::Method::START_WORKFLOW: {
      auto started = Start(caller, method.getStartWorkflow(), out);
      co_return co_await std::move(started);
    }
    case wire::Request::Method::SIGNAL_WORKFLOW: {
      auto signalled = Signal(caller, method.getSignalWorkflow(), out);
      co_return co_await std::move(signalled);
    }
    case wire::Request::Method::COMPLETE_OPERATION: {
      auto completed = Complete(caller, method.getCompleteOperation(), out);
      co_return co_await std::move(completed);
    }
    case wire::Request::Method::CANCEL_WORKFLOW: {
      auto cancelled = Cancel(caller, method.getCancelWorkflow(), out);
      co_return co_await std::move(cancelled);
    }
    case wire::Request::Method::WATCH_WORKFLOW: {
      auto watched = Watch(method.getWatchWorkflow(), timeout, out);
      co_return co_await std::move(watched);
    }
    case wire::Request::Method::DESCRIBE_WORKFLOW: {
      const std::string id = Str(method.getDescribeWorkflow().getWorkflowId());
      RECKON_CO_TRY(queries_.Describe(id, Str(method.getDescribeWorkflow().getRunId()), out));
      NoteBuildWait(tasks_, id, out);
      co_return Ok();
    }
    case wire::Request::Method::LIST_WORKFLOWS:
      co_return queries_.List(method.getListWorkflows(), out);
    case wire::Request::Method::GET_HISTORY:
      co_return queries_.History(Str(method.getGetHistory().getWorkflowId()),
                                 Str(method.getGetHistory().getRunId()), out);
    case wire::Request::Method::GET_TRACE:
      co_return queries_.Trace(Str(method.getGetTrace().getWorkflowId()),
                               Str(method.getGetTrace().getRunId()), out);
    case wire::Request::Method::LIST_CONTRACTS:
      co_return queries_.Contracts(out);
    case wire::Request::Method::LIST_WORKERS:
      co_return ListWorkers(tasks_, out);
    case wire::Request::Method::DECIDE_APPROVAL: {
      auto decided = Decide(caller, method.getDecideApproval(), out);
      co_return co_await std::move(decided);
    }
    case wire::Request::Method::RESOLVE_OPERATION: {
      auto resolved = Resolve(caller, method.getResolveOperation(), out);
      co_return co_await std::move(resolved);
    }
    case wire::Request::Method::QUERY_WORKFLOW: {
      auto answered = Query(method.getQueryWorkflow(), out);
      co_return co_await std::move(answered);
    }
    case wire::Request::Method::UPDATE_WORKFLOW: {
      auto updated = Update(caller, method.getUpdateWorkflow(), out);
      co_return co_await std::move(updated);
    }
    default:
      co_return Err(Errc::kUnimplemented,
                    "method with union ordinal " + std::to_string(static_cast<int>(method.which())) +
                        " is not known to this server; upgrade the server or the client");
  }
}

asio::awaitable<Result<void>> ClientApi::Start(const auth::Principal& caller,
                                               wire::StartWorkflow::Reader in,
                                               wire::Response::Builder out) {
  RECKON_CO_TRY(std::string id, RequiredText(in.getWorkflowId(), "workflowId"));
  RECKON_CO_TRY(std::string type, RequiredText(in.getWorkflowType(), "workflowType"));
  json::value input;
  if (in.getInputJson().size() > 0) {
    RECKON_CO_TRY(input, JsonFromWire(in.getInputJson(), "inputJson"));
  }
  std::string definition_hash = Str(in.getDefinitionHash());
  if (type == "plan") {
    // An agent plan is checked against the contracts before anything is journaled, whoever
    // sent it; its hash is the server's to compute.
    auto plan = ParsePlanJson(input);
    if (!plan) co_return plan.error();
    RECKON_CO_TRY(ValidatePlan(plan.value(), contracts_));
    const std::string hash = PlanHash(plan.value());
    if (!definition_hash.empty() && definition_hash != hash) {
      co_return Err(Errc::kInvalidArgument, "definitionHash " + definition_hash +
                                                " does not match the plan, which hashes to " + hash);
    }
    if (plan.value().plan_id != id) {
      co_return Err(Errc::kInvalidArgument, "a plan runs under its plan_id ('" +
                                                plan.value().plan_id + "'), not '" + id + "'");
    }
    definition_hash = hash;
    // Journal the plan in its normal form, as the CLI and RunPlan send it: a start is the same
    // start when its plan is the same (same hash), however the client spelled the JSON.
    input = PlanToJson(plan.value());
  }
  RECKON_CO_TRY(auto existing, journal_.FindLatestRun(id));
  if (!existing && !tasks_.Hosts(type)) {
    co_return Err(Errc::kFailedPrecondition,
                  "no connected worker hosts workflow type '" + type +
                      "'; start a worker that registers it, then start the workflow again");
  }
  StartOptions options;
  options.definition_hash = std::move(definition_hash);
  if (in.getRunTimeoutMs() < 0) {
    co_return Err(Errc::kInvalidArgument, "runTimeoutMs must be >= 0 (0: no run timeout)");
  }
  options.run_timeout = std::chrono::milliseconds(in.getRunTimeoutMs());
  options.started_by = caller.name;
  auto started = engine_.Start(std::move(id), std::move(type), std::move(input), std::move(options));
  RECKON_CO_TRY(storage::RunRef ref, co_await std::move(started));
  auto result = out.initResult().initStarted();
  result.setWorkflowId(Text(ref.workflow_id));
  result.setRunId(Text(ref.run_id));
  co_return Ok();
}

asio::awaitable<Result<void>> ClientApi::Signal(const auth::Principal& caller,
                                                wire::SignalWorkflow::Reader in,
                                                wire::Response::Builder out) {
  RECKON_CO_TRY(std::string id, RequiredText(in.getWorkflowId(), "workflowId"));
  RECKON_CO_TRY(std::string name, RequiredText(in.getName(), "name"));
  std::string payload = in.getPayloadJson().size() == 0 ? "null" : Str(in.getPayloadJson());
  auto signalled = engine_.Signal(std::move(id), std::move(name), std::move(payload), caller.name,
                                  Str(in.getRequestId()));
  RECKON_CO_TRY(co_await std::move(signalled));
  out.initResult().setOk();
  co_return Ok();
}

asio::awaitable<Result<void>> ClientApi::Complete(const auth::Principal& caller,
                                                  wire::CompleteOperation::Reader in,
                                                  wire::Response::Builder out) {
  Completion completion;
  completion.workflow_id = Str(in.getWorkflowId());
  completion.operation_id = Str(in.getOperationId());
  completion.delivery_id = Str(in.getDeliveryId());
  completion.received_by = caller.name;
  AttemptOutcome& outcome = completion.outcome;
  outcome.success = in.getSucceeded();
  outcome.provider_ref = Str(in.getProviderRef());
  if (outcome.success && in.getOutputJson().size() > 0) {
    RECKON_CO_TRY(outcome.output, JsonFromWire(in.getOutputJson(), "outputJson"));
  } else if (!outcome.success) {
    outcome.kind = FailureKindFromWire(in.getKind());
    outcome.code = Str(in.getCode());
    outcome.message = Str(in.getMessage());
  }
  auto completed = engine_.Complete(std::move(completion));
  RECKON_CO_TRY(co_await std::move(completed));
  out.initResult().setOk();
  co_return Ok();
}

asio::awaitable<Result<void>> ClientApi::Cancel(const auth::Principal& caller,
                                                wire::CancelWorkflow::Reader in,
                                                wire::Response::Builder out) {
  RECKON_CO_TRY(std::string id, RequiredText(in.getWorkflowId(), "workflowId"));
  auto cancelled = engine_.Cancel(std::move(id), Str(in.getReason()), caller.name);
  RECKON_CO_TRY(co_await std::move(cancelled));
  out.initResult().setOk();
  co_return Ok();
}

Result<void> ClientApi::CheckToolScope(const auth::Principal& caller, const std::string& workflow_id,
                                       const std::string& operation_id,
                                       const std::string& approval_id) const {
  if (caller.tools.empty()) return Ok();
  auto run = engine_.Describe(workflow_id);
  if (!run) return Ok();  // the engine refuses it with not_found
  for (const OperationRecord& op : run->operations) {
    const bool named = (!operation_id.empty() && op.operation_id == operation_id) ||
                       (operation_id.empty() && op.approval_id == approval_id);
    if (named && !caller.AllowsTool(op.tool)) {
      return Err(Errc::kPermissionDenied,
                 "principal '" + caller.name + "' may decide only operations of the tools it is "
                 "scoped to, and operation '" + op.operation_id + "' calls '" + op.tool + "'");
    }
  }
  return Ok();
}

asio::awaitable<Result<void>> ClientApi::Decide(const auth::Principal& caller,
                                                wire::DecideApproval::Reader in,
                                                wire::Response::Builder out) {
  RECKON_CO_TRY(std::string id, RequiredText(in.getWorkflowId(), "workflowId"));
  ApprovalDecision decision;
  decision.operation_id = Str(in.getOperationId());
  decision.approval_id = Str(in.getApprovalId());
  if (decision.operation_id.empty() && decision.approval_id.empty()) {
    co_return Err(Errc::kInvalidArgument, "decideApproval needs operationId or approvalId");
  }
  // A decision is bound to the intent the approver saw: required, and compared.
  RECKON_CO_TRY(decision.expected_intent_hash,
                RequiredText(in.getExpectedIntentHash(), "expectedIntentHash (the intent hash "
                                                         "you reviewed: `reckon show` prints it)"));
  decision.granted = in.getGranted();
  decision.decided_by = caller.name;  // the principal, never a name the client wrote
  decision.note = Str(in.getDecidedBy());
  decision.reason = Str(in.getReason());
  RECKON_CO_TRY(CheckToolScope(caller, id, decision.operation_id, decision.approval_id));
  auto decided = engine_.DecideApproval(std::move(id), std::move(decision));
  RECKON_CO_TRY(co_await std::move(decided));
  out.initResult().setOk();
  co_return Ok();
}

asio::awaitable<Result<void>> ClientApi::Resolve(const auth::Principal& caller,
                                                 wire::ResolveOperation::Reader in,
                                                 wire::Response::Builder out) {
  RECKON_CO_TRY(std::string id, RequiredText(in.getWorkflowId(), "workflowId"));
  HumanResolution resolution;
  RECKON_CO_TRY(std::string operation_id, RequiredText(in.getOperationId(), "operationId"));
  resolution.operation_id = std::move(operation_id);
  resolution.committed = in.getCommitted();
  resolution.provider_ref = Str(in.getProviderRef());
  resolution.resolved_by = caller.name;  // the principal, never a name the client wrote
  resolution.note = Str(in.getNote());
  if (in.getResolvedBy().size() > 0) {
    // A client that still sends a name: kept as part of the note, beside the principal.
    resolution.note = "(" + Str(in.getResolvedBy()) + ") " + resolution.note;
  }
  RECKON_CO_TRY(CheckToolScope(caller, id, resolution.operation_id, ""));
  auto resolved = engine_.Resolve(std::move(id), std::move(resolution));
  RECKON_CO_TRY(co_await std::move(resolved));
  out.initResult().setOk();
  co_return Ok();
}

void ClientApi::RunChanged(const std::string& workflow_id) {
  auto [begin, end] = watchers_.equal_range(workflow_id);
  for (auto it = begin; it != end; ++it) it->second->cancel();
  watchers_.erase(begin, end);
}

asio::awaitable<Result<void>> ClientApi::Watch(wire::WatchWorkflow::Reader in,
                                               milliseconds timeout, wire::Response::Builder out) {
  RECKON_CO_TRY(std::string id, RequiredText(in.getWorkflowId(), "workflowId"));
  const std::int64_t after = in.getAfterSeq();
  RECKON_CO_TRY(auto run, journal_.FindLatestRun(id));
  if (!run) {
    co_return Err(Errc::kNotFound, "no workflow '" + id + "'; `reckon list` shows the ids");
  }
  if (run->next_seq - 1 <= after) {
    // Nothing new yet: wait for the engine's next durable batch of this run, or the deadline.
    auto timer = std::make_shared<asio::steady_timer>(
        co_await asio::this_coro::executor,
        std::min(milliseconds(in.getWaitMs()), timeout));
    watchers_.emplace(id, timer);
    co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
    for (auto [it, end] = watchers_.equal_range(id); it != end; ++it) {
      if (it->second == timer) {
        watchers_.erase(it);
        break;
      }
    }
  }
  RECKON_CO_TRY(auto events, journal_.ReadEvents(run->ref, after + 1));
  EventsToWire(events, out.initResult().initHistory(static_cast<unsigned>(events.size())));
  co_return Ok();
}

}  // namespace reckon::api
