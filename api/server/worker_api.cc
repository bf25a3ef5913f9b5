#include "reckon/api/server/worker_api.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <set>
#include <vector>

#include "reckon/protocol/client.h"
#include "reckon/protocol/wire_convert.h"
#include "reckon/api/server/history_pages.h"
#include "reckon/api/server/request_fields.h"
#include "reckon/contract/contract_json.h"

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

WorkerApi::WorkerApi(storage::Journal& journal, ContractRegistry& contracts, TaskQueues& tasks,
                     std::size_t max_reply_bytes)
    : journal_(journal),
      contracts_(contracts),
      tasks_(tasks),
      max_reply_bytes_(max_reply_bytes),
      page_bytes_(std::max<std::size_t>(
          1, std::min(tasks.options().history_page_bytes, max_reply_bytes / 2))) {}

asio::awaitable<Result<void>> WorkerApi::Handle(SessionState& session,
                                                const auth::Principal& caller,
                                                wire::Request::Method::Reader method,
                                                milliseconds timeout,
                                                wire::Response::Builder out) {
  if (session.registered && caller.name != session.principal) {
    co_return Err(Errc::kPermissionDenied,
                  "this connection is registered as worker '" + session.worker_id +
                      "' of principal '" + session.principal + "', not of '" + caller.name + "'");
  }
  switch (method.which()) {
    case wire::Request::Method::REGISTER_WORKER:
      co_return Register(session, caller, method.getRegisterWorker(), out);
    case wire::Request::Method::POLL_WORKFLOW_TASK: {
      RECKON_CO_TRY(NeedsRegistration(session, "pollWorkflowTask"));
      const milliseconds wait =
          std::min(milliseconds(method.getPollWorkflowTask().getWaitMs()), timeout);
      auto polled = PollWorkflow(session, wait, out);
      co_return co_await std::move(polled);
    }
    case wire::Request::Method::GET_WORKFLOW_TASK_PAGE: {
      RECKON_CO_TRY(NeedsRegistration(session, "getWorkflowTaskPage"));
      co_return WorkflowTaskPage(session, method.getGetWorkflowTaskPage(), out);
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
      co_return Heartbeat(session, method.getHeartbeat(), out);
    }
    default:
      co_return Err(Errc::kInternal, "WorkerApi::Handle called for a client method; "
                                     "the Service dispatches by the method table (methods.h)");
  }
}

void WorkerApi::Disconnected(SessionState& session) {
  if (session.registered) {
    spdlog::info("worker {} disconnected", session.worker_id);
    tasks_.RemoveSession(session.id);
    session.registered = false;
  }
}

Result<void> WorkerApi::Register(SessionState& session, const auth::Principal& caller,
                               wire::RegisterWorker::Reader in, wire::Response::Builder out) {
  if (session.registered) {
    return Err(Errc::kFailedPrecondition,
               "this connection is already registered as worker '" + session.worker_id +
                   "'; open a new connection to register again");
  }
  RECKON_TRY(std::string worker_id, RequiredText(in.getWorkerId(), "workerId"));
  if (auto live = tasks_.WorkerConnected(worker_id)) {
    return Err(Errc::kAlreadyExists,
               "worker id '" + worker_id + "' is in use by a live connection (principal '" + *live +
                   "'); give each worker process its own --worker-id, or retry once the old "
                   "connection has closed");
  }
  std::set<std::string> types;
  for (auto type : in.getWorkflowTypes()) {
    types.insert(Str(type));
    if (!caller.AllowsWorkflowType(Str(type))) {
      return Err(Errc::kPermissionDenied, "principal '" + caller.name +
                                              "' may not host workflow type '" + Str(type) +
                                              "' (its token is scoped to other types)");
    }
  }
  for (auto tool : in.getTools()) {
    if (!caller.AllowsTool(Str(tool.getName()))) {
      return Err(Errc::kPermissionDenied, "principal '" + caller.name + "' may not host tool '" +
                                              Str(tool.getName()) +
                                              "' (its token is scoped to other tools)");
    }
  }
  WorkerBuild build;
  build.build_id = Str(in.getBuildId());
  RECKON_TRY(CheckBuildId(build.build_id, "buildId", /*allow_empty=*/true));
  for (auto compatible : in.getCompatibleBuilds()) {
    RECKON_TRY(CheckBuildId(Str(compatible), "compatibleBuilds", /*allow_empty=*/false));
    build.compatible.insert(Str(compatible));
  }
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
  session.principal = caller.name;
  spdlog::info("worker {} (principal {}, build '{}', {} compatible build(s)) registered: {} "
               "workflow type(s), {} tool(s)",
               worker_id, caller.name, build.build_id, build.compatible.size(), types.size(),
               tools.size());
  tasks_.AddSession(session.id, caller.name, std::move(worker_id), std::move(types),
                    std::move(tools), std::move(build));
  auto result = out.initResult().initRegistered();
  result.setHeartbeatIntervalMs(
      static_cast<std::uint32_t>(tasks_.options().heartbeat_interval.count()));
  result.setLeaseTimeoutMs(static_cast<std::uint32_t>(tasks_.options().lease_timeout.count()));
  return Ok();
}

