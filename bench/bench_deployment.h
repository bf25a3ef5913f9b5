// Deployment: the processes of a server-mode benchmark, as deployed: `reckon server` (one, or
// several in cluster mode on one PostgreSQL database) and bench_worker processes, each
// worker connected to every server, with role tokens issued as in production
// (docs/SECURITY.md). The benchmark is the client.
//
// StartDeployment journals on a SQLite file in options.dir, or, with options.postgres, on a
// database it creates there (options.database, which must be new). In cluster mode the first
// server starts alone (its first start on the database writes the admin token), then the
// others; each listens on a port of its own and advertises it. A failure to start is fatal to
// the benchmark: it prints why (and which log to read) and exits.
//
// Ownership: a Deployment owns its processes; destroying it SIGKILLs what still runs (Stop()
// ends them gracefully first). Not thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "reckon/protocol/tls.h"
#include "tests/support/postgres_server.h"
#include "tests/support/subprocess.h"

namespace reckon::bench {

struct DeploymentOptions {
  std::string dir;            // scratch directory: SQLite journal, logs, tokens, certificates
  std::string reckon;         // the reckon binary that serves
  std::string worker_binary;  // bench_worker
  int workers = 2;            // worker processes
  bool tls = false;           // mTLS: server certificate and client certificates everywhere
  bool inline_commit = false;
  bool no_metrics = false;
  std::string otlp_endpoint;  // non-empty: --otlp-endpoint
  std::string nats_url;       // non-empty: --nats-url
  bool quiet = true;          // --quiet (warnings and errors only in the server logs)
  testing::PostgresServer* postgres = nullptr;  // null: SQLite
  std::string database;                         // with postgres: the database to create
  int cluster_servers = 0;  // 0: one server, not in cluster mode; N >= 1: N servers --cluster
  int shard_lease_ms = 0;   // cluster: --shard-lease-ms; 0: the server's default
  // SQLite: the journal is created before the server starts, without page checksums, as a
  // release before them would have (the server keeps a file's format): to measure their cost.
  bool without_page_checksums = false;
};

struct Deployment {
  std::string journal;                     // the SQLite path or postgresql:// URL
  std::vector<testing::Subprocess> servers;
  std::vector<std::string> addresses;      // of servers[i]
  std::vector<std::string> logs;           // stderr of servers[i]
  std::vector<testing::Subprocess> workers;
  std::string token;                       // the operator's (start, watch)
  api::TlsClientConfig tls;                // the benchmark's own client certificate

  // Ends the workers, then the servers (SIGTERM: a cluster server gives its shards back).
  void Stop();
};

Deployment StartDeployment(const DeploymentOptions& options);

// Cluster mode: waits until the lease table of `journal` shows every shard with a live owner,
// `servers` owners, and none holding more than ceil(64 / servers); then one more membership
// period (`lease_ms` / 3) and a little, because each server routes by the table as it last
// read it (every period): until then a server may still answer "no owner right now" for a
// shard that moved. False after `timeout`, with the table's owner counts printed.
bool WaitBalanced(const std::string& journal, int servers, int lease_ms,
                  std::chrono::milliseconds timeout);

}  // namespace reckon::bench
