#include "api/server/service.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <set>

#include "api/protocol/client.h"
#include "api/protocol/wire_convert.h"
#include "contract/contract_json.h"
#include "plan/plan.h"

namespace reckon::api {
namespace asio = boost::asio;
namespace json = boost::json;
using std::chrono::milliseconds;

namespace {

std::int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Result<std::string> RequiredText(capnp::Text::Reader text, std::string_view field) {
  if (text.size() == 0) {
    return Err(Errc::kInvalidArgument, std::string(field) + " is required and was empty");
  }
  return Str(text);
}

Result<void> NeedsRegistration(const SessionState& session, std::string_view method) {
  if (!session.registered) {
    return Err(Errc::kFailedPrecondition,
               std::string(method) + " needs a registered worker: send registerWorker first "
                                     "on this connection");
  }
  return Ok();
}

}  // namespace

Result<int> LoadJournaledContracts(storage::Journal& journal, ContractRegistry& registry) {
  RECKON_TRY(auto rows, journal.ListContracts());
  for (const auto& row : rows) {
    boost::system::error_code ec;
    json::value value = json::parse(row.contract_json, ec);
    if (ec) {
      return Err(Errc::kCorruption, "journaled contract '" + row.name + "' is not JSON");
    }
    RECKON_TRY(ToolContract contract, ContractFromJson(value));
    RECKON_TRY(std::string hash, ContractHash(contract));
    if (hash != row.hash) {
      return Err(Errc::kCorruption, "journaled contract '" + row.name + "' hashes to " + hash +
                                        ", not the recorded " + row.hash);
    }
    if (registry.Find(row.name) == nullptr) {
      RECKON_TRY(registry.Register(std::move(contract)));
    }
  }
  return static_cast<int>(rows.size());
}

Service::Service(storage::Journal& journal, ContractRegistry& contracts, Engine& engine,
                 TaskQueues& tasks, std::size_t max_reply_bytes)
    : journal_(journal),
      contracts_(contracts),
      engine_(engine),
      tasks_(tasks),
      max_reply_bytes_(max_reply_bytes),
      queries_(journal, engine, contracts) {}

asio::awaitable<void> Service::Handle(SessionState& session, wire::Request::Reader request,
                                      milliseconds timeout, wire::Response::Builder response) {
  Result<void> handled = Ok();
  try {
    auto dispatched = Dispatch(session, request, timeout, response);
    handled = co_await std::move(dispatched);
  } catch (const kj::Exception& e) {
    // Cap'n Proto throws when a reader meets a malformed or over-limit message.
    handled = Err(Errc::kInvalidArgument,
                  "malformed request: " + std::string(e.getDescription().cStr()));
  }
  if (!handled) ToWire(handled.error(), response.initResult().initError());
}

void Service::Disconnected(const SessionState& session) {
  if (session.registered) {
    spdlog::info("worker {} disconnected", session.worker_id);
    tasks_.RemoveSession(session.id);
  }
}

asio::awaitable<Result<void>> Service::Dispatch(SessionState& session,
                                                wire::Request::Reader request,
                                                milliseconds timeout,
                                                wire::Response::Builder out) {
  auto method = request.getMethod();
  switch (method.which()) {
    case wire::Request::Method::START_WORKFLOW: {
      auto started = Start(method.getStartWorkflow(), out);
      co_return co_await std::move(started);
    }
    case wire::Request::Method::SIGNAL_WORKFLOW: {
      auto in = method.getSignalWorkflow();
      RECKON_CO_TRY(std::string id, RequiredText(in.getWorkflowId(), "workflowId"));
      RECKON_CO_TRY(std::string name, RequiredText(in.getName(), "name"));
      std::string payload = in.getPayloadJson().size() == 0 ? "null" : Str(in.getPayloadJson());
      auto signalled = engine_.Signal(std::move(id), std::move(name), std::move(payload));
      RECKON_CO_TRY(co_await std::move(signalled));
      out.initResult().setOk();
      co_return Ok();
    }
    case wire::Request::Method::CANCEL_WORKFLOW: {
      auto in = method.getCancelWorkflow();
      RECKON_CO_TRY(std::string id, RequiredText(in.getWorkflowId(), "workflowId"));
      auto cancelled = engine_.Cancel(std::move(id), Str(in.getReason()));
      RECKON_CO_TRY(co_await std::move(cancelled));
      out.initResult().setOk();
      co_return Ok();
    }
    case wire::Request::Method::WATCH_WORKFLOW: {
      auto watched = Watch(method.getWatchWorkflow(), timeout, out);
      co_return co_await std::move(watched);
    }
    case wire::Request::Method::DESCRIBE_WORKFLOW:
      co_return queries_.Describe(Str(method.getDescribeWorkflow().getWorkflowId()), out);
    case wire::Request::Method::LIST_WORKFLOWS:
      co_return queries_.List(method.getListWorkflows(), out);
    case wire::Request::Method::GET_HISTORY:
      co_return queries_.History(Str(method.getGetHistory().getWorkflowId()), out);
    case wire::Request::Method::GET_TRACE:
      co_return queries_.Trace(Str(method.getGetTrace().getWorkflowId()), out);
    case wire::Request::Method::LIST_CONTRACTS:
      co_return queries_.Contracts(out);
    case wire::Request::Method::DECIDE_APPROVAL: {
      auto in = method.getDecideApproval();
      RECKON_CO_TRY(std::string id, RequiredText(in.getWorkflowId(), "workflowId"));
      ApprovalDecision decision;
      decision.operation_id = Str(in.getOperationId());
      decision.approval_id = Str(in.getApprovalId());
      if (decision.operation_id.empty() && decision.approval_id.empty()) {
        co_return Err(Errc::kInvalidArgument, "decideApproval needs operationId or approvalId");
      }
      decision.expected_intent_hash = Str(in.getExpectedIntentHash());
      decision.granted = in.getGranted();
      RECKON_CO_TRY(std::string decided_by, RequiredText(in.getDecidedBy(), "decidedBy"));
      decision.decided_by = std::move(decided_by);
      decision.reason = Str(in.getReason());
      auto decided = engine_.DecideApproval(std::move(id), std::move(decision));
      RECKON_CO_TRY(co_await std::move(decided));
      out.initResult().setOk();
      co_return Ok();
    }
    case wire::Request::Method::RESOLVE_OPERATION: {
      auto in = method.getResolveOperation();
      RECKON_CO_TRY(std::string id, RequiredText(in.getWorkflowId(), "workflowId"));
      HumanResolution resolution;
      RECKON_CO_TRY(std::string operation_id, RequiredText(in.getOperationId(), "operationId"));
      resolution.operation_id = std::move(operation_id);
      resolution.committed = in.getCommitted();
      resolution.provider_ref = Str(in.getProviderRef());
      RECKON_CO_TRY(std::string resolved_by, RequiredText(in.getResolvedBy(), "resolvedBy"));
      resolution.resolved_by = std::move(resolved_by);
      resolution.note = Str(in.getNote());
      auto resolved = engine_.Resolve(std::move(id), std::move(resolution));
      RECKON_CO_TRY(co_await std::move(resolved));
      out.initResult().setOk();
      co_return Ok();
    }
    case wire::Request::Method::REGISTER_WORKER:
      co_return Register(session, method.getRegisterWorker(), out);
    case wire::Request::Method::POLL_WORKFLOW_TASK: {
      RECKON_CO_TRY(NeedsRegistration(session, "pollWorkflowTask"));
      const milliseconds wait =
          std::min(milliseconds(method.getPollWorkflowTask().getWaitMs()), timeout);
      auto polled = PollWorkflow(session, wait, out);
      co_return co_await std::move(polled);
    }
    case wire::Request::Method::COMPLETE_WORKFLOW_TASK: {
      RECKON_CO_TRY(NeedsRegistration(session, "completeWorkflowTask"));
      co_return CompleteWorkflow(session, method.getCompleteWorkflowTask(), out);
    }
    case wire::Request::Method::POLL_TOOL_TASK: {
      RECKON_CO_TRY(NeedsRegistration(session, "pollToolTask"));
      const milliseconds wait =
          std::min(milliseconds(method.getPollToolTask().getWaitMs()), timeout);
      auto polled = PollTool(session, wait, out);
      co_return co_await std::move(polled);
    }
    case wire::Request::Method::COMPLETE_TOOL_TASK: {
      RECKON_CO_TRY(NeedsRegistration(session, "completeToolTask"));
      co_return CompleteTool(session, method.getCompleteToolTask(), out);
    }
    case wire::Request::Method::HEARTBEAT: {
      RECKON_CO_TRY(NeedsRegistration(session, "heartbeat"));
      auto tokens_in = method.getHeartbeat().getTaskTokens();
      std::vector<std::uint64_t> tokens;
      tokens.reserve(tokens_in.size());
      for (std::uint64_t token : tokens_in) tokens.push_back(token);
      auto stop = tasks_.Heartbeat(session.id, tokens);
      auto list = out.initResult().initHeartbeat().initCancel(static_cast<unsigned>(stop.size()));
      for (unsigned i = 0; i < stop.size(); ++i) list.set(i, stop[i]);
      co_return Ok();
    }
    default:
      co_return Err(Errc::kUnimplemented,
                    "method with union ordinal " + std::to_string(static_cast<int>(method.which())) +
                        " is not known to this server; upgrade the server or the client");
  }
}

void Service::RunChanged(const std::string& workflow_id) {
  auto [begin, end] = watchers_.equal_range(workflow_id);
  for (auto it = begin; it != end; ++it) it->second->cancel();
  watchers_.erase(begin, end);
}

asio::awaitable<Result<void>> Service::Watch(wire::WatchWorkflow::Reader in, milliseconds timeout,
                                             wire::Response::Builder out) {
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

asio::awaitable<Result<void>> Service::Start(wire::StartWorkflow::Reader in,
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
  }
  RECKON_CO_TRY(auto existing, journal_.FindLatestRun(id));
  if (!existing && !tasks_.Hosts(type)) {
    co_return Err(Errc::kFailedPrecondition,
                  "no connected worker hosts workflow type '" + type +
                      "'; start a worker that registers it, then start the workflow again");
  }
  auto started = engine_.Start(std::move(id), std::move(type), std::move(input),
                               std::move(definition_hash));
  RECKON_CO_TRY(storage::RunRef ref, co_await std::move(started));
  auto result = out.initResult().initStarted();
  result.setWorkflowId(Text(ref.workflow_id));
  result.setRunId(Text(ref.run_id));
  co_return Ok();
}

Result<void> Service::Register(SessionState& session, wire::RegisterWorker::Reader in,
                               wire::Response::Builder out) {
  if (session.registered) {
    return Err(Errc::kFailedPrecondition,
               "this connection is already registered as worker '" + session.worker_id +
                   "'; open a new connection to register again");
  }
  RECKON_TRY(std::string worker_id, RequiredText(in.getWorkerId(), "workerId"));
  std::set<std::string> types;
  for (auto type : in.getWorkflowTypes()) types.insert(Str(type));
  // Check every declared contract before changing anything.
  struct Declared {
    ToolContract contract;
    std::string hash;
    bool known;
  };
  std::vector<Declared> declared;
  std::set<std::string> tools;
  for (auto tool : in.getTools()) {
    const std::string name = Str(tool.getName());
    if (tools.count(name) != 0) {
      return Err(Errc::kInvalidArgument, "tool '" + name + "' is declared twice");
    }
    RECKON_TRY(json::value value,
               JsonFromWire(tool.getContractJson(), "contract of tool '" + name + "'"));
    auto contract = ContractFromJson(value);
    if (!contract) return contract.error().WithContext("tool '" + name + "'");
    if (contract.value().name != name) {
      return Err(Errc::kInvalidArgument, "tool '" + name + "' declares a contract named '" +
                                             contract.value().name + "'");
    }
    RECKON_TRY(std::string hash, ContractHash(contract.value()));
    const RegisteredContract* known = contracts_.FindRegistered(name);
    if (known != nullptr && known->hash() != hash) {
      return Err(Errc::kFailedPrecondition,
                 "tool '" + name + "' is registered with contract " + known->hash() +
                     " and this worker declares " + hash +
                     "; a contract never changes under the operations that ran with it: give "
                     "the new contract a new tool name (e.g. '" + name + ".v2')");
    }
    if (known == nullptr) {
      // Validate now, so that a bad contract refuses the registration before anything sticks.
      RECKON_TRY(RegisteredContract::Create(contract.value()));
    }
    tools.insert(name);
    declared.push_back(Declared{std::move(contract).value(), std::move(hash), known != nullptr});
  }
  for (Declared& d : declared) {
    if (d.known) continue;
    const std::string text = json::serialize(ContractToJson(d.contract));
    RECKON_TRY(journal_.PutContract(storage::ContractRow{d.contract.name, d.hash, text, NowUs()}));
    RECKON_TRY(contracts_.Register(std::move(d.contract)));
  }
  session.registered = true;
  session.worker_id = worker_id;
  spdlog::info("worker {} registered: {} workflow type(s), {} tool(s)", worker_id, types.size(),
               tools.size());
  tasks_.AddSession(session.id, std::move(worker_id), std::move(types), std::move(tools));
  auto result = out.initResult().initRegistered();
  result.setHeartbeatIntervalMs(
      static_cast<std::uint32_t>(tasks_.options().heartbeat_interval.count()));
  result.setLeaseTimeoutMs(static_cast<std::uint32_t>(tasks_.options().lease_timeout.count()));
  return Ok();
}

template <class View>
bool Service::Deliverable(std::optional<View>& task, const SessionState& session,
                          wire::Response::Builder out) {
  if (task && !tasks_.HasSession(session.id)) {
    tasks_.Undeliverable(task->token);  // the connection closed while the task was on its way
    task.reset();
  }
  if (!task) out.initResult().setNoTask();
  return task.has_value();
}

asio::awaitable<Result<void>> Service::PollWorkflow(SessionState& session, milliseconds wait,
                                                    wire::Response::Builder out) {
  auto polled = tasks_.PollWorkflowTask(session.id, wait);
  std::optional<WorkflowTaskView> task = co_await std::move(polled);
  if (!Deliverable(task, session, out)) co_return Ok();
  auto t = out.initResult().initWorkflowTask();
  t.setTaskToken(task->token);
  t.setWorkflowId(Text(task->run.workflow_id));
  t.setRunId(Text(task->run.run_id));
  t.setWorkflowType(Text(task->workflow_type));
  t.setFullHistory(task->full_history);
  t.setNowUs(task->now_us);
  EventsToWire(task->events, t.initEvents(static_cast<unsigned>(task->events.size())));
  const std::size_t bytes = out.totalSize().wordCount * sizeof(capnp::word);
  if (bytes + 1024 > max_reply_bytes_) {
    // It would never fit in a frame: stop the run with the reason instead of retrying forever.
    Error error = Err(Errc::kResourceExhausted,
                      "the history of '" + task->run.workflow_id + "' takes " +
                          std::to_string(bytes) + " bytes, over the frame limit of " +
                          std::to_string(max_reply_bytes_) +
                          " bytes; raise the limit or split the work into shorter workflows");
    tasks_.FailWorkflowTask(task->token, error);
    co_return error;
  }
  co_return Ok();
}

asio::awaitable<Result<void>> Service::PollTool(SessionState& session, milliseconds wait,
                                                wire::Response::Builder out) {
  auto polled = tasks_.PollToolTask(session.id, wait);
  std::optional<ToolTaskView> task = co_await std::move(polled);
  if (!Deliverable(task, session, out)) co_return Ok();
  auto t = out.initResult().initToolTask();
  t.setTaskToken(task->token);
  t.setKind(task->kind == ToolTaskKind::kAttempt ? wire::ToolTaskKind::ATTEMPT
                                                 : wire::ToolTaskKind::RECONCILE);
  t.setWorkflowId(Text(task->run.workflow_id));
  t.setRunId(Text(task->run.run_id));
  t.setStepId(Text(task->step_id));
  t.setOperationId(Text(task->operation_id));
  t.setTool(Text(task->tool));
  const std::string input = json::serialize(task->input);
  t.setInputJson(Text(input));
  t.setAttempt(task->attempt);
  t.setDeadlineUs(task->deadline_us);
  co_return Ok();
}

Result<void> Service::CompleteWorkflow(SessionState& session,
                                       wire::CompleteWorkflowTask::Reader in,
                                       wire::Response::Builder out) {
  Result<std::vector<Command>> result = Err(Errc::kInternal, "unset");
  if (in.isFailure()) {
    result = FromWire(in.getFailure());
  } else if (!in.isCommands()) {
    return Err(Errc::kInvalidArgument,
               "completeWorkflowTask carries neither commands nor a failure");
  } else {
    auto commands = CommandsFromWire(in.getCommands());
    if (!commands) return commands.error();  // the worker sent garbage: refuse, keep the task
    result = std::move(commands).value();
  }
  RECKON_TRY(tasks_.CompleteWorkflowTask(session.id, in.getTaskToken(), std::move(result)));
  out.initResult().setOk();
  return Ok();
}

Result<void> Service::CompleteTool(SessionState& session, wire::CompleteToolTask::Reader in,
                                   wire::Response::Builder out) {
  ToolReport report;
  report.token = in.getTaskToken();
  RECKON_TRY(std::string workflow_id, RequiredText(in.getWorkflowId(), "workflowId"));
  RECKON_TRY(std::string operation_id, RequiredText(in.getOperationId(), "operationId"));
  report.workflow_id = std::move(workflow_id);
  report.operation_id = std::move(operation_id);
  report.attempt = in.getAttempt();
  if (in.getOutcome().isAttempt()) {
    RECKON_TRY(auto outcome, AttemptOutcomeFromWire(in));
    report.attempt_outcome = std::move(outcome);
  } else {
    RECKON_TRY(auto outcome, ReconcileOutcomeFromWire(in));
    report.reconcile_outcome = std::move(outcome);
  }
  tasks_.CompleteToolTask(session.id, std::move(report));
  out.initResult().setOk();
  return Ok();
}

}  // namespace reckon::api
