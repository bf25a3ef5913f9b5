#include "bench/bench_deployment.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "reckon/protocol/credentials.h"
#include "reckon/storage/postgres/shard_leases.h"
#include "reckon/storage/shard.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "tests/support/role_tokens.h"
#include "tests/support/test_certs.h"

namespace reckon::bench {
namespace {

using namespace std::chrono_literals;

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "%s\n", what.c_str());
  std::exit(1);
}

// Waits for the port file a server writes once it listens; 0 after 10 s.
int WaitPort(const std::string& port_file) {
  int port = 0;
  for (int i = 0; i < 1000 && port == 0; ++i) {
    std::ifstream file(port_file);
    if (!(file >> port)) std::this_thread::sleep_for(10ms);
  }
  return port;
}

}  // namespace

Deployment StartDeployment(const DeploymentOptions& o) {
  Deployment d;
  const std::string& dir = o.dir;
  std::vector<std::pair<std::string, std::string>> client_env;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(dir + "/server.db" + suffix);
  std::filesystem::remove(dir + "/server.db.admin-token");
  d.journal = dir + "/server.db";
  if (o.postgres) {
    auto url = o.postgres->CreateDatabase(o.database);
    if (!url) Fail("PostgreSQL: " + url.error().ToString());
    d.journal = url.value();
  } else if (o.without_page_checksums) {
    storage::SqliteJournalOptions journal;
    journal.page_checksums = false;
    auto created = storage::OpenSqliteJournal(d.journal, journal);
    if (!created) Fail("creating the journal: " + created.error().ToString());
  }
  std::vector<std::string> args = {"server",      "--journal",   d.journal, "--listen",
                                   "127.0.0.1:0", "--trace",     "/dev/null",
                                   "--admin-token-file", dir + "/server.db.admin-token"};
  if (o.quiet) args.push_back("--quiet");
  if (o.inline_commit) args.push_back("--inline-commit");
  if (o.no_metrics) args.push_back("--no-metrics");
  if (!o.otlp_endpoint.empty()) args.insert(args.end(), {"--otlp-endpoint", o.otlp_endpoint});
  if (!o.nats_url.empty()) args.insert(args.end(), {"--nats-url", o.nats_url});
  if (o.cluster_servers > 0) args.push_back("--cluster");
  if (o.shard_lease_ms > 0) {
    args.insert(args.end(), {"--shard-lease-ms", std::to_string(o.shard_lease_ms)});
  }
  if (o.tls) {
    std::filesystem::create_directories(dir + "/certs");
    auto certs = testing::WriteTestCertificates(dir + "/certs");
    if (!certs) Fail("test certificates: " + certs.error().ToString());
    args.insert(args.end(), {"--tls-cert", certs.value().server_cert, "--tls-key",
                             certs.value().server_key, "--client-ca", certs.value().ca});
    client_env = {{"RECKON_CA", certs.value().ca},
                  {"RECKON_CERT", certs.value().client_cert},
                  {"RECKON_KEY", certs.value().client_key}};
    d.tls.ca_file = certs.value().ca;
    d.tls.cert_file = certs.value().client_cert;
    d.tls.key_file = certs.value().client_key;
  }
  const int count = std::max(1, o.cluster_servers);
  // The first server alone: its first start on the journal bootstraps the admin token.
  for (int i = 0; i < count; ++i) {
    const std::string suffix = count == 1 ? "" : "-" + std::to_string(i);
    const std::string port_file = dir + "/port" + suffix;
    std::filesystem::remove(port_file);
    testing::SubprocessOptions options;
    options.args = args;
    options.args.insert(options.args.end(), {"--port-file", port_file});
    options.stderr_path = dir + "/server" + suffix + ".log";
    d.logs.push_back(options.stderr_path);
    auto started = testing::Subprocess::Start(o.reckon, options);
    if (!started) Fail("cannot start " + o.reckon + ": " + started.error().ToString());
    d.servers.push_back(std::move(started).value());
    const int port = WaitPort(port_file);
    if (port == 0) Fail("server did not start; see " + options.stderr_path);
    d.addresses.push_back("127.0.0.1:" + std::to_string(port));
  }
  // Every request carries a token, as in production (docs/SECURITY.md).
  auto tokens = testing::IssueRoleTokens(o.reckon, d.addresses[0], dir + "/server.db.admin-token",
                                         dir, client_env);
  auto token = tokens ? api::ReadTokenFile(testing::RoleTokenFile(dir, "operator"))
                      : Result<std::string>(tokens.error());
  if (!token) Fail("cannot issue tokens: " + token.error().ToString());
  d.token = token.value();
  for (int i = 0; i < o.workers; ++i) {
    testing::SubprocessOptions w;
    w.env = client_env;
    w.env.emplace_back("RECKON_TOKEN_FILE", testing::RoleTokenFile(dir, "worker"));
    for (const std::string& address : d.addresses) w.args.insert(w.args.end(), {"--server", address});
    w.args.insert(w.args.end(), {"--id", "bench-" + std::to_string(i)});
    w.stderr_path = dir + "/worker.log";
    auto started = testing::Subprocess::Start(o.worker_binary, w);
    if (!started) Fail("cannot start " + o.worker_binary + ": " + started.error().ToString());
    d.workers.push_back(std::move(started).value());
  }
  return d;
}

void Deployment::Stop() {
  workers.clear();
  for (auto& server : servers) {
    if (!server.running()) continue;
    auto stopped = server.Terminate();
    if (!stopped) std::fprintf(stderr, "server stop: %s\n", stopped.error().ToString().c_str());
  }
}

bool WaitBalanced(const std::string& journal, int servers, int lease_ms,
                  std::chrono::milliseconds timeout) {
  auto leases = storage::ShardLeases::Open(journal);
  if (!leases) {
    std::fprintf(stderr, "lease table: %s\n", leases.error().ToString().c_str());
    return false;
  }
  const int most = (storage::kShardCount + servers - 1) / servers;
  const auto give_up = std::chrono::steady_clock::now() + timeout;
  std::map<std::string, int> per_owner;
  while (true) {
    auto table = leases.value()->List();
    per_owner.clear();
    int owned = 0;
    if (table) {
      for (const auto& lease : table.value()) {
        if (lease.owner.empty() || lease.expires_in_ms <= 0) continue;
        ++owned;
        ++per_owner[lease.owner];
      }
    }
    bool balanced = owned == storage::kShardCount && static_cast<int>(per_owner.size()) == servers;
    for (const auto& [owner, shards] : per_owner) balanced = balanced && shards <= most;
    if (balanced) {
      std::this_thread::sleep_for(std::chrono::milliseconds(lease_ms / 3 + 300));
      return true;
    }
    if (std::chrono::steady_clock::now() >= give_up) break;
    std::this_thread::sleep_for(20ms);
  }
  std::fprintf(stderr, "the lease table is not balanced over %d server(s):", servers);
  for (const auto& [owner, shards] : per_owner) std::fprintf(stderr, " %s: %d", owner.c_str(), shards);
  std::fprintf(stderr, "\n");
  return false;
}

}  // namespace reckon::bench
