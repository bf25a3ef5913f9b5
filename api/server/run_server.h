// RunServer: `reckon server` as a function. Opens the journal, loads the contracts workers
// declared earlier, recovers every running workflow, listens, and serves until SIGTERM or
// SIGINT (graceful: stops accepting, closes connections, returns 0). SIGKILL is safe too:
// nothing is acted on before it is durable, and the next start recovers from the journal.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "reckon/protocol/tls.h"
#include "reckon/api/server/http/http_server_options.h"
#include "reckon/api/server/server.h"
#include "reckon/api/server/task_queues.h"
#include "reckon/engine/engine.h"
#include "reckon/storage/sqlite/sqlite_journal.h"

namespace reckon::api {

struct ServerConfig {
  std::string journal_path;
  std::string listen = "127.0.0.1:7233";
  std::string trace_path;  // JSON-lines effect trace; empty: <journal>.trace.jsonl
  bool quiet = false;      // no per-transition log lines
  // Commit on the event loop's own thread instead of a commit thread (docs/PERFORMANCE.md
  // compares the two).
  bool inline_commit = false;
  storage::SqliteJournalOptions journal;
  // --tls-cert, --tls-key, --client-ca (docs/SECURITY.md, "Transport: TLS and client
  // certificates"): empty serves
  // plaintext, which a non-loopback --listen warns about.
  TlsServerFiles tls;
  // --namespace: part of every operation and message id of the runs this server starts
  // (engine/operation_id.h, docs/VERSIONING.md); one per journal that shares providers.
  std::string id_namespace = "default";
  std::string payload_key_file;  // --payload-key: seal payloads at rest (docs/SECURITY.md)
  // --nats-url: deliver the transactional outbox to NATS JetStream (host/outbox_dispatch.h);
  // empty: published messages wait in the outbox.
  std::string nats_url;
  TaskQueueOptions tasks;
  ServerOptions server;
  // Authentication (docs/SECURITY.md). The first start on a journal with no principal writes
  // an admin token to `admin_token_file` (default <journal>.admin-token), mode 0600, as a new
  // file (base/private_file.h): an existing one that is a link, another user's or accessible
  // by others is refused, and the server does not start.
  std::string admin_token_file;
  // --insecure-dev: requests without a token act as the principal "dev" with every
  // permission. Refused unless every listener (`listen`, `http_listen`) is on a loopback
  // address (api/server/listen.h); warned about at every start.
  bool insecure_dev = false;
  // Called once the server listens, with the bound port (tests and `--port-file`).
  std::function<void(std::uint16_t port)> on_listening;
  // --http HOST:PORT: the console and the JSON HTTP API (docs/HTTP_API.md); empty: none.
  // Refused beyond loopback without TLS.
  std::string http_listen;
  std::function<void(std::uint16_t port)> on_http_listening;  // `--http-port-file`
  // The limits of the --http port (--http-max-connections, ...). Its `tls` and `insecure_dev`
  // are set by the server from `tls` and `insecure_dev` above.
  HttpServerOptions http;
  // Prometheus metrics (docs/OPERATIONS.md), served at /metrics of the --http port. Off
  // (--no-metrics): no sink, no commit observer, /metrics is 404 (bench/ compares the two).
  bool metrics = true;
  // --otlp-endpoint URL: export spans to an OTLP/HTTP collector ("http://127.0.0.1:4318"),
  // from a thread of their own (telemetry/otlp_trace_sink.h); empty: none.
  std::string otlp_endpoint;
  // --cluster (docs/DEPLOYMENT.md, "Several nodes on PostgreSQL"): one of several servers on one
  // PostgreSQL journal, owning the shards it holds leases on (api/server/cluster_member.h).
  struct Cluster {
    bool enabled = false;
    std::string advertise;  // --advertise HOST:PORT; empty: the listen host and bound port
    std::string server_id;  // --server-id; empty: the advertised address
    std::chrono::milliseconds lease{3000};  // --shard-lease-ms
  } cluster;
  // --retention AGE (docs/OPERATIONS.md, "Retention"): every `retention_every` (0: a quarter
  // of AGE, between 200 ms and 10 min), finished runs last updated more than AGE ago move to
  // a new archive file in `archive_dir` (empty: <journal>.archive/) and leave the journal
  // (api/server/retention.h). 0: never. Refused with --cluster.
  std::chrono::microseconds retention{0};
  std::chrono::milliseconds retention_every{0};
  std::string archive_dir;
  // --history-warn-events, --history-max-events (engine/engine.h, HistoryLimits).
  HistoryLimits history;
};

// Returns the process exit code: 0 after a graceful stop, 1 if it could not start or the engine
// stopped (the message on stderr says why and what to do).
int RunServer(const ServerConfig& config);

}  // namespace reckon::api
