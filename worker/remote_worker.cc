#include "reckon/worker/remote_worker.h"

#include "reckon/worker/run_inspection.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "reckon/protocol/credentials.h"
#include "reckon/protocol/wire_convert.h"
#include "reckon/contract/contract_json.h"

namespace reckon {
namespace asio = boost::asio;
namespace json = boost::json;
namespace wire = api::wire;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kReportTimeout{10000};
// The first wait after a failed connection, and after a poll the server answered with an
// error; and the longest wait of the poll loops (which hold a session open while they wait).
constexpr milliseconds kFirstReconnectWait{100};
constexpr milliseconds kFirstPollWait{200};
constexpr milliseconds kMaxPollWait{5000};
// While the same failure goes on, it is logged again (as a warning) this often.
constexpr std::chrono::minutes kFailureReminder{10};

std::unique_ptr<capnp::MallocMessageBuilder> NewRequest() {
  return std::make_unique<capnp::MallocMessageBuilder>(128);  // grows when a message needs it
}

std::string DefaultWorkerId() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "worker");
  return std::string(host) + "-" + std::to_string(getpid());
}

std::chrono::steady_clock::time_point SteadyDeadline(std::int64_t deadline_us) {
  const auto now_system = std::chrono::system_clock::now();
  const auto deadline =
      std::chrono::system_clock::time_point(std::chrono::microseconds(deadline_us));
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(deadline - now_system);
}

// The server refused the worker's credential itself: no retry fixes that.
bool IsRefusal(const Error& error) {
  return error.code() == Errc::kUnauthenticated || error.code() == Errc::kPermissionDenied;
}

}  // namespace

RemoteWorker::RemoteWorker(asio::any_io_executor executor, const WorkflowRegistry& workflows,
                           const ToolRegistry& tools, RemoteWorkerOptions options)
    : executor_(std::move(executor)),
      workflows_(workflows),
      tools_(tools),
      options_(std::move(options)),
      idle_(executor_),
      heartbeat_timer_(executor_),
      reconnect_backoff_(kFirstReconnectWait, options_.reconnect_max_backoff),
      alive_(std::make_shared<bool>(true)) {
  if (options_.worker_id.empty()) options_.worker_id = DefaultWorkerId();
}

Result<void> LoadWorkerToken(RemoteWorkerOptions& options, std::string_view token_file_flag) {
  RECKON_TRY(options.connection.token, api::LoadClientToken(token_file_flag));
  return Ok();
}

RemoteWorker::~RemoteWorker() { *alive_ = false; }

void RemoteWorker::Stop() {
  stopped_ = true;
  heartbeat_timer_.cancel();
  if (client_) client_->Close();
  idle_.cancel();
  WakeSleepers();
}

asio::awaitable<void> RemoteWorker::Sleep(milliseconds duration) {
  asio::steady_timer timer(executor_, duration);
  sleepers_.insert(&timer);
  co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  sleepers_.erase(&timer);
}

void RemoteWorker::WakeSleepers() {
  for (asio::steady_timer* timer : sleepers_) timer->cancel();
}

void RemoteWorker::Refused(const Error& error, api::Client& client) {
  if (!refused_) refused_ = error;
  client.Close();
  WakeSleepers();
}

asio::awaitable<void> RemoteWorker::BackOff(Error failure, milliseconds wait) {
  const auto now = std::chrono::steady_clock::now();
  const std::string& message = failure.message();
  ++failures_since_logged_;
  if (message != last_failure_) {
    spdlog::warn("worker {}: {}; trying again in {} ms, then at longer intervals while this "
                 "goes on (at most {} s)",
                 options_.worker_id, message, wait.count(),
                 options_.reconnect_max_backoff.count() / 1000);
    last_failure_ = message;
    last_failure_logged_ = now;
    failures_since_logged_ = 0;
  } else if (now - last_failure_logged_ >= kFailureReminder) {
    spdlog::warn("worker {}: still failing ({} more attempts): {}", options_.worker_id,
                 failures_since_logged_, message);
    last_failure_logged_ = now;
    failures_since_logged_ = 0;
  } else {
    spdlog::debug("worker {}: {}; trying again in {} ms", options_.worker_id, message,
                  wait.count());
  }
  auto slept = Sleep(wait);
  co_await std::move(slept);
}

