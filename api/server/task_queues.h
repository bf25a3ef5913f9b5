// TaskQueues: the engine's WorkflowHost and ToolDispatcher in server mode. Every activation and
// every tool call becomes a task that remote workers long-poll for; the awaitable the engine
// holds completes when a worker reports back, or when the task's lease runs out.
//
// Queues. There is one queue per workflow type and one per tool name; a worker session polls
// the queues of what it declared it hosts. Routing by what a worker can run needs no queue
// names to persist across restarts (docs/ARCHITECTURE.md, decision 11). The queues live in
// memory only: recovery derives every task again from the journal (decision 10).
//
// Workflow tasks. Workflow code is deterministic and side-effect free, so a workflow task may
// run more than once: a task whose worker disconnects or exceeds workflow_task_timeout goes
// back to its queue with the run's full history, and a late reply to it is ignored. A run is
// sticky to the session that last took a task for it: that session gets only new events (it
// has the rest cached); any other session gets the full history, built from the journal plus
// the batch not yet committed. A sticky task waits for its session at most sticky_timeout
// before any session may take it.
//
// Builds. A session declares a worker build (build_routing.h). A run is pinned to the build of
// the session that takes its first workflow task (or to the build its history records, when
// the engine hands over a full history); its workflow tasks then go only to sessions that
// CanServe that build, and wait in the queue while none is connected. The worker and build of
// the session that completed an activation go back to the engine (TakeRanOn), which journals
// them as WorkflowTaskStarted when the run's build changes, so a restart keeps the pin. Tool tasks are not
// routed by build: a tool's contract, not the workflow code, says what it does.
//
// Tool tasks. The attempt number is the lease's fencing token (decision 12). A worker holding
// tool tasks heartbeats them; a task not heartbeaten for lease_timeout is lost: the attempt's
// outcome is unknown (its contract decides what follows) and a lookup's verdict is
// still_unknown. When the engine gives up on an attempt (its hard deadline), the task is
// cancelled and the next heartbeat reply tells the worker to stop. A completion that arrives
// for an attempt the engine no longer waits for (stale token, other attempt, after a restart)
// is handed to `on_late`: a success is evidence of a commit, never a second effect.
//
// Per-tool timeouts (task_queue_timeouts.cc; docs/ARCHITECTURE.md, decision 46). A contract's
// heartbeat_timeout: a leased attempt whose tool has not heartbeaten itself (Heartbeat with
// `progress`) within it is lost, as a lost lease is (outcome unknown, code heartbeat_timeout);
// the worker's automatic renewal of the tokens it holds does not count. A contract's
// schedule_to_start_timeout: an attempt no session has leased within it is withdrawn from its
// queue and reported retryable with AttemptOutcome::not_started (code
// schedule_to_start_timeout). Leasing and withdrawing both run on the one executor, and each
// first checks that the other has not happened: a task is either handed to a worker or
// withdrawn, never both. The last details a tool heartbeated are kept with its task and go
// with whatever outcome ends the attempt.
//
// Threads: everything runs on one single-threaded executor, the engine's.
#pragma once

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <utility>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "reckon/api/server/build_routing.h"
#include "reckon/engine/tool_dispatcher.h"
#include "reckon/engine/workflow_host.h"