template <class View>
bool WorkerApi::Deliverable(std::optional<View>& task, const SessionState& session,
                          wire::Response::Builder out) {
  if (task && !tasks_.HasSession(session.id)) {
    tasks_.Undeliverable(task->token);  // the connection closed while the task was on its way
    task.reset();
  }
  if (!task) out.initResult().setNoTask();
  return task.has_value();
}

asio::awaitable<Result<void>> WorkerApi::PollWorkflow(SessionState& session, milliseconds wait,
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
  if (task->query) {
    auto q = t.initQuery();
    q.setName(Text(task->query->name));
    q.setArgsJson(Text(task->query->args_json));
    q.setValidateUpdate(task->query->validate_update);
  }
  // The first page of the events; the rest waits in the task queues for getWorkflowTaskPage.
  const std::span<const storage::Event> events(task->events);
  const Page page = events.empty() ? Page{} : CutPage(events, 0, page_bytes_);
  const std::size_t end = page.end;
  EventsToWire(events.first(end), page.payloads, t.initEvents(static_cast<unsigned>(end)));
  if (end < events.size()) {
    const std::string next = PageToken(task->token, end);
    t.setNextPageToken(kj::arrayPtr(reinterpret_cast<const capnp::byte*>(next.data()),
                                    next.size()));
  }
  if (end > 0) {
    RECKON_CO_TRY(FitsFrame(out, task->token, task->run, events.front(), events[end - 1]));
  }
  if (end < events.size()) {
    spdlog::info("workflow task {} of '{}': {} events, {} in its first page, the rest in pages "
                 "of at most {} bytes",
                 task->token, task->run.workflow_id, events.size(), end, page_bytes_);
    std::vector<storage::Event> rest(std::make_move_iterator(task->events.begin() + end),
                                     std::make_move_iterator(task->events.end()));
    tasks_.KeepPages(task->token, std::move(rest), end);
  }
  co_return Ok();
}

Result<void> WorkerApi::FitsFrame(wire::Response::Builder out, std::uint64_t token,
                                  const storage::RunRef& run, const storage::Event& first,
                                  const storage::Event& last) {
  const std::size_t bytes = out.totalSize().wordCount * sizeof(capnp::word);
  if (bytes + 1024 <= max_reply_bytes_) return Ok();
  // Pages stay within half a frame, so only an event that alone outgrows a frame gets here:
  // stop the run with the reason instead of retrying forever.
  Error error = Err(
      Errc::kResourceExhausted,
      "a workflow task of '" + run.workflow_id + "' cannot be delivered: its page of events " +
          std::to_string(first.seq) + ".." + std::to_string(last.seq) + " takes " +
          std::to_string(bytes) + " bytes, over the frame limit of " +
          std::to_string(max_reply_bytes_) +
          " bytes (an event larger than a frame travels in no page); keep tool outputs, "
          "inputs and signal payloads well under the frame limit");
  tasks_.FailWorkflowTask(token, error);
  return error;
}