asio::awaitable<Result<void>> RemoteWorker::Run() {
  // Heartbeats outlive connections: tool calls keep running across a reconnect, and their
  // leases are renewed on whichever connection is up.
  asio::co_spawn(executor_, HeartbeatLoop(), asio::detached);
  while (!stopped_) {
    auto connect = api::Client::Connect(executor_, options_.server, options_.connection);
    auto connected = co_await std::move(connect);
    Result<void> ended = Ok();
    if (!connected) {
      // TLS files that cannot be used (or a malformed address): no retry fixes that.
      if (connected.error().code() == Errc::kInvalidArgument) co_return connected.error();
      ended = connected.error();
    } else {
      client_ = connected.value();
      auto session = Session(client_);
      ended = co_await std::move(session);
      client_->Close();
      const std::optional<Error>& reason = client_->close_reason();
      if (reason && IsRefusal(*reason) && !refused_) refused_ = *reason;
    }
    if (refused_) {
      co_return refused_->WithContext("worker " + options_.worker_id +
                                      " stops: the reckon server at " + options_.server +
                                      " refused it");
    }
    if (!ended && ended.error().action() != ErrorAction::kRetry) co_return ended.error();
    if (stopped_) break;
    auto waited = BackOff(ended ? Err(Errc::kUnavailable, "the session ended") : ended.error(),
                          reconnect_backoff_.Next());
    co_await std::move(waited);
  }
  co_return Ok();
}

asio::awaitable<Result<void>> RemoteWorker::Session(std::shared_ptr<api::Client> client) {
  auto message = NewRequest();
  auto reg = message->initRoot<wire::Request>().initMethod().initRegisterWorker();
  reg.setWorkerId(api::Text(options_.worker_id));
  reg.setBuildId(api::Text(options_.build_id));
  auto compatible =
      reg.initCompatibleBuilds(static_cast<unsigned>(options_.compatible_builds.size()));
  for (unsigned i = 0; i < options_.compatible_builds.size(); ++i) {
    compatible.set(i, api::Text(options_.compatible_builds[i]));
  }
  const auto types = workflows_.Names();
  auto type_list = reg.initWorkflowTypes(static_cast<unsigned>(types.size()));
  for (unsigned i = 0; i < types.size(); ++i) type_list.set(i, api::Text(types[i]));
  const auto tools = tools_.All();
  auto tool_list = reg.initTools(static_cast<unsigned>(tools.size()));
  for (unsigned i = 0; i < tools.size(); ++i) {
    tool_list[i].setName(api::Text(tools[i]->contract.name));
    const std::string contract = json::serialize(ContractToJson(tools[i]->contract));
    tool_list[i].setContractJson(api::Text(contract));
  }
  auto call = client->Call(std::move(message), kReportTimeout);
  auto reply = co_await std::move(call);
  if (!reply) {
    if (IsRefusal(reply.error())) Refused(reply.error(), *client);
    co_return reply.error();
  }
  const api::Reply& registered = reply.value();
  // A session that registered ends the run of failures: the next one waits the shortest time.
  reconnect_backoff_.Reset();
  last_failure_.clear();
  heartbeat_interval_ = milliseconds(std::max<std::uint32_t>(
      50, registered.get().getResult().getRegistered().getHeartbeatIntervalMs()));
  heartbeat_timer_.cancel();  // the loop takes the server's interval now, not after the old one
  spdlog::info("worker {} (build '{}') registered with {}: {} workflow type(s), {} tool(s)",
               options_.worker_id, options_.build_id, options_.server, types.size(), tools.size());

  // Reports that a lost connection kept from the server.
  std::deque<std::shared_ptr<capnp::MallocMessageBuilder>> pending;
  pending.swap(undelivered_);
  for (auto& report : pending) {
    auto delivered = Deliver(client, report);
    co_await std::move(delivered);
  }

  // Tool loops end after the call they are running (its report goes to the connection that is
  // up by then); the session ends when the workflow loops end, i.e. when the connection does.
  for (int i = 0; i < options_.tool_slots; ++i) {
    asio::co_spawn(executor_, ToolLoop(client), asio::detached);
  }
  auto running = std::make_shared<int>(0);
  auto done = std::make_shared<asio::steady_timer>(executor_, asio::steady_timer::time_point::max());
  auto spawn = [&](asio::awaitable<void> loop) {
    ++*running;
    asio::co_spawn(executor_, std::move(loop), [running, done](std::exception_ptr) {
      if (--*running == 0) done->cancel();
    });
  };
  for (int i = 0; i < options_.workflow_slots; ++i) spawn(WorkflowLoop(client));
  co_await done->async_wait(asio::as_tuple(asio::use_awaitable));
  const std::optional<Error>& reason = client->close_reason();
  co_return Err(Errc::kUnavailable,
                reason ? "the reckon server at " + options_.server + " closed the connection: " +
                             reason->ToString()
                       : "the connection to the reckon server at " + options_.server +
                             " was lost");
}

