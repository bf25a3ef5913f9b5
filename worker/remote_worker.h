// RemoteWorker: a worker process of server mode. It connects to `reckon server`, declares the
// workflow types and tools it hosts (each tool with its contract; the server journals the
// contract hash with every operation), long-polls workflow tasks and tool tasks, and reports
// results.
//
// Workflow tasks: instances are cached by workflow id, so a task usually carries only the
// events the code has not seen; a task for a run that is not cached (evicted, or this worker
// restarted) is answered "not cached" and comes back with the full history. Events that take
// more than the server's page budget come in pages: the worker reads every page
// (getWorkflowTaskPage) before it runs any code, and drops a task whose pages it cannot read
// (the server hands it out again).
// Tool tasks: at most `tool_slots` run at once (right after a reconnect, calls started on the
// old connection may still be finishing beside a new set); each runs under its hard deadline (the tool
// sees it in ToolCallContext, and is cancelled when it passes). While tool tasks run, the
// worker heartbeats their tokens; a token the server no longer holds is cancelled locally.
// Beats a tool gives itself (ToolCallContext::Heartbeat) go with the next heartbeat, with the
// tool's latest details, and the details go with the attempt's report too.
// A report that could not be delivered (the connection dropped) is sent again after
// reconnecting: a late success is still evidence to the server, never a second effect.
//
// Secrets: a tool task's report, and the heartbeat details relayed while it runs, leave the
// worker redacted with every secret of the call (worker/call_secrets.h).
//
// Connection loss: every poll ends, the worker reconnects and registers again; running tool
// calls carry on and report on the new connection. Every failed attempt (no connection, a TLS
// handshake the server refused, a registration the connection did not survive) waits longer
// before the next (worker/retry_backoff.h: from 100 ms, doubling, with jitter, up to
// reconnect_max_backoff); so does a poll the server answers with an error. A failure is logged
// once, as a warning, with what the connection layer says is wrong and what to check (e.g.
// "the reckon server at ... refused this client's TLS certificate (...): check that --cert ...
// is signed by a CA in the server's --client-ca and has not expired"); the same failure again
// is logged at debug level only, with a reminder every ten minutes. A certificate problem is
// retried (the files are read again at each attempt, and the fix may be on the server's side).
//
// Refusals: when the server refuses the worker's token (unauthenticated: revoked, expired,
// unknown) or what it asks (permission_denied), on any call or as the reason it closed the
// connection, the worker stops: Run() returns that error, which says what to do. No retry can
// fix it (the token is read once, at start), and retrying would only flood the server's audit
// log.
//
// Threads: one single-threaded executor. The registries must outlive the worker.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "reckon/protocol/client.h"
#include "reckon/storage/event_codec.h"
#include "reckon/worker/retry_backoff.h"
#include "reckon/worker/tool.h"
#include "reckon/worker/workflow_registry.h"

namespace reckon {

struct RemoteWorkerOptions {
  std::string server = "127.0.0.1:7233";
  api::ClientOptions connection;  // the worker's token (role worker), frame limits
  // Empty: <hostname>-<pid>. Must be unique among live workers: tool-task leases are bound to
  // it, so that a worker that reconnects keeps its leases.
  std::string worker_id;
  int workflow_slots = 2;  // concurrent workflow task polls
  int tool_slots = 16;     // concurrent tool calls
  std::chrono::milliseconds poll_wait{20000};
  // The longest wait between two attempts while failures go on (reconnecting; polls the server
  // answers with an error wait at most 5 s of it).
  std::chrono::milliseconds reconnect_max_backoff{30000};
  std::size_t max_cached_runs = 10000;
  // The build of this worker's code (docs/VERSIONING.md, "Worker build ids"); empty:
  // unversioned. The server routes a run's workflow tasks only to workers of the build that
  // started it, or that list that build in compatible_builds.
  std::string build_id;
  std::vector<std::string> compatible_builds;  // builds whose runs this code can replay
};

// Puts the worker's API token (role worker; protocol/credentials.h says where it is
// found: `token_file_flag`, else $RECKON_TOKEN_FILE, else ~/.config/reckon/token) into
// options.connection.token. Errors name the file and what is wrong with it.
Result<void> LoadWorkerToken(RemoteWorkerOptions& options, std::string_view token_file_flag);

class RemoteWorker {
 public:
  RemoteWorker(boost::asio::any_io_executor executor, const WorkflowRegistry& workflows,
               const ToolRegistry& tools, RemoteWorkerOptions options);
  ~RemoteWorker();
  RemoteWorker(const RemoteWorker&) = delete;
  RemoteWorker& operator=(const RemoteWorker&) = delete;

  // Runs until Stop(). Returns an error only for what reconnecting cannot fix: the server
  // refused the registration (e.g. a tool's contract differs from the one it journaled) or
  // the worker's token (revoked, expired: see "Refusals" above).
  boost::asio::awaitable<Result<void>> Run();
  void Stop();