namespace reckon::api {

struct TaskQueueOptions {
  std::chrono::milliseconds workflow_task_timeout{10000};
  std::chrono::milliseconds sticky_timeout{2000};
  std::chrono::milliseconds heartbeat_interval{1000};
  std::chrono::milliseconds lease_timeout{5000};
  std::chrono::milliseconds max_poll_wait{30000};
  // How long a query, or an update's validation, waits for a worker to answer it (taken and
  // answered) before it fails with kDeadlineExceeded.
  std::chrono::milliseconds query_timeout{10000};
  // The byte budget of one page of a workflow task's events (--history-page-bytes;
  // docs/PROTOCOL.md, "History pages"): a task whose events take more goes out as its first
  // page plus a next-page token. The worker API caps it at half the frame limit.
  std::size_t history_page_bytes = 2u << 20;
};

// A question about a run carried by a workflow task (QueryRequest, engine/workflow_host.h).
struct QueryTaskView {
  std::string name;
  std::string args_json;
  bool validate_update = false;
};

using SessionId = std::uint64_t;

struct WorkflowTaskView {
  std::uint64_t token = 0;
  storage::RunRef run;
  std::string workflow_type;
  bool full_history = false;
  std::int64_t now_us = 0;
  std::vector<storage::Event> events;
  // Set: a query task (the events are the full history); answer with CompleteQueryTask.
  std::optional<QueryTaskView> query;
};

enum class ToolTaskKind { kAttempt, kReconcile };

struct ToolTaskView {
  std::uint64_t token = 0;
  ToolTaskKind kind = ToolTaskKind::kAttempt;
  storage::RunRef run;
  std::string step_id;
  std::string operation_id;
  std::string tool;
  boost::json::value input;
  std::uint32_t attempt = 0;  // or the lookup round
  std::int64_t deadline_us = 0;
  std::string last_heartbeat_details_json;  // an earlier attempt's progress; empty: none
};

// A tool's own heartbeat, as a worker relays it: the task and its latest details (empty: a
// beat without details).
struct ToolProgress {
  std::uint64_t token = 0;
  std::string details_json;
};

// What a worker reported for a tool task, as the server received it.
struct ToolReport {
  std::uint64_t token = 0;
  std::string workflow_id;
  std::string operation_id;
  std::uint32_t attempt = 0;
  std::optional<AttemptOutcome> attempt_outcome;      // for an attempt
  std::optional<ReconcileOutcome> reconcile_outcome;  // for a lookup
};

class TaskQueues final : public WorkflowHost, public ToolDispatcher {
 public:
  // Called with a completion for an attempt nobody waits for any more.
  using LateAttempt = std::function<void(const ToolReport& report)>;
  // The durable history of a run (the journal's events), for a worker that must rebuild it.
  using DurableHistory =
      std::function<Result<std::vector<storage::Event>>(const storage::RunRef& run)>;

  TaskQueues(boost::asio::any_io_executor executor, TaskQueueOptions options,
             LateAttempt on_late, DurableHistory durable_history);
  ~TaskQueues() override;
  TaskQueues(const TaskQueues&) = delete;
  TaskQueues& operator=(const TaskQueues&) = delete;

  // --- the engine's side ---
  boost::asio::awaitable<Result<std::vector<Command>>> Activate(ActivationRequest request) override;
  void Evict(const storage::RunRef& run) override;
  // The worker and build of the session whose completion returned the run's last activation.
  std::optional<storage::WorkflowTaskStarted> TakeRanOn(const storage::RunRef& run) override;
  // A query or an update's validation: a workflow task of its own for any session hosting the
  // type (never sticky, never in the way of the run's own workflow task, and a worker that
  // takes it rebuilds the run from the history it carries). Fails with kDeadlineExceeded
  // when no worker answered within query_timeout.
  boost::asio::awaitable<Result<std::string>> Query(QueryRequest request) override;
  boost::asio::awaitable<AttemptOutcome> RunAttempt(AttemptRequest request) override;
  boost::asio::awaitable<ReconcileOutcome> Reconcile(ReconcileRequest request) override;

  // --- the workers' side ---
  // `principal` with `worker_id` is who holds the session's tool leases: only the same
  // principal presenting the same worker id may renew or complete them (after a reconnect).
  void AddSession(SessionId session, std::string principal, std::string worker_id,
                  std::set<std::string> workflow_types, std::set<std::string> tools,
                  WorkerBuild build = {});
  // The principal whose connected session uses `worker_id`, if any.
  std::optional<std::string> WorkerConnected(const std::string& worker_id) const;
  // The session's connection closed: its polls end, its workflow tasks go back to their
  // queues. Its tool tasks keep their leases: the worker may reconnect and heartbeat them.
  void RemoveSession(SessionId session);
  bool HasSession(SessionId session) const { return sessions_.count(session) != 0; }
  // Whether any session now connected hosts the workflow type / the tool.
  bool Hosts(const std::string& workflow_type) const;