asio::awaitable<std::optional<api::Reply>> RemoteWorker::Poll(std::shared_ptr<api::Client> client,
                                                               bool workflow_task) {
  RetryBackoff backoff(kFirstPollWait, std::min(kMaxPollWait, options_.reconnect_max_backoff));
  while (client->connected() && !stopped_) {
    auto message = NewRequest();
    auto method = message->initRoot<wire::Request>().initMethod();
    const auto wait = static_cast<std::uint32_t>(options_.poll_wait.count());
    if (workflow_task) {
      method.initPollWorkflowTask().setWaitMs(wait);
    } else {
      method.initPollToolTask().setWaitMs(wait);
    }
    auto call = client->Call(std::move(message), options_.poll_wait + milliseconds(5000));
    auto reply = co_await std::move(call);
    if (reply) co_return std::move(reply).value();
    if (reply.error().code() == Errc::kUnavailable) break;
    if (IsRefusal(reply.error())) {
      Refused(reply.error(), *client);
      break;
    }
    auto waited = BackOff(reply.error().WithContext("poll failed"), backoff.Next());
    co_await std::move(waited);
  }
  co_return std::nullopt;
}

// --- workflow tasks ---------------------------------------------------------------------------

asio::awaitable<void> RemoteWorker::WorkflowLoop(std::shared_ptr<api::Client> client) {
  while (true) {
    auto poll = Poll(client, /*workflow_task=*/true);
    std::optional<api::Reply> reply = co_await std::move(poll);
    if (!reply) break;  // the connection ended, or the worker stops
    auto result = reply->get().getResult();
    if (!result.isWorkflowTask()) continue;  // noTask: poll again
    auto task = result.getWorkflowTask();
    auto fetch = ReadEvents(client, task);
    std::optional<Result<std::vector<storage::Event>>> events = co_await std::move(fetch);
    if (!events) continue;  // dropped: the server gives the task to a worker again
    auto completion = Activate(task, std::move(*events));
    auto sent = client->Call(std::move(completion), kReportTimeout);
    auto ack = co_await std::move(sent);
    if (!ack && IsRefusal(ack.error())) {
      Refused(ack.error(), *client);
      break;
    }
    if (!ack && ack.error().code() != Errc::kUnavailable) {
      spdlog::info("worker {}: workflow task result not taken: {}", options_.worker_id,
                   ack.error().message());
    }
  }
}

asio::awaitable<std::optional<Result<std::vector<storage::Event>>>> RemoteWorker::ReadEvents(
    std::shared_ptr<api::Client> client, wire::WorkflowTask::Reader task) {
  using Events = Result<std::vector<storage::Event>>;
  Events events = api::EventsFromWire(task.getEvents(), decoder_);
  if (!events || task.getNextPageToken().size() == 0) co_return events;
  const std::uint64_t token = task.getTaskToken();
  auto page_token = kj::heapArray<capnp::byte>(task.getNextPageToken());
  int pages = 1;
  while (page_token.size() != 0) {
    auto message = NewRequest();
    auto get = message->initRoot<wire::Request>().initMethod().initGetWorkflowTaskPage();
    get.setTaskToken(token);
    get.setPageToken(page_token.asPtr());
    auto call = client->Call(std::move(message), kReportTimeout);
    auto reply = co_await std::move(call);
    if (!reply) {
      if (IsRefusal(reply.error())) Refused(reply.error(), *client);
      // The task is no longer ours (timed out, the server restarted), or the connection went:
      // either way the server hands it out again; nothing was run.
      spdlog::info("worker {}: workflow task {} dropped while reading page {} of its events: {}",
                   options_.worker_id, token, pages + 1, reply.error().message());
      co_return std::nullopt;
    }
    auto page = reply.value().get().getResult().getWorkflowTaskPage();
    auto more = api::EventsFromWire(page.getEvents(), decoder_);
    if (!more) co_return Events(more.error());
    if (more.value().empty() ||
        (!events.value().empty() && more.value().front().seq != events.value().back().seq + 1)) {
      co_return Events(Err(Errc::kInternal,
                           "page " + std::to_string(pages + 1) + " of workflow task " +
                               std::to_string(token) + " does not continue the events before it"));
    }
    for (storage::Event& event : more.value()) events.value().push_back(std::move(event));
    page_token = kj::heapArray<capnp::byte>(page.getNextPageToken());
    ++pages;
  }
  spdlog::info("worker {}: workflow task {}: {} events in {} pages", options_.worker_id, token,
                events.value().size(), pages);
  ++paged_tasks_;
  co_return events;
}

