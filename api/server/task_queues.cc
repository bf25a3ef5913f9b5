#include "reckon/api/server/task_queues.h"

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>

namespace reckon::api {
namespace asio = boost::asio;

namespace {

constexpr std::chrono::milliseconds kTickPeriod{100};

// Completes a handler from the event loop rather than from inside the caller's stack, so that a
// resumed coroutine never runs nested in another one's suspension.
template <class Signature, class Value>
void PostResult(const asio::any_io_executor& executor,
                std::unique_ptr<asio::any_completion_handler<Signature>> handler, Value value) {
  if (!handler) return;
  asio::post(executor, [h = std::move(handler), v = std::move(value)]() mutable {
    std::move(*h)(std::move(v));
  });
}

template <class Signature, class Handler>
std::unique_ptr<asio::any_completion_handler<Signature>> Hold(Handler&& handler) {
  return std::make_unique<asio::any_completion_handler<Signature>>(std::forward<Handler>(handler));
}

std::uint64_t BootNonce() {
  std::random_device device;
  // Tokens of one server life never collide with those of an earlier one: a worker that
  // outlived a restart can only ever present a stale token.
  return (std::uint64_t{device()} << 32) | 1;
}

AttemptOutcome UnknownOutcome(std::string code, std::string message) {
  AttemptOutcome outcome;
  outcome.kind = FailureKind::kUnknown;
  outcome.code = std::move(code);
  outcome.message = std::move(message);
  return outcome;
}

ReconcileOutcome StillUnknown(std::string message) {
  ReconcileOutcome outcome;
  outcome.verdict = ReconcileVerdict::kStillUnknown;
  outcome.message = std::move(message);
  return outcome;
}

}  // namespace

TaskQueues::TaskQueues(asio::any_io_executor executor, TaskQueueOptions options,
                       LateAttempt on_late, DurableHistory durable_history)
    : executor_(std::move(executor)),
      options_(options),
      on_late_(std::move(on_late)),
      durable_history_(std::move(durable_history)),
      next_token_(BootNonce()),
      tick_(executor_),
      alive_(std::make_shared<bool>(true)) {
  ArmTick();
}

TaskQueues::~TaskQueues() {
  *alive_ = false;
  tick_.cancel();
  for (auto& waiter : workflow_waiters_) waiter.timer->cancel();
  for (auto& waiter : tool_waiters_) waiter.timer->cancel();
}

// --- the engine's side ------------------------------------------------------------------------

asio::awaitable<Result<std::vector<Command>>> TaskQueues::Activate(ActivationRequest request) {
  // Copy what the request points at before the first suspension (its span dies then).
  RunCache& cache = runs_[request.run.workflow_id];
  if (request.full_history) {
    cache.sticky = 0;  // whoever takes it rebuilds the run
    // A recovered run: its journal says which build started it.
    if (!cache.build) cache.build = BuildOfHistory(request.events);
  }
  const std::uint64_t token = NextToken();
  WorkflowTask task;
  task.token = token;
  task.run = request.run;
  task.workflow_type = request.workflow_type;
  task.new_events.assign(request.events.begin(), request.events.end());
  task.batch_events.assign(request.batch_events.begin(), request.batch_events.end());
  task.now_us = request.now_us;
  workflow_tasks_.emplace(token, std::move(task));
  auto initiate = [this, token](auto handler) {
    WorkflowTask& queued = workflow_tasks_.at(token);
    queued.done = Hold<void(Result<std::vector<Command>>)>(std::move(handler));
    QueueWorkflowTask(token);
    MatchWaiters();
  };
  auto op = asio::async_initiate<decltype(asio::use_awaitable),
                                 void(Result<std::vector<Command>>)>(std::move(initiate),
                                                                     asio::use_awaitable);
  co_return co_await std::move(op);
}

void TaskQueues::Evict(const storage::RunRef& run) { runs_.erase(run.workflow_id); }

std::optional<storage::WorkflowTaskStarted> TaskQueues::TakeRanOn(const storage::RunRef& run) {
  auto it = runs_.find(run.workflow_id);
  if (it == runs_.end()) return std::nullopt;
  return std::exchange(it->second.ran_on, std::nullopt);
}

asio::awaitable<Result<std::string>> TaskQueues::Query(QueryRequest request) {
  const std::uint64_t token = NextToken();
  WorkflowTask task;
  task.token = token;
  task.run = request.run;
  task.workflow_type = request.workflow_type;
  task.new_events.assign(request.history.begin(), request.history.end());
  task.now_us = request.history.empty() ? 0 : request.history.back().recorded_at_us;
  task.query = QueryTaskView{request.name, request.args_json, request.validate_update};
  task.query_deadline = Clock::now() + options_.query_timeout;
  workflow_tasks_.emplace(token, std::move(task));
  ticked_workflow_tasks_.insert(token);
  auto initiate = [this, token](auto handler) {
    WorkflowTask& queued = workflow_tasks_.at(token);
    queued.query_done = Hold<void(Result<std::string>)>(std::move(handler));
    QueueWorkflowTask(token);
    MatchWaiters();
  };
  auto op = asio::async_initiate<decltype(asio::use_awaitable), void(Result<std::string>)>(
      std::move(initiate), asio::use_awaitable);
  co_return co_await std::move(op);
}

Result<void> TaskQueues::CompleteQueryTask(SessionId session, std::uint64_t token,
                                           Result<std::string> answer) {
  auto it = workflow_tasks_.find(token);
  if (it == workflow_tasks_.end() || it->second.leased_to != session || !it->second.query) {
    return Err(Errc::kNotFound, "query task " + std::to_string(token) +
                                    " is no longer held by this worker (it timed out); its "
                                    "answer was dropped");
  }
  FinishQueryTask(token, std::move(answer));
  return Ok();
}

void TaskQueues::FinishQueryTask(std::uint64_t token, Result<std::string> answer) {
  auto it = workflow_tasks_.find(token);
  if (it == workflow_tasks_.end()) return;
  auto done = std::move(it->second.query_done);
  ticked_workflow_tasks_.erase(token);
  workflow_tasks_.erase(it);
  if (done) PostResult(executor_, std::move(done), std::move(answer));
}

template <class Outcome>
asio::awaitable<Outcome> TaskQueues::QueueToolTask(ToolTaskView view,
                                                   HandlerPtr<void(Outcome)> ToolTask::*done,
                                                   std::chrono::milliseconds heartbeat_timeout,
                                                   std::chrono::milliseconds schedule_to_start) {
  const std::uint64_t token = view.token;
  ToolTask task;
  task.view = std::move(view);
  task.heartbeat_timeout = heartbeat_timeout;
  if (schedule_to_start.count() > 0) task.start_by = Clock::now() + schedule_to_start;
  tool_tasks_.emplace(token, std::move(task));
  auto initiate = [this, token, done](auto handler) {
    ToolTask& queued = tool_tasks_.at(token);
    queued.*done = Hold<void(Outcome)>(std::move(handler));
    // The type-erased handler forwards cancellation through a slot of its own; taking the
    // slot from the original handler instead would be overwritten by the wrapper.
    auto slot = (queued.*done)->get_cancellation_slot();
    if (slot.is_connected()) {
      queued.slot = slot;
      slot.assign([this, token, alive = alive_](asio::cancellation_type) {
        if (*alive) OnToolCancelled(token);
      });
    }
    tool_queues_[queued.view.tool].push_back(token);
    MatchWaiters();
  };
  auto op = asio::async_initiate<decltype(asio::use_awaitable), void(Outcome)>(
      std::move(initiate), asio::use_awaitable);
  co_return co_await std::move(op);
}

asio::awaitable<AttemptOutcome> TaskQueues::RunAttempt(AttemptRequest request) {
  ToolTaskView view{NextToken(),     ToolTaskKind::kAttempt, request.run,
                    request.step_id, request.operation_id,   request.tool,
                    std::move(request.input), request.attempt, request.deadline_us,
                    std::move(request.last_heartbeat_details_json)};
  return QueueToolTask<AttemptOutcome>(std::move(view), &ToolTask::attempt_done,
                                       request.heartbeat_timeout,
                                       request.schedule_to_start_timeout);
}

asio::awaitable<ReconcileOutcome> TaskQueues::Reconcile(ReconcileRequest request) {
  ToolTaskView view{NextToken(), ToolTaskKind::kReconcile, request.run,
                    "",          request.operation_id,     request.tool,
                    std::move(request.input), request.round, request.deadline_us};
  return QueueToolTask<ReconcileOutcome>(std::move(view), &ToolTask::reconcile_done);
}

// --- sessions ---------------------------------------------------------------------------------

void TaskQueues::AddSession(SessionId session, std::string principal, std::string worker_id,
                            std::set<std::string> workflow_types, std::set<std::string> tools,
                            WorkerBuild build) {
  const auto since = std::chrono::duration_cast<std::chrono::microseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  sessions_[session] = Session{std::move(principal), std::move(worker_id),
                               std::move(workflow_types), std::move(tools), std::move(build),
                               since};
}

std::optional<std::string> TaskQueues::WorkerConnected(const std::string& worker_id) const {
  for (const auto& [id, session] : sessions_) {
    if (session.worker_id == worker_id) return session.principal;
  }
  return std::nullopt;
}

bool TaskQueues::HoldsLease(const ToolTask& task, SessionId session) const {
  auto it = sessions_.find(session);
  return it != sessions_.end() && task.leased_to != 0 && task.worker_id == it->second.worker_id &&
         task.principal == it->second.principal;
}

void TaskQueues::RemoveSession(SessionId session) {
  auto it = sessions_.find(session);
  if (it == sessions_.end()) return;
  const std::string worker = it->second.worker_id;
  sessions_.erase(it);
  for (auto w = workflow_waiters_.begin(); w != workflow_waiters_.end();) {
    if (w->session != session) {
      ++w;
      continue;
    }
    w->timer->cancel();
    PostResult(executor_, std::move(w->done), std::optional<WorkflowTaskView>());
    w = workflow_waiters_.erase(w);
  }
  for (auto w = tool_waiters_.begin(); w != tool_waiters_.end();) {
    if (w->session != session) {
      ++w;
      continue;
    }
    w->timer->cancel();
    PostResult(executor_, std::move(w->done), std::optional<ToolTaskView>());
    w = tool_waiters_.erase(w);
  }
  std::vector<std::uint64_t> held;
  for (auto& [token, task] : workflow_tasks_) {
    if (task.leased_to == session) held.push_back(token);
  }
  for (std::uint64_t token : held) RequeueWorkflowTask(token);
  const std::size_t requeued = held.size();
  if (requeued > 0) {
    spdlog::warn("worker {} disconnected holding {} workflow task(s); they go to other workers",
                 worker, requeued);
  }
  MatchWaiters();
}

bool TaskQueues::Hosts(const std::string& workflow_type) const {
  return std::any_of(sessions_.begin(), sessions_.end(), [&](const auto& entry) {
    return entry.second.workflow_types.count(workflow_type) != 0;
  });
}

// --- polling ----------------------------------------------------------------------------------

asio::awaitable<std::optional<WorkflowTaskView>> TaskQueues::PollWorkflowTask(
    SessionId session, std::chrono::milliseconds wait) {
  if (sessions_.count(session) == 0) co_return std::nullopt;
  if (auto task = TakeWorkflowTask(session)) co_return task;
  if (wait.count() <= 0) co_return std::nullopt;
  const auto timer =
      std::make_shared<asio::steady_timer>(executor_, std::min(wait, options_.max_poll_wait));
  const std::uint64_t id = next_waiter_++;
  auto initiate = [this, session, timer, id](auto handler) {
    workflow_waiters_.push_back(Waiter<WorkflowTaskView>{
        id, session, timer, Hold<void(std::optional<WorkflowTaskView>)>(std::move(handler))});
    timer->async_wait([this, id, alive = alive_](const boost::system::error_code& ec) {
      if (!ec && *alive) ExpireWaiter(id);
    });
  };
  auto op = asio::async_initiate<decltype(asio::use_awaitable),
                                 void(std::optional<WorkflowTaskView>)>(std::move(initiate),
                                                                        asio::use_awaitable);
  co_return co_await std::move(op);
}

asio::awaitable<std::optional<ToolTaskView>> TaskQueues::PollToolTask(
    SessionId session, std::chrono::milliseconds wait) {
  if (sessions_.count(session) == 0) co_return std::nullopt;
  if (auto task = TakeToolTask(session)) co_return task;
  if (wait.count() <= 0) co_return std::nullopt;
  const auto timer =
      std::make_shared<asio::steady_timer>(executor_, std::min(wait, options_.max_poll_wait));
  const std::uint64_t id = next_waiter_++;
  auto initiate = [this, session, timer, id](auto handler) {
    tool_waiters_.push_back(Waiter<ToolTaskView>{
        id, session, timer, Hold<void(std::optional<ToolTaskView>)>(std::move(handler))});
    timer->async_wait([this, id, alive = alive_](const boost::system::error_code& ec) {
      if (!ec && *alive) ExpireWaiter(id);
    });
  };
  auto op = asio::async_initiate<decltype(asio::use_awaitable), void(std::optional<ToolTaskView>)>(
      std::move(initiate), asio::use_awaitable);
  co_return co_await std::move(op);
}

void TaskQueues::ExpireWaiter(std::uint64_t id) {
  for (auto w = workflow_waiters_.begin(); w != workflow_waiters_.end(); ++w) {
    if (w->id != id) continue;
    PostResult(executor_, std::move(w->done), std::optional<WorkflowTaskView>());
    workflow_waiters_.erase(w);
    return;
  }
  for (auto w = tool_waiters_.begin(); w != tool_waiters_.end(); ++w) {
    if (w->id != id) continue;
    PostResult(executor_, std::move(w->done), std::optional<ToolTaskView>());
    tool_waiters_.erase(w);
    return;
  }
}

const std::string& TaskQueues::WorkerOf(SessionId session) const {
  static const std::string kNone;
  auto it = sessions_.find(session);
  return it == sessions_.end() ? kNone : it->second.worker_id;
}

std::uint64_t TaskQueues::RequeueWorkflowTask(std::uint64_t token) {
  auto node = workflow_tasks_.extract(token);
  if (node.empty()) return 0;
  ticked_workflow_tasks_.erase(token);
  const std::uint64_t fresh = NextToken();
  node.key() = fresh;
  WorkflowTask& task = node.mapped();
  task.token = fresh;
  task.leased_to = 0;
  task.unsent.clear();
  task.unsent.shrink_to_fit();
  task.unsent_from = 0;
  if (!task.query) runs_[task.run.workflow_id].sticky = 0;  // whoever takes it rebuilds it
  if (task.query) ticked_workflow_tasks_.insert(fresh);  // its deadline stands
  workflow_tasks_.insert(std::move(node));
  QueueWorkflowTask(fresh);
  return fresh;
}

void TaskQueues::KeepPages(std::uint64_t token, std::vector<storage::Event> rest,
                           std::size_t first) {
  auto it = workflow_tasks_.find(token);
  if (it == workflow_tasks_.end()) return;
  it->second.unsent = std::move(rest);
  it->second.unsent_from = first;
}

Result<TaskQueues::HeldPages> TaskQueues::Pages(SessionId session, std::uint64_t token) {
  auto it = workflow_tasks_.find(token);
  if (it == workflow_tasks_.end() || it->second.leased_to != session) {
    return Err(Errc::kNotFound,
               "workflow task " + std::to_string(token) +
                   " is no longer held by this worker (it finished, timed out and went back to "
                   "its queue, or the server restarted); drop it and poll again");
  }
  WorkflowTask& task = it->second;
  if (task.unsent.empty()) {
    return Err(Errc::kFailedPrecondition, "workflow task " + std::to_string(token) +
                                              " came in one page; it has no further pages");
  }
  task.lease_expires = Clock::now() + options_.workflow_task_timeout;
  return HeldPages{task.run, task.unsent, task.unsent_from};
}

void TaskQueues::Undeliverable(std::uint64_t token) {
  if (workflow_tasks_.count(token) != 0) {
    RequeueWorkflowTask(token);
  } else if (auto it = tool_tasks_.find(token);
             it != tool_tasks_.end() && it->second.leased_to != 0 && !it->second.cancelled) {
    it->second.leased_to = 0;
    it->second.worker_id.clear();
    it->second.principal.clear();
    tool_queues_[it->second.view.tool].push_front(token);
  }
  MatchWaiters();
}

void TaskQueues::QueueWorkflowTask(std::uint64_t token) {
  WorkflowTask& task = workflow_tasks_.at(token);
  task.queued_at = Clock::now();
  workflow_queues_[task.workflow_type].push_back(token);
}

bool TaskQueues::Eligible(const WorkflowTask& task, SessionId session,
                          Clock::time_point now) const {
  auto cache = runs_.find(task.run.workflow_id);
  auto s = sessions_.find(session);
  if (s == sessions_.end()) return false;
  if (cache != runs_.end() && !CanServe(s->second.build, cache->second.build)) return false;
  if (task.query) return true;
  const SessionId sticky = cache == runs_.end() ? 0 : cache->second.sticky;
  return sticky == 0 || sticky == session || sessions_.count(sticky) == 0 ||
         now - task.queued_at >= options_.sticky_timeout;
}

Result<std::vector<storage::Event>> TaskQueues::FullHistory(const WorkflowTask& task) {
  if (!durable_history_) {
    return Err(Errc::kInternal, "no source of durable history to rebuild a run from");
  }
  RECKON_TRY(std::vector<storage::Event> events, durable_history_(task.run));
  const std::int64_t next = events.empty() ? 1 : events.back().seq + 1;
  if (!task.batch_events.empty() && task.batch_events.front().seq != next) {
    return Err(Errc::kInternal, "run '" + task.run.workflow_id + "': the journal ends before " +
                                    std::to_string(next) + " but the pending batch starts at " +
                                    std::to_string(task.batch_events.front().seq));
  }
  events.insert(events.end(), task.batch_events.begin(), task.batch_events.end());
  return events;
}

std::optional<WorkflowTaskView> TaskQueues::TakeWorkflowTask(SessionId session) {
  auto s = sessions_.find(session);
  if (s == sessions_.end()) return std::nullopt;
  const auto now = Clock::now();
  for (const std::string& type : s->second.workflow_types) {
    auto q = workflow_queues_.find(type);
    if (q == workflow_queues_.end()) continue;
    std::deque<std::uint64_t>& queue = q->second;
    for (auto it = queue.begin(); it != queue.end();) {
      auto t = workflow_tasks_.find(*it);
      if (t == workflow_tasks_.end() || t->second.leased_to != 0) {
        it = queue.erase(it);  // finished or taken meanwhile
        continue;
      }
      WorkflowTask& task = t->second;
      if (!Eligible(task, session, now)) {
        ++it;
        continue;
      }
      queue.erase(it);
      if (task.query) {
        // A question: the whole history, and the run's stickiness left as it is.
        WorkflowTaskView view;
        view.token = task.token;
        view.run = task.run;
        view.workflow_type = task.workflow_type;
        view.now_us = task.now_us;
        view.full_history = true;
        view.events = task.new_events;
        view.query = task.query;
        task.leased_to = session;
        task.lease_expires = now + options_.workflow_task_timeout;
        ticked_workflow_tasks_.insert(task.token);
        return view;
      }
      RunCache& cache = runs_[task.run.workflow_id];
      WorkflowTaskView view;
      view.token = task.token;
      view.run = task.run;
      view.workflow_type = task.workflow_type;
      view.now_us = task.now_us;
      view.full_history = cache.sticky != session;
      if (view.full_history) {
        auto history = FullHistory(task);
        if (!history) {
          // The run cannot be rebuilt: stop it with the reason rather than send a wrong one.
          spdlog::error("{}", history.error().ToString());
          FinishWorkflowTask(task.token, history.error());
          return TakeWorkflowTask(session);
        }
        view.events = std::move(history).value();
      } else {
        view.events = task.new_events;
      }
      task.leased_to = session;
      task.lease_expires = now + options_.workflow_task_timeout;
      ticked_workflow_tasks_.insert(task.token);
      cache.sticky = session;
      return view;
    }
  }
  return std::nullopt;
}

std::optional<ToolTaskView> TaskQueues::TakeToolTask(SessionId session) {
  auto s = sessions_.find(session);
  if (s == sessions_.end()) return std::nullopt;
  for (const std::string& tool : s->second.tools) {
    auto q = tool_queues_.find(tool);
    if (q == tool_queues_.end()) continue;
    std::deque<std::uint64_t>& queue = q->second;
    while (!queue.empty()) {
      const std::uint64_t token = queue.front();
      queue.pop_front();
      auto t = tool_tasks_.find(token);
      if (t == tool_tasks_.end() || t->second.leased_to != 0 || t->second.cancelled) continue;
      t->second.leased_to = session;
      t->second.worker_id = s->second.worker_id;
      t->second.principal = s->second.principal;
      t->second.lease_expires = Clock::now() + options_.lease_timeout;
      StartHeartbeatClock(t->second, Clock::now());
      return t->second.view;
    }
  }
  return std::nullopt;
}

namespace {

bool AnyQueued(const std::map<std::string, std::deque<std::uint64_t>>& queues) {
  return std::any_of(queues.begin(), queues.end(),
                     [](const auto& entry) { return !entry.second.empty(); });
}

}  // namespace

void TaskQueues::MatchWaiters() {
  // Cheap when nothing waits in a queue (the common case right after a task was taken).
  for (auto w = workflow_waiters_.begin();
       w != workflow_waiters_.end() && AnyQueued(workflow_queues_);) {
    auto task = TakeWorkflowTask(w->session);
    if (!task) {
      ++w;
      continue;
    }
    w->timer->cancel();
    PostResult(executor_, std::move(w->done), std::move(task));
    w = workflow_waiters_.erase(w);
  }
  for (auto w = tool_waiters_.begin(); w != tool_waiters_.end() && AnyQueued(tool_queues_);) {
    auto task = TakeToolTask(w->session);
    if (!task) {
      ++w;
      continue;
    }
    w->timer->cancel();
    PostResult(executor_, std::move(w->done), std::move(task));
    w = tool_waiters_.erase(w);
  }
}

// --- completions ------------------------------------------------------------------------------

Result<void> TaskQueues::CompleteWorkflowTask(SessionId session, std::uint64_t token,
                                              Result<std::vector<Command>> result) {
  auto it = workflow_tasks_.find(token);
  if (it == workflow_tasks_.end() || it->second.leased_to != session) {
    return Err(Errc::kNotFound, "workflow task " + std::to_string(token) +
                                    " is no longer held by this worker (it timed out and went "
                                    "to another worker); its result was dropped");
  }
  WorkflowTask& task = it->second;
  constexpr int kMaxBounces = 10;
  if (!result && (result.error().code() == Errc::kFailedPrecondition ||
                  result.error().action() == ErrorAction::kRetry)) {
    if (++task.bounces > kMaxBounces) {
      // Workers keep refusing it: stop the run with the reason rather than loop forever.
      FinishWorkflowTask(token, result.error().WithContext(
                                    "workers refused the workflow task " +
                                    std::to_string(kMaxBounces) + " times"));
      return Ok();
    }
    // The worker no longer has the run cached, or could not run it just now: send the whole
    // history to whoever takes it next.
    RequeueWorkflowTask(token);
    MatchWaiters();
    return Ok();
  }
  if (result) {
    // The first workflow task a worker ran to the end pins the run to that worker's build.
    RunCache& cache = runs_[task.run.workflow_id];
    auto s = sessions_.find(session);
    if (s != sessions_.end()) {
      if (!cache.build) cache.build = s->second.build.build_id;
      cache.ran_on = storage::WorkflowTaskStarted{s->second.worker_id, s->second.build.build_id};
    }
  }
  FinishWorkflowTask(token, std::move(result));
  return Ok();
}

void TaskQueues::FinishWorkflowTask(std::uint64_t token, Result<std::vector<Command>> result) {
  auto it = workflow_tasks_.find(token);
  if (it == workflow_tasks_.end()) return;
  if (it->second.query) {
    FinishQueryTask(token, result ? Result<std::string>(Err(Errc::kInternal,
                                                            "a query task got commands"))
                                  : Result<std::string>(result.error()));
    return;
  }
  auto done = std::move(it->second.done);
  ticked_workflow_tasks_.erase(token);
  workflow_tasks_.erase(it);
  PostResult(executor_, std::move(done), std::move(result));
}

void TaskQueues::CompleteToolTask(SessionId session, ToolReport report) {
  // A worker that reconnected reports on a new session: the token and the worker id decide.
  auto it = tool_tasks_.find(report.token);
  const bool current = it != tool_tasks_.end() && !it->second.cancelled &&
                       HoldsLease(it->second, session) &&
                       it->second.view.operation_id == report.operation_id &&
                       it->second.view.attempt == report.attempt;
  if (current) {
    const bool is_attempt = it->second.view.kind == ToolTaskKind::kAttempt;
    if (is_attempt && report.attempt_outcome) {
      FinishToolTask(report.token, std::move(report.attempt_outcome), std::nullopt);
      return;
    }
    if (!is_attempt && report.reconcile_outcome) {
      FinishToolTask(report.token, std::nullopt, std::move(report.reconcile_outcome));
      return;
    }
    return;  // the wrong kind of outcome: ignored, the lease will run out
  }
  if (it != tool_tasks_.end() && it->second.cancelled) tool_tasks_.erase(it);
  if (report.attempt_outcome && on_late_) on_late_(report);
}

void TaskQueues::FinishToolTask(std::uint64_t token, std::optional<AttemptOutcome> attempt,
                                std::optional<ReconcileOutcome> reconcile) {
  auto it = tool_tasks_.find(token);
  if (it == tool_tasks_.end()) return;
  ToolTask task = std::move(it->second);
  tool_tasks_.erase(it);
  if (task.slot.is_connected()) task.slot.clear();
  // The worker's report carries the tool's last details; else what its heartbeats brought.
  if (attempt && attempt->heartbeat_details_json.empty()) {
    attempt->heartbeat_details_json = std::move(task.details_json);
  }
  if (task.attempt_done) {
    PostResult(executor_, std::move(task.attempt_done),
               attempt ? std::move(*attempt)
                       : UnknownOutcome("internal", "attempt finished without an outcome"));
  } else if (task.reconcile_done) {
    PostResult(executor_, std::move(task.reconcile_done),
               reconcile ? std::move(*reconcile) : StillUnknown("lookup gave no verdict"));
  }
}

void TaskQueues::OnToolCancelled(std::uint64_t token) {
  auto it = tool_tasks_.find(token);
  if (it == tool_tasks_.end() || it->second.cancelled) return;
  ToolTask& task = it->second;
  task.slot = asio::cancellation_slot();  // inside the slot's own handler: forget, never clear
  const bool delivered = task.leased_to != 0;
  std::string worker = "?";
  if (auto s = sessions_.find(task.leased_to); s != sessions_.end()) worker = s->second.worker_id;
  if (task.attempt_done) {
    AttemptOutcome outcome =
        delivered ? UnknownOutcome("deadline_exceeded",
                                   "worker " + worker + " had not reported by the attempt's "
                                   "hard deadline")
                  : AttemptOutcome{false, {}, {}, FailureKind::kRetryable, "not_delivered",
                                   "no worker took the attempt before its deadline"};
    PostResult(executor_, std::move(task.attempt_done), std::move(outcome));
  } else if (task.reconcile_done) {
    PostResult(executor_, std::move(task.reconcile_done),
               StillUnknown(delivered ? "the lookup did not report in time"
                                      : "no worker took the lookup in time"));
  }
  if (delivered) {
    task.cancelled = true;  // the next heartbeat tells the worker to stop
  } else {
    tool_tasks_.erase(it);
  }
}

std::vector<std::uint64_t> TaskQueues::Heartbeat(SessionId session,
                                                 const std::vector<std::uint64_t>& tokens) {
  return Heartbeat(session, tokens, {});
}

std::vector<std::uint64_t> TaskQueues::Heartbeat(SessionId session,
                                                 const std::vector<std::uint64_t>& tokens,
                                                 const std::vector<ToolProgress>& progress) {
  std::vector<std::uint64_t> stop;
  const auto now = Clock::now();
  for (std::uint64_t token : tokens) {
    auto it = tool_tasks_.find(token);
    if (it == tool_tasks_.end() || it->second.cancelled || !HoldsLease(it->second, session)) {
      stop.push_back(token);
      continue;
    }
    it->second.leased_to = session;  // a worker that reconnected carries its leases over
    it->second.lease_expires = now + options_.lease_timeout;
  }
  for (const ToolProgress& beat : progress) {
    auto it = tool_tasks_.find(beat.token);
    if (it == tool_tasks_.end() || it->second.cancelled || !HoldsLease(it->second, session)) {
      continue;  // already in `stop` if the worker still holds it
    }
    StartHeartbeatClock(it->second, now);
    if (!beat.details_json.empty() && beat.details_json.size() <= kMaxHeartbeatDetailsBytes) {
      it->second.details_json = beat.details_json;
    }
  }
  return stop;
}

// --- leases -----------------------------------------------------------------------------------

void TaskQueues::ArmTick() {
  tick_.expires_after(kTickPeriod);
  tick_.async_wait([this, alive = alive_](const boost::system::error_code& ec) {
    if (ec || !*alive) return;
    Tick();
    ArmTick();
  });
}

void TaskQueues::Tick() {
  const auto now = Clock::now();
  std::vector<std::uint64_t> unanswered;
  for (std::uint64_t token : ticked_workflow_tasks_) {
    auto it = workflow_tasks_.find(token);
    if (it == workflow_tasks_.end()) continue;
    if (it->second.query && it->second.query_deadline <= now) unanswered.push_back(token);
  }
  for (std::uint64_t token : unanswered) {
    const WorkflowTask& task = workflow_tasks_.at(token);
    const bool hosted = Hosts(task.workflow_type);
    const std::string what = task.query->validate_update
                                 ? "the validation of update '" + task.query->name + "'"
                                 : "query '" + task.query->name + "'";
    FinishQueryTask(token,
                    Err(Errc::kDeadlineExceeded,
                        "no worker answered " + what + " of run '" + task.run.workflow_id +
                            "' within " + std::to_string(options_.query_timeout.count()) +
                            " ms" +
                            (hosted ? std::string("; the workers hosting workflow type '") +
                                          task.workflow_type + "' are busy or slow: ask again"
                                    : std::string("; no connected worker hosts workflow type '") +
                                          task.workflow_type + "': start one")));
  }
  std::vector<std::uint64_t> expired;
  for (std::uint64_t token : ticked_workflow_tasks_) {
    auto it = workflow_tasks_.find(token);
    if (it == workflow_tasks_.end()) continue;
    const WorkflowTask& task = it->second;
    if (task.leased_to == 0 || task.lease_expires > now) continue;
    spdlog::warn("workflow task of {} timed out on its worker; it goes back to the queue",
                 task.run.workflow_id);
    expired.push_back(token);
    ++leases_lost_[{"workflow", task.workflow_type}];
  }
  for (std::uint64_t token : expired) RequeueWorkflowTask(token);
  std::vector<std::uint64_t> lost;
  for (auto& [token, task] : tool_tasks_) {
    if (task.leased_to != 0 && task.lease_expires <= now) lost.push_back(token);
  }
  for (std::uint64_t token : lost) {
    auto it = tool_tasks_.find(token);
    if (it->second.cancelled) {
      tool_tasks_.erase(it);
      continue;
    }
    const ToolTaskView& view = it->second.view;
    ++leases_lost_[{"tool", view.tool}];
    spdlog::warn("worker lease lost: {} of {} (attempt {}) was not heartbeaten for {} ms",
                 view.operation_id, view.tool, view.attempt, options_.lease_timeout.count());
    FinishToolTask(token,
                   UnknownOutcome("lease_lost", "the worker holding the attempt stopped "
                                                "heartbeating; the outcome is unknown"),
                   StillUnknown("the worker holding the lookup stopped heartbeating"));
  }
  ExpireToolTimeouts(now);
  MatchWaiters();  // sticky tasks that waited long enough may now go to anyone
}

}  // namespace reckon::api