Result<void> WorkerApi::WorkflowTaskPage(SessionState& session,
                                         wire::GetWorkflowTaskPage::Reader in,
                                         wire::Response::Builder out) {
  const std::uint64_t token = in.getTaskToken();
  RECKON_TRY(TaskQueues::HeldPages held, tasks_.Pages(session.id, token));
  auto raw = in.getPageToken();
  RECKON_TRY(const std::size_t from,
             PageTokenPosition(std::span<const std::byte>(
                                   reinterpret_cast<const std::byte*>(raw.begin()), raw.size()),
                               token));
  if (from < held.first || from - held.first >= held.events.size()) {
    return Err(Errc::kInvalidArgument,
               "pageToken names event " + std::to_string(from) + " of workflow task " +
                   std::to_string(token) + ", outside its pages (events " +
                   std::to_string(held.first) + ".." +
                   std::to_string(held.first + held.events.size() - 1) +
                   "); pass the nextPageToken as received");
  }
  const std::size_t begin = from - held.first;
  const Page cut = CutPage(held.events, begin, page_bytes_);
  const std::size_t end = cut.end;
  const std::span<const storage::Event> page = held.events.subspan(begin, end - begin);
  auto reply = out.initResult().initWorkflowTaskPage();
  EventsToWire(page, cut.payloads, reply.initEvents(static_cast<unsigned>(page.size())));
  if (end < held.events.size()) {
    const std::string next = PageToken(token, held.first + end);
    reply.setNextPageToken(kj::arrayPtr(reinterpret_cast<const capnp::byte*>(next.data()),
                                        next.size()));
  }
  return FitsFrame(out, token, held.run, page.front(), page.back());
}

asio::awaitable<Result<void>> WorkerApi::PollTool(SessionState& session, milliseconds wait,
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
  t.setLastHeartbeatDetailsJson(Text(task->last_heartbeat_details_json));
  co_return Ok();
}

Result<void> WorkerApi::CompleteWorkflow(SessionState& session,
                                       wire::CompleteWorkflowTask::Reader in,
                                       wire::Response::Builder out) {
  if (tasks_.IsQueryTask(in.getTaskToken())) {
    // A question's answer: the reply, or the handler's (or validator's) error as is.
    Result<std::string> answer = Err(Errc::kInternal, "unset");
    if (in.isQueryResult()) {
      answer = Str(in.getQueryResult());
    } else if (in.isFailure()) {
      answer = FromWire(in.getFailure());
    } else {
      return Err(Errc::kInvalidArgument,
                 "completeWorkflowTask of a query task carries neither queryResult nor a failure");
    }
    RECKON_TRY(tasks_.CompleteQueryTask(session.id, in.getTaskToken(), std::move(answer)));
    out.initResult().setOk();
    return Ok();
  }
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

Result<void> WorkerApi::CompleteTool(SessionState& session, wire::CompleteToolTask::Reader in,
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

Result<void> WorkerApi::Heartbeat(SessionState& session, wire::Heartbeat::Reader in,
                                  wire::Response::Builder out) {
  auto tokens_in = in.getTaskTokens();
  std::vector<std::uint64_t> tokens;
  tokens.reserve(tokens_in.size());
  for (std::uint64_t token : tokens_in) tokens.push_back(token);
  std::vector<ToolProgress> progress;
  progress.reserve(in.getProgress().size());
  for (auto beat : in.getProgress()) {
    progress.push_back(ToolProgress{beat.getTaskToken(), Str(beat.getDetailsJson())});
  }
  auto stop = tasks_.Heartbeat(session.id, tokens, progress);
  auto list = out.initResult().initHeartbeat().initCancel(static_cast<unsigned>(stop.size()));
  for (unsigned i = 0; i < stop.size(); ++i) list.set(i, stop[i]);
  return Ok();
}

}  // namespace reckon::api
