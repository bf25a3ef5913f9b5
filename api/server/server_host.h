// ServerHost: the composition root of server mode (`reckon server`). It builds the object
// graph in one explicit order and owns it: the journal (the commit thread's connection) and a
// reader connection, the contracts workers declared earlier, the trace sinks, the io_context
// and the commit thread, the task queues, the engine, the service, the server and its
// credential watch. It destroys them in reverse.
//
// The one cycle (the task queues are the engine's WorkflowHost and ToolDispatcher, and hand
// late tool reports back to the engine) is closed by construction order: the queues get a
// callback into this host, which reaches the engine only once Run() has started the loop,
// after every member exists.
//
// Cluster mode (--cluster): the journal is written as a cluster member (every append fenced
// by the shards held, storage/shard_fence.h), and instead of recovering every running workflow
// at start, the ClusterMember takes shards and recovers theirs (api/server/cluster_member.h); on
// a stop it gives its shards back.
//
// Run() recovers every running workflow, listens, and serves until SIGTERM/SIGINT (graceful:
// stops accepting, closes connections, returns 0) or until the engine fails (a commit failed:
// Engine::OnFailed stops the loop at once and Run() returns 1; a restart recovers from the
// journal), or a read finds the journal damaged (Run() returns 1, the file named in the log). Not thread-safe: one thread calls Run().
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/thread_pool.hpp>

#include <memory>
#include <optional>

#include "reckon/api/server/retention.h"
#include "reckon/api/server/http/console_sessions.h"
#include "reckon/api/server/authorizer.h"
#include "reckon/api/server/cluster_member.h"
#include "reckon/api/server/credential_watch.h"
#include "reckon/api/server/run_server.h"
#include "reckon/api/server/server.h"
#include "reckon/api/server/service.h"
#include "reckon/api/server/task_queues.h"
#include "reckon/base/error.h"
#include "reckon/contract/contract_registry.h"
#include "reckon/engine/clock.h"
#include "reckon/engine/engine.h"
#include "reckon/storage/corruption_guard.h"
#include "reckon/storage/journal.h"
#include "reckon/storage/principal_store.h"
#include "reckon/storage/payload_codec.h"
#include "reckon/host/outbox_dispatch.h"
#include "reckon/host/outbox_metrics.h"
#include "reckon/telemetry/jsonl_trace_sink.h"
#include "reckon/telemetry/log_trace_sink.h"
#include "reckon/telemetry/metrics.h"
#include "reckon/telemetry/metrics_sink.h"
#include "reckon/telemetry/otlp_trace_sink.h"

namespace reckon::api {

class HttpApi;
class HttpServer;

class ServerHost {
 public:
  // Opens the journal (twice: writer and reader), loads the journaled contracts, opens the
  // trace file and wires everything; nothing runs yet. Errors name the file and the problem.
  static Result<std::unique_ptr<ServerHost>> Create(const ServerConfig& config);
  ~ServerHost();
  ServerHost(const ServerHost&) = delete;
  ServerHost& operator=(const ServerHost&) = delete;

  // Serves until a signal or an engine failure. Returns the process exit code.
  int Run();

  // For tests that host a server in their own process (Run() on a thread of theirs): stops as
  // SIGTERM would, from any thread; and the loop's executor with the server, whose state may
  // be read only on that executor (post to it).
  void Stop();
  boost::asio::any_io_executor executor() { return io_.get_executor(); }
  const Server& server() const { return *server_; }
  // The OTLP exporter (--otlp-endpoint), for its counters (any thread); null without one.
  const OtlpTraceSink* otlp() const { return otlp_.get(); }

 private:
  ServerHost(const ServerConfig& config, std::unique_ptr<storage::Journal> journal,
             std::unique_ptr<storage::Journal> reader,
             std::unique_ptr<storage::PrincipalStore> principals,
             std::unique_ptr<JsonlTraceSink> trace_file,
             std::shared_ptr<spdlog::logger> trace_logger,
             std::unique_ptr<storage::ShardFence> fence,
             std::unique_ptr<storage::ShardLeases> leases);
  // The first start's admin token; the development-mode warning.
  Result<void> PrepareAuthentication();
  boost::asio::awaitable<void> Start();
  // Gauges of the task queues and workers (metrics on).
  void RegisterQueueMetrics();
  void StopServing(int exit_code);
  void StartRetention();

  const ServerConfig config_;
  std::unique_ptr<storage::PayloadCodec> payload_codec_;  // --payload-key; outlives the journals
  // --cluster: the shards this server holds, which the commit connection checks every append
  // against; outlives the journals. Null when not in a cluster.
  std::unique_ptr<storage::ShardFence> fence_;
  std::unique_ptr<storage::Journal> journal_;  // the commit thread's connection
  std::unique_ptr<storage::Journal> reader_;   // everything else reads through this one
  // reader_ as the engine, the task queues and the service use it: a damaged file found by any
  // read stops the server (storage/corruption_guard.h).
  std::unique_ptr<storage::CorruptionGuard> guarded_reader_;
  ContractRegistry contracts_;
  std::unique_ptr<storage::PrincipalStore> principals_;
  std::unique_ptr<JsonlTraceSink> trace_file_;
  LogTraceSink trace_log_;
  std::unique_ptr<OtlpTraceSink> otlp_;  // --otlp-endpoint; outlives the engine
  SystemClock clock_;
  std::unique_ptr<Authorizer> authorizer_;
  // The bytes buffered for all connections (ServerOptions::max_buffered_bytes). Declared before
  // the io_context: handlers it still holds when it is destroyed release their charges here.
  MemoryBudget buffers_;
  boost::asio::io_context io_{1};
  boost::asio::thread_pool commit_thread_{1};
  // Prometheus metrics (ServerConfig::metrics). The sink is null when metrics are off; both
  // outlive the engine (whose commit observer reports to the sink) and the HTTP API.
  MetricsRegistry metrics_;
  std::unique_ptr<MetricsSink> metrics_sink_;
  std::unique_ptr<TaskQueues> tasks_;
  std::unique_ptr<Engine> engine_;
  // --cluster: the membership loop and the router of the service; null when not in a cluster.
  std::unique_ptr<ClusterMember> cluster_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<Server> server_;
  // Ends the connections of a revoked or expired credential (api/server/credential_watch.h).
  std::unique_ptr<CredentialWatch> credential_watch_;
  // --http: the console and the HTTP API, on the same loop (docs/HTTP_API.md).
  ConsoleSessions console_sessions_;
  std::unique_ptr<HttpApi> http_api_;
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<OutboxDispatch> outbox_;  // --nats-url; a sink of engine_
  std::unique_ptr<OutboxMetrics> outbox_metrics_;  // metrics on; reads outbox_'s counts
  std::unique_ptr<RetentionLoop> retention_;  // --retention; uses the engine's committer
  boost::asio::signal_set signals_{io_, SIGINT, SIGTERM};
  int exit_code_ = 0;
};

}  // namespace reckon::api