  boost::asio::awaitable<std::optional<WorkflowTaskView>> PollWorkflowTask(
      SessionId session, std::chrono::milliseconds wait);
  boost::asio::awaitable<std::optional<ToolTaskView>> PollToolTask(
      SessionId session, std::chrono::milliseconds wait);

  // A worker's result for a workflow task. Errc::kNotFound for a token the server no longer
  // holds (the task was reassigned): the reply is dropped.
  Result<void> CompleteWorkflowTask(SessionId session, std::uint64_t token,
                                    Result<std::vector<Command>> result);
  // A worker's answer to a query task (the reply JSON, or the handler's error). kNotFound for
  // a token the server no longer holds.
  Result<void> CompleteQueryTask(SessionId session, std::uint64_t token,
                                 Result<std::string> answer);
  bool IsQueryTask(std::uint64_t token) const {
    auto it = workflow_tasks_.find(token);
    return it != workflow_tasks_.end() && it->second.query.has_value();
  }
  // A worker's result for a tool task. A stale report is handed to on_late (attempts) or
  // dropped (lookups); both count as accepted.
  void CompleteToolTask(SessionId session, ToolReport report);
  // The workflow task `token` cannot be delivered at all (its reply would break the frame
  // limit): the activation fails with `error`, and the engine stops the run with it.
  void FailWorkflowTask(std::uint64_t token, Error error) {
    FinishWorkflowTask(token, std::move(error));
  }
  // Paging (docs/PROTOCOL.md, "History pages"). The worker API keeps here the events of a
  // delivered workflow task past its first page: `rest` are its events [first, first +
  // rest.size()). They stay while the task is leased, and go when it finishes or goes back to
  // its queue.
  void KeepPages(std::uint64_t token, std::vector<storage::Event> rest, std::size_t first);
  struct HeldPages {
    storage::RunRef run;
    std::span<const storage::Event> events;  // valid until the next call into TaskQueues
    std::size_t first = 0;
  };
  // The kept events of task `token` for a page request of `session`, renewing the task's
  // lease (a worker reading pages is working on it). Errc::kNotFound when the session no longer
  // holds the task: it finished, timed out and went back to its queue under a new token, or
  // the server restarted; the worker drops it. kFailedPrecondition when the task has no pages.
  Result<HeldPages> Pages(SessionId session, std::uint64_t token);
  // The poll that took `token` could not hand it over (its connection closed first): the task
  // goes back to its queue as if never taken.
  void Undeliverable(std::uint64_t token);
  // Renews the leases of `tokens`; returns those the worker should stop.
  std::vector<std::uint64_t> Heartbeat(SessionId session, const std::vector<std::uint64_t>& tokens);
  // The same, and the tools of `progress` heartbeated themselves: their heartbeat timeouts
  // restart and their details are kept (details over kMaxHeartbeatDetailsBytes are dropped).
  std::vector<std::uint64_t> Heartbeat(SessionId session, const std::vector<std::uint64_t>& tokens,
                                       const std::vector<ToolProgress>& progress);
  // Attempts lost to a heartbeat timeout and attempts withdrawn unstarted, so far.
  std::uint64_t heartbeat_timeouts() const { return heartbeat_timeouts_; }
  std::uint64_t schedule_to_start_timeouts() const { return schedule_to_start_timeouts_; }

  // For metrics (telemetry/metrics.h), read on the event loop at scrape time: per queue, the
  // tasks waiting to be taken and the leases lost so far (workflow tasks that timed out on
  // their worker, tool tasks not heartbeaten for lease_timeout). `kind` is "workflow" (the
  // queue is a workflow type) or "tool" (a tool name).
  struct QueueStats {
    std::string kind;
    std::string queue;
    std::size_t queued = 0;
    std::uint64_t leases_lost = 0;
  };
  std::vector<QueueStats> queue_stats() const;
  // Worker sessions now connected.
  std::size_t connected_sessions() const { return sessions_.size(); }