  const std::string& worker_id() const { return options_.worker_id; }
  std::size_t cached_runs() const { return instances_.size(); }
  // Workflow tasks whose events came in more than one page, so far.
  std::uint64_t paged_tasks() const { return paged_tasks_; }

 private:
  struct Held {
    std::shared_ptr<boost::asio::cancellation_signal> cancel;
    std::shared_ptr<ToolHeartbeat> heartbeat;  // the tool's own beats, relayed by HeartbeatLoop
    std::shared_ptr<const CallSecrets> secrets;  // what the relayed details are redacted with
  };
  boost::asio::awaitable<Result<void>> Session(std::shared_ptr<api::Client> client);
  // The server refused this worker's credential (see "Refusals"): keeps the first such error,
  // closes `client` so that the session ends, and wakes the loops that wait.
  void Refused(const Error& error, api::Client& client);
  // Logs a failed attempt (see "Connection loss") and waits `wait`.
  boost::asio::awaitable<void> BackOff(Error failure, std::chrono::milliseconds wait);
  // Waits `duration`, or less when Stop() or Refused() wakes every waiter.
  boost::asio::awaitable<void> Sleep(std::chrono::milliseconds duration);
  void WakeSleepers();
  // Long-polls until a reply comes (a task or noTask); nullopt once the connection ends or the
  // worker stops.
  boost::asio::awaitable<std::optional<api::Reply>> Poll(std::shared_ptr<api::Client> client,
                                                         bool workflow_task);
  boost::asio::awaitable<void> WorkflowLoop(std::shared_ptr<api::Client> client);
  boost::asio::awaitable<void> ToolLoop(std::shared_ptr<api::Client> client);
  boost::asio::awaitable<void> HeartbeatLoop();
  // The task's events: its first page and, when it has a next-page token, every further page
  // (getWorkflowTaskPage), in order. nullopt: the task was dropped (the server no longer holds
  // it for this connection, or the connection ended); the server hands it out again. An error:
  // events that do not decode or do not follow each other, sent back as the task's failure.
  boost::asio::awaitable<std::optional<Result<std::vector<storage::Event>>>> ReadEvents(
      std::shared_ptr<api::Client> client, api::wire::WorkflowTask::Reader task);
  std::unique_ptr<capnp::MallocMessageBuilder> Activate(api::wire::WorkflowTask::Reader task,
                                                        Result<std::vector<storage::Event>> events);
  boost::asio::awaitable<std::unique_ptr<capnp::MallocMessageBuilder>> RunToolTask(
      api::wire::ToolTask::Reader task);
  boost::asio::awaitable<void> Deliver(std::shared_ptr<api::Client> client,
                                       std::shared_ptr<capnp::MallocMessageBuilder> report);
  WorkflowInstance* CachedInstance(const std::string& workflow_id);

  boost::asio::any_io_executor executor_;
  const WorkflowRegistry& workflows_;
  const ToolRegistry& tools_;
  RemoteWorkerOptions options_;
  storage::EventDecoder decoder_;
  std::map<std::string, std::unique_ptr<WorkflowInstance>> instances_;  // by workflow id
  // The cache's use order, for eviction in O(log n): workflow id -> use_clock_ at its last
  // task, and the reverse, oldest first.
  std::map<std::string, std::uint64_t> last_used_;
  std::map<std::uint64_t, std::string> by_use_;
  void Touch(const std::string& workflow_id);
  void Forget(const std::string& workflow_id);  // drops the cached instance, if any
  std::uint64_t use_clock_ = 0;
  std::chrono::milliseconds heartbeat_interval_{1000};
  std::map<std::uint64_t, Held> held_;  // running tool tasks by token
  std::deque<std::shared_ptr<capnp::MallocMessageBuilder>> undelivered_;
  std::shared_ptr<api::Client> client_;
  boost::asio::steady_timer idle_;
  // The heartbeat loop's wait; cancelled when a registration brings a new interval.
  boost::asio::steady_timer heartbeat_timer_;
  std::uint64_t paged_tasks_ = 0;
  RetryBackoff reconnect_backoff_;  // reset by a registration
  std::optional<Error> refused_;  // the first refusal of the worker's credential
  std::set<boost::asio::steady_timer*> sleepers_;  // the timers of Sleep() calls in progress
  // The failure last logged, when it was, and the attempts since (see "Connection loss"); the
  // poll loops share one, so that they log a failure once between them.
  std::string last_failure_;
  std::chrono::steady_clock::time_point last_failure_logged_;
  std::uint64_t failures_since_logged_ = 0;
  bool stopped_ = false;
  std::shared_ptr<bool> alive_;
};

}  // namespace reckon