WorkflowInstance* RemoteWorker::CachedInstance(const std::string& workflow_id) {
  auto it = instances_.find(workflow_id);
  return it == instances_.end() ? nullptr : it->second.get();
}

void RemoteWorker::Touch(const std::string& workflow_id) {
  auto [it, inserted] = last_used_.try_emplace(workflow_id, 0);
  if (!inserted) by_use_.erase(it->second);
  it->second = ++use_clock_;
  by_use_.emplace(it->second, workflow_id);
}

void RemoteWorker::Forget(const std::string& workflow_id) {
  instances_.erase(workflow_id);
  if (auto it = last_used_.find(workflow_id); it != last_used_.end()) {
    by_use_.erase(it->second);
    last_used_.erase(it);
  }
}

std::unique_ptr<capnp::MallocMessageBuilder> RemoteWorker::Activate(
    wire::WorkflowTask::Reader task, Result<std::vector<storage::Event>> events) {
  auto message = NewRequest();
  auto complete = message->initRoot<wire::Request>().initMethod().initCompleteWorkflowTask();
  complete.setTaskToken(task.getTaskToken());
  const std::string workflow_id = api::Str(task.getWorkflowId());
  auto fail = [&](const Error& error) {
    api::ToWire(error, complete.initFailure());
    return std::move(message);
  };
  if (!events) return fail(events.error());
  if (task.hasQuery()) {
    // A question about the run: answered from a fresh replay, the cache left alone.
    const std::string type = api::Str(task.getWorkflowType());
    const WorkflowFunction* function = workflows_.Find(type);
    if (function == nullptr) {
      return fail(Err(Errc::kNotFound, "worker " + options_.worker_id +
                                           " hosts no workflow type '" + type + "'"));
    }
    auto query = task.getQuery();
    QueryRequest request{storage::RunRef{workflow_id, api::Str(task.getRunId())}, type,
                         events.value(), query.getValidateUpdate(), api::Str(query.getName()),
                         api::Str(query.getArgsJson())};
    auto answer = InspectRun(*function, request);
    if (!answer) return fail(answer.error());
    complete.setQueryResult(api::Text(answer.value()));
    return message;
  }
  if (task.getFullHistory()) {
    const std::string type = api::Str(task.getWorkflowType());
    const WorkflowFunction* function = workflows_.Find(type);
    if (function == nullptr) {
      return fail(Err(Errc::kNotFound, "worker " + options_.worker_id +
                                           " hosts no workflow type '" + type + "'"));
    }
    Forget(workflow_id);
    while (!instances_.empty() && instances_.size() >= options_.max_cached_runs) {
      // Evict the run whose task came longest ago; the server resends its full history.
      Forget(by_use_.empty() ? instances_.begin()->first : by_use_.begin()->second);
    }
    instances_[workflow_id] =
        std::make_unique<WorkflowInstance>(*function, workflow_id, api::Str(task.getRunId()));
  }
  WorkflowInstance* instance = CachedInstance(workflow_id);
  if (instance == nullptr) {
    return fail(Err(Errc::kFailedPrecondition,
                    "workflow '" + workflow_id + "' is not cached on worker " +
                        options_.worker_id + "; send its full history"));
  }
  Touch(workflow_id);
  auto commands = instance->Activate(events.value(), task.getNowUs());
  if (!commands) {
    Forget(workflow_id);
    return fail(commands.error());
  }
  if (instance->finished()) Forget(workflow_id);
  api::CommandsToWire(commands.value(),
                      complete.initCommands(static_cast<unsigned>(commands.value().size())));
  return message;
}