  // For `reckon workers` (listWorkers): each connected session with what it polls and the
  // leases it holds now, and the runs whose workflow task no connected session may take
  // because of its build. Read on the event loop.
  struct HeldTool {
    std::string workflow_id;
    std::string operation_id;
    std::string tool;
    std::uint32_t attempt = 0;
  };
  struct WorkerView {
    std::string worker_id;
    std::string principal;
    WorkerBuild build;
    std::set<std::string> workflow_types;
    std::set<std::string> tools;
    std::int64_t connected_since_us = 0;
    std::vector<std::string> workflow_tasks;  // workflow ids
    std::vector<HeldTool> tool_tasks;
  };
  struct WaitingRun {
    storage::RunRef run;
    std::string workflow_type;
    std::string build_id;
  };
  std::vector<WorkerView> Workers() const;
  std::vector<WaitingRun> WaitingForBuild() const;
  // The build the run is pinned to; nullopt while not known (tests, diagnostics).
  std::optional<std::string> BuildOf(const std::string& workflow_id) const;

  const TaskQueueOptions& options() const { return options_; }
  std::size_t pending_workflow_tasks() const { return workflow_tasks_.size(); }
  std::size_t pending_tool_tasks() const { return tool_tasks_.size(); }

 private:
  using Clock = std::chrono::steady_clock;
  // Held through a pointer: Boost 1.81's any_completion_handler move-assignment recurses
  // forever (it copies from an lvalue through its converting constructor), so a handler is
  // only ever move-constructed, never assigned or stored in a container that reassigns
  // (docs/ARCHITECTURE.md, decision 16).
  template <class Signature>
  using HandlerPtr = std::unique_ptr<boost::asio::any_completion_handler<Signature>>;
  struct Session {
    std::string principal;
    std::string worker_id;
    std::set<std::string> workflow_types;
    std::set<std::string> tools;
    WorkerBuild build;
    std::int64_t connected_since_us = 0;
  };
  struct RunCache {
    SessionId sticky = 0;  // the session that holds the run's instance, 0 if none is known
    std::optional<std::string> build;  // the build the run is pinned to; nullopt: not yet
    // Who completed the run's last activation, until the engine takes it (TakeRanOn).
    std::optional<storage::WorkflowTaskStarted> ran_on;
  };
  struct WorkflowTask {
    std::uint64_t token = 0;
    storage::RunRef run;
    std::string workflow_type;
    std::vector<storage::Event> new_events;    // what the code has not seen
    std::vector<storage::Event> batch_events;  // decided, not yet durable
    std::int64_t now_us = 0;
    int bounces = 0;  // workers answered "cannot run it now" (not cached, retryable)
    // While leased: the delivery's events past its first page (KeepPages), from its event
    // `unsent_from` on.
    std::vector<storage::Event> unsent;
    std::size_t unsent_from = 0;
    SessionId leased_to = 0;  // 0 while queued
    Clock::time_point queued_at;
    Clock::time_point lease_expires;
    HandlerPtr<void(Result<std::vector<Command>>)> done;
    // A query task: the question, its answer's handler and when it gives up.
    std::optional<QueryTaskView> query;
    HandlerPtr<void(Result<std::string>)> query_done;
    Clock::time_point query_deadline;
  };
  struct ToolTask {
    ToolTaskView view;
    SessionId leased_to = 0;
    std::string worker_id;  // the worker holding the lease; only it may renew or complete it
    std::string principal;  // and the principal it registered as
    bool cancelled = false;  // the engine stopped waiting; kept until the worker lets go
    Clock::time_point lease_expires;
    // Per-tool timeouts (zero: not declared) and what they are measured against.
    std::chrono::milliseconds heartbeat_timeout{0};
    Clock::time_point heartbeat_expires;  // while leased: the tool's next beat is due by then
    std::optional<Clock::time_point> start_by;  // while queued: withdrawn if not leased by then
    std::string details_json;  // the latest details the tool heartbeated in this attempt
    boost::asio::cancellation_slot slot;
    HandlerPtr<void(AttemptOutcome)> attempt_done;
    HandlerPtr<void(ReconcileOutcome)> reconcile_done;
  };
  template <class View>
  struct Waiter {
    std::uint64_t id = 0;
    SessionId session = 0;
    std::shared_ptr<boost::asio::steady_timer> timer;
    HandlerPtr<void(std::optional<View>)> done;
  };

  std::uint64_t NextToken() { return next_token_++; }
  // Queues a tool task and completes with the outcome stored through `done`.
  template <class Outcome>
  boost::asio::awaitable<Outcome> QueueToolTask(ToolTaskView view,
                                                HandlerPtr<void(Outcome)> ToolTask::*done,
                                                std::chrono::milliseconds heartbeat_timeout = {},
                                                std::chrono::milliseconds schedule_to_start = {});
  // task_queue_timeouts.cc: ends the attempts whose tool missed its heartbeat timeout and
  // withdraws those no worker took before their schedule-to-start timeout.
  void ExpireToolTimeouts(Clock::time_point now);
  // A task was just leased: its tool's heartbeat timeout starts.
  static void StartHeartbeatClock(ToolTask& task, Clock::time_point now);
  void QueueWorkflowTask(std::uint64_t token);
  // Puts a leased workflow task back in its queue under a new token, so that a late reply to
  // the earlier delivery can never be taken for the new one. Returns the new token.
  std::uint64_t RequeueWorkflowTask(std::uint64_t token);
  const std::string& WorkerOf(SessionId session) const;
  // Whether `session` is the worker (principal and worker id) that holds `task`'s lease.
  bool HoldsLease(const ToolTask& task, SessionId session) const;
  bool Eligible(const WorkflowTask& task, SessionId session, Clock::time_point now) const;
  std::optional<WorkflowTaskView> TakeWorkflowTask(SessionId session);
  // The journal's history of the task's run followed by its batch's pending events.
  Result<std::vector<storage::Event>> FullHistory(const WorkflowTask& task);
  std::optional<ToolTaskView> TakeToolTask(SessionId session);
  void MatchWaiters();
  void FinishWorkflowTask(std::uint64_t token, Result<std::vector<Command>> result);
  void FinishQueryTask(std::uint64_t token, Result<std::string> answer);
  void FinishToolTask(std::uint64_t token, std::optional<AttemptOutcome> attempt,
                      std::optional<ReconcileOutcome> reconcile);
  void OnToolCancelled(std::uint64_t token);
  void ExpireWaiter(std::uint64_t id);
  void Tick();
  void ArmTick();

  boost::asio::any_io_executor executor_;
  TaskQueueOptions options_;
  LateAttempt on_late_;
  DurableHistory durable_history_;
  std::uint64_t next_token_;
  std::uint64_t next_waiter_ = 1;
  std::map<SessionId, Session> sessions_;
  std::map<std::string, RunCache> runs_;  // by workflow id
  std::map<std::uint64_t, WorkflowTask> workflow_tasks_;
  // The workflow tasks Tick looks at: the leased ones and the queries (a task waiting in its
  // queue has no lease to expire). Tick then costs steps per task held by a worker, not per
  // task queued: a restart queues one per running run (issue 18, W6).
  std::set<std::uint64_t> ticked_workflow_tasks_;
  std::map<std::string, std::deque<std::uint64_t>> workflow_queues_;  // by workflow type
  std::map<std::uint64_t, ToolTask> tool_tasks_;
  std::map<std::string, std::deque<std::uint64_t>> tool_queues_;  // by tool
  // Leases lost so far, by (kind, queue) as in QueueStats.
  std::map<std::pair<std::string, std::string>, std::uint64_t> leases_lost_;
  std::uint64_t heartbeat_timeouts_ = 0;
  std::uint64_t schedule_to_start_timeouts_ = 0;
  std::deque<Waiter<WorkflowTaskView>> workflow_waiters_;
  std::deque<Waiter<ToolTaskView>> tool_waiters_;
  boost::asio::steady_timer tick_;
  std::shared_ptr<bool> alive_;
};

}  // namespace reckon::api