// --- tool tasks -------------------------------------------------------------------------------

asio::awaitable<void> RemoteWorker::ToolLoop(std::shared_ptr<api::Client> client) {
  while (true) {
    auto poll = Poll(client, /*workflow_task=*/false);
    std::optional<api::Reply> reply = co_await std::move(poll);
    if (!reply) break;
    auto result = reply->get().getResult();
    if (!result.isToolTask()) continue;
    auto run = RunToolTask(result.getToolTask());
    std::shared_ptr<capnp::MallocMessageBuilder> report = co_await std::move(run);
    auto delivered = Deliver(client_, std::move(report));
    co_await std::move(delivered);
    if (client_ != client) break;  // the session this loop served has ended
  }
}

asio::awaitable<std::unique_ptr<capnp::MallocMessageBuilder>> RemoteWorker::RunToolTask(
    wire::ToolTask::Reader task) {
  auto message = NewRequest();
  auto complete = message->initRoot<wire::Request>().initMethod().initCompleteToolTask();
  const std::uint64_t token = task.getTaskToken();
  complete.setTaskToken(token);
  complete.setWorkflowId(task.getWorkflowId());
  complete.setOperationId(task.getOperationId());
  complete.setAttempt(task.getAttempt());
  const bool is_attempt = task.getKind() == wire::ToolTaskKind::ATTEMPT;
  const std::string name = api::Str(task.getTool());
  const Tool* tool = tools_.Find(name);
  auto input = api::JsonFromWire(task.getInputJson(), "tool task input");
  ToolCallContext context{api::Str(task.getWorkflowId()), api::Str(task.getStepId()),
                          api::Str(task.getOperationId()), task.getAttempt(),
                          SteadyDeadline(task.getDeadlineUs()),
                          api::Str(task.getLastHeartbeatDetailsJson())};
  if (is_attempt) {
    AttemptOutcome outcome;
    if (tool == nullptr) {
      outcome = ToolFailed(FailureKind::kDefinitive, "unknown_tool",
                           "worker " + options_.worker_id + " hosts no tool '" + name + "'");
    } else if (!input) {
      outcome = ToolFailed(FailureKind::kDefinitive, "bad_input", input.error().message());
    } else {
      auto cancel = std::make_shared<asio::cancellation_signal>();
      auto heartbeat = std::make_shared<ToolHeartbeat>();
      auto secrets = std::make_shared<CallSecrets>(tool->contract, input.value());
      context.heartbeat = heartbeat;
      context.secrets = secrets;
      held_[token] = Held{cancel, heartbeat, secrets};
      asio::steady_timer deadline(executor_, context.deadline);
      deadline.async_wait([cancel](const boost::system::error_code& ec) {
        if (!ec) cancel->emit(asio::cancellation_type::terminal);
      });
      try {
        auto call = asio::co_spawn(
            executor_, tool->execute(std::move(input).value(), context),
            asio::bind_cancellation_slot(cancel->slot(), asio::use_awaitable));
        outcome = co_await std::move(call);
      } catch (const std::exception& e) {
        // It may have acted before it threw: the outcome is unknown.
        outcome = ToolFailed(FailureKind::kUnknown, "tool_exception", e.what());
      }
      deadline.cancel();
      held_.erase(token);
      if (outcome.heartbeat_details_json.empty()) {
        outcome.heartbeat_details_json = heartbeat->details_json();
      }
      outcome = secrets->Redact(std::move(outcome));  // before it leaves the worker
    }
    api::AttemptOutcomeToWire(outcome, complete);
  } else {
    ReconcileOutcome outcome;
    outcome.verdict = ReconcileVerdict::kStillUnknown;
    if (tool == nullptr || !tool->reconcile) {
      outcome.message = "worker " + options_.worker_id + " has no lookup for '" + name + "'";
    } else {
      json::value lookup_input = input ? std::move(input).value() : json::value();
      auto cancel = std::make_shared<asio::cancellation_signal>();
      auto secrets = std::make_shared<CallSecrets>(tool->contract, lookup_input);
      context.secrets = secrets;
      held_[token] = Held{cancel, nullptr, secrets};
      asio::steady_timer deadline(executor_, context.deadline);
      deadline.async_wait([cancel](const boost::system::error_code& ec) {
        if (!ec) cancel->emit(asio::cancellation_type::terminal);
      });
      try {
        auto call = asio::co_spawn(
            executor_, tool->reconcile(std::move(lookup_input), context),
            asio::bind_cancellation_slot(cancel->slot(), asio::use_awaitable));
        outcome = co_await std::move(call);
      } catch (const std::exception& e) {
        outcome.verdict = ReconcileVerdict::kStillUnknown;
        outcome.message = std::string("lookup threw: ") + e.what();
      }
      deadline.cancel();
      held_.erase(token);
      outcome = secrets->Redact(std::move(outcome));  // before it leaves the worker
    }
    api::ReconcileOutcomeToWire(outcome, complete);
  }
  co_return message;
}

asio::awaitable<void> RemoteWorker::Deliver(std::shared_ptr<api::Client> client,
                                            std::shared_ptr<capnp::MallocMessageBuilder> report) {
  if (!client || !client->connected()) {
    undelivered_.push_back(std::move(report));
    co_return;
  }
  // Call() consumes its message; keep our copy for a retry after a reconnect.
  auto copy = NewRequest();
  copy->setRoot(report->getRoot<wire::Request>().asReader());
  auto call = client->Call(std::move(copy), kReportTimeout);
  auto ack = co_await std::move(call);
  for (int retry = 0; !ack && ack.error().code() == Errc::kDeadlineExceeded && retry < 3 &&
                      client->connected();
       ++retry) {
    // A slow server: send it again on the same connection (the server takes a report once).
    auto again = NewRequest();
    again->setRoot(report->getRoot<wire::Request>().asReader());
    auto resent = client->Call(std::move(again), kReportTimeout);
    ack = co_await std::move(resent);
  }
  if (!ack) {
    if (ack.error().code() == Errc::kUnavailable || ack.error().code() == Errc::kDeadlineExceeded) {
      undelivered_.push_back(std::move(report));
    } else {
      spdlog::warn("worker {}: tool report refused: {}", options_.worker_id,
                   ack.error().ToString());
      // Its lease runs out on the server, which then takes the outcome as unknown.
      if (IsRefusal(ack.error())) Refused(ack.error(), *client);
    }
  }
}

asio::awaitable<void> RemoteWorker::HeartbeatLoop() {
  auto alive = alive_;
  while (*alive && !stopped_) {
    const milliseconds interval = heartbeat_interval_;
    heartbeat_timer_.expires_after(interval);
    co_await heartbeat_timer_.async_wait(asio::as_tuple(asio::use_awaitable));
    if (!*alive || stopped_) break;
    std::shared_ptr<api::Client> client = client_;
    if (held_.empty() || !client || !client->connected()) continue;
    auto message = NewRequest();
    auto beat = message->initRoot<wire::Request>().initMethod().initHeartbeat();
    auto tokens = beat.initTaskTokens(static_cast<unsigned>(held_.size()));
    unsigned i = 0;
    std::vector<std::pair<std::uint64_t, std::string>> progress;
    for (const auto& [token, held] : held_) {
      tokens.set(i++, token);
      if (held.heartbeat && held.heartbeat->pending()) {
        const std::string& details = held.heartbeat->TakeBeat();
        // A beat without details stays one; details leave the worker redacted.
        progress.emplace_back(token, details.empty() || !held.secrets
                                         ? details
                                         : held.secrets->RedactDetails(details));
      }
    }
    auto beats = beat.initProgress(static_cast<unsigned>(progress.size()));
    for (unsigned k = 0; k < progress.size(); ++k) {
      beats[k].setTaskToken(progress[k].first);
      beats[k].setDetailsJson(api::Text(progress[k].second));
    }
    auto call = client->Call(std::move(message), interval * 3);
    auto reply = co_await std::move(call);
    if (!reply) {
      if (IsRefusal(reply.error())) Refused(reply.error(), *client);
      continue;
    }
    for (std::uint64_t token : reply.value().get().getResult().getHeartbeat().getCancel()) {
      auto it = held_.find(token);
      if (it == held_.end()) continue;
      spdlog::warn("worker {}: the server gave up on tool task {}; stopping it",
                   options_.worker_id, token);
      it->second.cancel->emit(asio::cancellation_type::terminal);
    }
  }
}

}  // namespace reckon
