// server_bench: W1 and W3 in server mode. `reckon server` and the workers run as separate
// processes and talk Cap'n Proto over loopback TCP (or TLS); this program is the client (start, then
// watchWorkflow until the run is over). Figures are printed with the fsync floor measured in
// the same run, on the same disk.
//
//   W1  one ten_calls workflow at a time: p50/p99 from the start request to the terminal
//       event seen by the client (target p50 <= 5 ms)
//   W3  concurrency 32 for S seconds: workflows/s (target >= 1,500 on 2 cores), and the CPU
//       time of the server and worker processes per workflow
//
// Each runs over plaintext and over TLS with client certificates (as deployed: every process
// presents one), side by side, and the TLS / plaintext ratios are printed (--transport picks
// one).
//
// With --otlp, W3 runs twice per transport, the server without and then with --otlp-endpoint
// pointing at a stand-in collector in this process (telemetry/testing/otlp_receiver.h), and
// the ratio is printed with the spans the collector received.
//
// With --effects compare (W3, one transport), rounds alternate between everything that leaves
// the engine off (--no-metrics, no OTLP, no outbox: ten_calls) and all of it on (metrics, OTLP
// to a collector on 127.0.0.1 in this process that accepts and discards, and the outbox:
// ten_calls_publish publishes one message per workflow, delivered by the server's dispatcher to
// a real nats-server with JetStream that this program starts); it prints each round, the
// on / off ratios of throughput and server CPU per workflow with their spread, and what the
// broker received.
//
// With --checksums compare (W3, SQLite, one transport), rounds alternate between a journal whose
// pages carry checksums (the default for a new journal) and one created without them (as by a
// release before them; docs/PERFORMANCE.md, "Journal checksums"), and it prints the ratios as
// --effects does.
//
// With --journal-backend postgres or both, W1 and W3 run with the server's journal on SQLite
// and/or on a private PostgreSQL 15 that this program starts (tests/support/postgres_server.h,
// data directory under $TMPDIR, fsync and synchronous_commit on), a fresh database per run.
// W3 then also prints the CPU of the PostgreSQL processes per workflow (the postmaster, its
// children and the children it reaped, from /proc) and the transactions PostgreSQL counted in
// that database per workflow (pg_stat_database.xact_commit + xact_rollback, read through psql
// after the server has exited, so every backend has flushed its counters; each statement
// outside an explicit transaction counts as one). --pg-statements adds the statements per
// workflow from pg_stat_statements, which PostgreSQL must preload (see the option's help).
//
// With --cluster-servers N[,N...] (PostgreSQL), W1 and W3 also run on clusters of N
// `reckon server --cluster` processes on one fresh database each (bench/bench_deployment.h):
// every bench_worker connects to every server; the client keeps one connection per server,
// sends each start to the next server in turn and follows a not_owner redirect to the owner,
// and watches the run there (bench/bench_client.h). Measuring starts once the lease table
// shows the 64 shards owned and balanced. W3's server CPU is the sum over the servers. A
// summary prints every configuration of the run side by side, with the floor.
//
// With --failover, the failover benchmark instead (bench/failover.h).
//
//   server_bench --dir DIR [--workers N] [--w1 COUNT] [--w3-seconds S] [--transport T]
//                [--reckon PATH] [--otlp] [--effects compare [--rounds R]]
//                [--checksums compare [--rounds R]]
//                [--journal-backend sqlite|postgres|both [--pg-statements]
//                 [--cluster-servers 1,2,3 [--shard-lease-ms MS]]]
//                [--failover [--failover-servers N] [--failover-lease-ms 3000,1500]
//                 [--failover-repeats R] [--failover-load C]]
#include <CLI/CLI.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <set>
#include <thread>

#include "reckon/protocol/client.h"
#include "reckon/protocol/credentials.h"
#include "bench/bench_client.h"
#include "bench/bench_deployment.h"
#include "bench/failover.h"
#include "bench/fsync_floor.h"
#include "bench/machine.h"
#include "bench/nats_broker.h"
#include "bench/process_cpu.h"
#include "tests/support/postgres_server.h"
#include "reckon/telemetry/testing/otlp_check.h"
#include "reckon/telemetry/testing/otlp_receiver.h"

namespace {

namespace asio = boost::asio;
using namespace reckon;
using SteadyClock = std::chrono::steady_clock;
using namespace std::chrono_literals;

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * v.size()))];
}

using bench::Deployment;
using bench::ProcessCpuSeconds;

bool g_inline_commit = false;  // --inline-commit: passed on to the server
bool g_no_metrics = false;     // the server runs with --no-metrics (--metrics off / compare)
bool g_without_page_checksums = false;  // --checksums compare: the "off" rounds
double g_last_server_cpu_ms = 0;  // server CPU ms per workflow of the last W3
std::string g_reckon = RECKON_CLI_PATH;  // --reckon: the server binary (another build to compare)
std::string g_otlp_endpoint;  // non-empty: passed to the server as --otlp-endpoint
std::string g_nats_url;       // non-empty: passed to the server as --nats-url
std::string g_workflow_type = "ten_calls";  // or ten_calls_publish (--effects)
// W3 runs so far: part of the workflow ids, so that the outbox message ids (derived from them)
// differ from run to run and the broker stores each run's messages instead of deduplicating.
int g_w3_runs = 0;
// --journal-backend postgres: the private PostgreSQL server; each cluster gets a database of
// its own on it. Null: the journal is a SQLite file in --dir.
testing::PostgresServer* g_postgres = nullptr;
int g_databases = 0;
std::string g_database;  // the database of the current cluster
double g_last_pg_cpu_ms = 0, g_last_pg_xacts = 0;  // per workflow, of the last W3 on PostgreSQL

bool g_pg_statements = false;  // --pg-statements

// --pg-statements: the statements run in `database` most often, with their calls per
// workflow, from pg_stat_statements (which PostgreSQL must preload: see --pg-statements).
void PrintPostgresStatements(const std::string& database, int workflows) {
  const std::string command =
      "/usr/lib/postgresql/15/bin/psql -Atq -F '|' '" + g_postgres->ConnectionString("postgres") +
      "' -c 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements' -c \"SELECT s.calls, "
      "regexp_replace(left(s.query, 110), '\\s+', ' ', 'g') FROM pg_stat_statements s JOIN "
      "pg_database d ON d.oid = s.dbid WHERE d.datname = '" + database +
      "' ORDER BY s.calls DESC LIMIT 12\"";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return;
  char line[512];
  while (std::fgets(line, sizeof line, pipe)) {
    long long calls = 0;
    const char* bar = std::strchr(line, '|');
    if (!bar || std::sscanf(line, "%lld", &calls) != 1) continue;
    std::printf("      %6.2f per workflow  %s", static_cast<double>(calls) / workflows, bar + 1);
  }
  ::pclose(pipe);
}

// --cluster-servers: the servers of the current deployment in cluster mode (0: one server, not
// in cluster mode), and their --shard-lease-ms (0: the default).
int g_cluster_servers = 0;
int g_shard_lease_ms = 0;
double g_last_w1_p99 = 0, g_last_worker_cpu_ms = 0;  // of the last W1 and W3
double g_last_redirected = 0;  // the share of the last W3's starts that were redirected

double PostgresTransactions(const std::string& database) {
  return bench::PostgresTransactions(g_postgres->ConnectionString("postgres"), database);
}

// With `tls`, as deployed: the server requires client certificates, which every worker, the
// CLI and the bench's client present. In cluster mode, returns once the shards are balanced.
Deployment Deploy(const std::string& dir, int workers, bool tls) {
  bench::DeploymentOptions o;
  o.dir = dir;
  o.reckon = g_reckon;
  o.worker_binary = BENCH_WORKER_PATH;
  o.workers = workers;
  o.tls = tls;
  o.inline_commit = g_inline_commit;
  o.no_metrics = g_no_metrics;
  o.otlp_endpoint = g_otlp_endpoint;
  o.nats_url = g_nats_url;
  o.postgres = g_postgres;
  if (g_postgres) {
    g_database = "bench_" + std::to_string(++g_databases);
    o.database = g_database;
  }
  o.cluster_servers = g_cluster_servers;
  o.shard_lease_ms = g_shard_lease_ms;
  o.without_page_checksums = g_without_page_checksums;
  Deployment d = bench::StartDeployment(o);
  if (g_cluster_servers > 0 && !bench::WaitBalanced(d.journal, g_cluster_servers,
                                                     g_shard_lease_ms > 0 ? g_shard_lease_ms : 3000,
                                                     60s)) {
    std::exit(1);
  }
  return d;
}

std::unique_ptr<bench::BenchClient> Connect(asio::io_context& io, const Deployment& d) {
  std::unique_ptr<bench::BenchClient> client;
  bench::BenchClientOptions options{d.addresses, d.token, d.tls, /*patient=*/false};
  bool done = false;
  auto connect = [&]() -> asio::awaitable<void> {
    auto connecting = bench::BenchClient::Connect(io.get_executor(), std::move(options));
    auto c = co_await std::move(connecting);
    if (c) client = std::move(c).value();
    else std::fprintf(stderr, "%s\n", c.error().ToString().c_str());
    done = true;
  };
  asio::co_spawn(io, connect(), asio::detached);
  while (!done) io.run_one();
  if (!client) std::exit(1);
  return client;
}

// The first runs wait for the workers to register: runs until one owned by each server has
// completed (in cluster mode the workers register with every server). Returns the runs.
int WarmUp(asio::io_context& io, bench::BenchClient& client, const std::string& prefix,
           std::size_t servers) {
  std::set<std::string> served;
  int runs = 0;
  bool done = false, ok = true;
  auto warm = [&]() -> asio::awaitable<void> {
    while (served.size() < servers && runs < 200 && ok) {
      const std::string owner =
          co_await client.RunOne(prefix + std::to_string(runs++), g_workflow_type, "{}");
      ok = !owner.empty();
      served.insert(owner);
    }
    done = true;
  };
  asio::co_spawn(io, warm(), asio::detached);
  const auto give_up = SteadyClock::now() + 60s;
  while (!done && SteadyClock::now() < give_up) io.run_one_for(10ms);
  if (!done || !ok || served.size() < servers) {
    std::fprintf(stderr, "warm-up failed\n");
    std::exit(1);
  }
  return runs;
}

std::string Journal() {
  if (!g_postgres) return "SQLite";
  if (g_cluster_servers == 0) return "PostgreSQL";
  return "PostgreSQL, cluster of " + std::to_string(g_cluster_servers) + " server(s)";
}

double ServersCpuSeconds(const Deployment& d) {
  double total = 0;
  for (const auto& server : d.servers) total += ProcessCpuSeconds(server.pid());
  return total;
}

// Returns p50 in ms.
double W1(const std::string& dir, int workers, int count, bool tls,
          const bench::FsyncFloor& floor) {
  Deployment deployment = Deploy(dir, workers, tls);
  asio::io_context io(1);
  auto client = Connect(io, deployment);
  WarmUp(io, *client, "w1-warmup-", deployment.servers.size());
  std::vector<double> latencies;
  bool ok = true;
  auto serial = [&]() -> asio::awaitable<void> {
    for (int i = 0; i < count && ok; ++i) {
      auto start = SteadyClock::now();
      ok = !(co_await client->RunOne("w1-" + std::to_string(i), g_workflow_type, "{}")).empty();
      latencies.push_back(
          std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count());
    }
    client->Close();
  };
  asio::co_spawn(io, serial(), asio::detached);
  io.run();
  if (!ok || latencies.empty()) {
    std::fprintf(stderr, "W1 failed\n");
    std::exit(1);
  }
  const double p50 = Percentile(latencies, 0.5), p99 = Percentile(latencies, 0.99);
  g_last_w1_p99 = p99;
  std::printf("W1  server mode, %s, journal %s, %d worker process(es), %d workflows x 10 sequential calls,"
              " serial:  p50 %.2f ms  p99 %.2f ms  (p50 = %.1f x fsync floor; target p50 <= 5 ms)"
              "%s\n",
              tls ? "mTLS" : "plaintext", Journal().c_str(), workers, count, p50, p99,
              p50 * 1000 / floor.mean_us,
              g_cluster_servers > 1 ? "; starts round robin, redirected to the owner" : "");
  return p50;
}

// Returns workflows/s.
double W3(const std::string& dir, int workers, double seconds, int concurrency, bool tls,
          const bench::FsyncFloor& floor) {
  Deployment deployment = Deploy(dir, workers, tls);
  asio::io_context io(1);
  auto client = Connect(io, deployment);
  // finished: the warm-up and those past the end too (for PostgreSQL's transactions)
  int completed = 0, failed = 0, started = 0;
  int finished = WarmUp(io, *client, "w3-warmup-" + std::to_string(g_w3_runs) + "-",
                        deployment.servers.size());
  const std::int64_t redirected0 = client->redirected_starts();
  const double server_cpu0 = ServersCpuSeconds(deployment);
  double worker_cpu0 = 0;
  for (auto& w : deployment.workers) worker_cpu0 += ProcessCpuSeconds(w.pid());
  const double pg_cpu0 = g_postgres ? bench::PostgresCpuSeconds(g_postgres->port()) : 0;
  const auto start = SteadyClock::now();
  const auto end = start + std::chrono::duration_cast<SteadyClock::duration>(
                               std::chrono::duration<double>(seconds));
  int running = concurrency;
  auto loop = [&](int c) -> asio::awaitable<void> {
    for (int i = 0; SteadyClock::now() < end; ++i) {
      ++started;
      const std::string id =
          "w3-" + std::to_string(g_w3_runs) + "-" + std::to_string(c) + "-" + std::to_string(i);
      bool done = !(co_await client->RunOne(id, g_workflow_type, "{}")).empty();
      if (!done) ++failed;
      else if (SteadyClock::now() <= end) ++completed;
      if (done) ++finished;
    }
    if (--running == 0) client->Close();
  };
  for (int c = 0; c < concurrency; ++c) asio::co_spawn(io, loop(c), asio::detached);
  io.run();
  ++g_w3_runs;
  const double elapsed = std::chrono::duration<double>(end - start).count();
  const double server_cpu = ServersCpuSeconds(deployment) - server_cpu0;
  double worker_cpu = -worker_cpu0;
  for (auto& w : deployment.workers) worker_cpu += ProcessCpuSeconds(w.pid());
  const double per_s = completed / elapsed;
  g_last_server_cpu_ms = server_cpu * 1000 / completed;
  g_last_worker_cpu_ms = worker_cpu * 1000 / completed;
  g_last_redirected =
      static_cast<double>(client->redirected_starts() - redirected0) / std::max(1, started);
  if (g_postgres) {
    g_last_pg_cpu_ms =
        (bench::PostgresCpuSeconds(g_postgres->port()) - pg_cpu0) * 1000 / completed;
  }
  std::printf("W3  server mode, %s, journal %s, %s, metrics %s, %d worker process(es), concurrency %d for %.1f s: %.0f "
              "workflows/s, %.0f steps/s; CPU ms/workflow: server %.2f%s, workers %.2f; %d failed"
              "  (%.2f workflows per fsync-floor interval; target >= 1,500 workflows/s)\n",
              tls ? "mTLS" : "plaintext", Journal().c_str(),
              g_workflow_type.c_str(), g_no_metrics ? "off" : "on",
              workers, concurrency,
              elapsed, per_s, per_s * 10, g_last_server_cpu_ms,
              deployment.servers.size() > 1 ? " (sum over the servers)" : "", g_last_worker_cpu_ms,
              failed, per_s * floor.mean_us / 1e6);
  if (g_cluster_servers > 1) {
    std::printf("    %.0f%% of the starts were redirected to the owner (round robin over %d "
                "servers)\n",
                g_last_redirected * 100, g_cluster_servers);
  }
  if (g_postgres) {
    // The servers exit, their backends exit and flush their counters, then they are read.
    deployment.Stop();
    std::this_thread::sleep_for(1s);
    g_last_pg_xacts = PostgresTransactions(g_database) / finished;
    std::printf("    PostgreSQL: CPU %.2f ms per workflow (postmaster and children, in the window); "
                "%.1f transactions per workflow (database %s: %d workflows finished, the "
                "warm-up and those past the window included, plus start-up, token issue%s)\n",
                g_last_pg_cpu_ms, g_last_pg_xacts, g_database.c_str(), finished,
                g_cluster_servers > 0 ? " and the lease loop" : "");
    if (g_pg_statements) PrintPostgresStatements(g_database, finished);
  }
  return per_s;
}

// --effects compare: W3 alternately with everything that leaves the engine off and on.
// `on_set` names what the "on" rounds turn on: metrics, otlp, outbox (all by default).
void CompareEffects(const std::string& dir, int workers, double seconds, bool tls, int rounds,
                    const std::string& on_set, const bench::FsyncFloor& floor) {
  const bool with_metrics = on_set.find("metrics") != std::string::npos;
  const bool with_otlp = on_set.find("otlp") != std::string::npos;
  const bool with_outbox = on_set.find("outbox") != std::string::npos;
  std::printf("W3  effects off vs on (%s)\n", on_set.c_str());
  bench::NatsBroker broker(dir, "BENCH", "bench.>");
  testing::OtlpReceiver collector(testing::OtlpReceiver::Mode::kAccept, /*keep_bodies=*/false);
  std::vector<double> rate[2], cpu[2];  // [on]
  for (int round = 0; round < 2 * rounds; ++round) {
    const bool on = round % 2 == 1;
    g_no_metrics = !(on && with_metrics);
    g_otlp_endpoint = on && with_otlp ? collector.endpoint() : "";
    g_nats_url = on && with_outbox ? broker.url() : "";
    g_workflow_type = on && with_outbox ? "ten_calls_publish" : "ten_calls";
    const std::int64_t stored_before = broker.StreamMessages();
    const double broker_cpu0 = ProcessCpuSeconds(broker.pid());
    rate[on].push_back(W3(dir, workers, seconds, 32, tls, floor));
    cpu[on].push_back(g_last_server_cpu_ms);
    if (on && with_outbox) {
      std::printf("    the stream received %lld messages (every workflow started, the warm-up and "
                  "those past the window included); broker CPU %.2f ms per workflow\n",
                  static_cast<long long>(broker.StreamMessages() - stored_before),
                  (ProcessCpuSeconds(broker.pid()) - broker_cpu0) * 1000 /
                      (rate[on].back() * seconds));
    }
  }
  g_no_metrics = false;
  g_otlp_endpoint.clear();
  g_nats_url.clear();
  g_workflow_type = "ten_calls";
  std::size_t requests = 0, bytes = 0;
  for (const auto& request : collector.requests()) {
    ++requests;
    bytes += request.body_bytes;
  }
  auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return sum / static_cast<double>(v.size());
  };
  double lo = 1e9, hi = 0, cpu_lo = 1e9, cpu_hi = 0;
  for (int i = 0; i < rounds; ++i) {  // round i on against round i off, which ran just before
    lo = std::min(lo, rate[1][i] / rate[0][i]);
    hi = std::max(hi, rate[1][i] / rate[0][i]);
    cpu_lo = std::min(cpu_lo, cpu[1][i] / cpu[0][i]);
    cpu_hi = std::max(cpu_hi, cpu[1][i] / cpu[0][i]);
  }
  std::printf("W3  on / off (%d rounds each, alternating; floor mean %.1f us): throughput "
              "%.3f x (per round %.3f-%.3f; off %.0f, on %.0f workflows/s = %.2f / %.2f "
              "workflows per floor interval), server CPU per workflow %.3f x (per round "
              "%.3f-%.3f; off %.2f ms, on %.2f ms); target: on at most 10%% slower. OTLP: %zu "
              "requests, %.1f MB received\n",
              rounds, floor.mean_us, mean(rate[1]) / mean(rate[0]), lo, hi, mean(rate[0]),
              mean(rate[1]), mean(rate[0]) * floor.mean_us / 1e6,
              mean(rate[1]) * floor.mean_us / 1e6, mean(cpu[1]) / mean(cpu[0]), cpu_lo, cpu_hi,
              mean(cpu[0]), mean(cpu[1]), requests, static_cast<double>(bytes) / 1e6);
}

// --checksums compare: W3 alternately on a journal with page checksums and on one without.
void CompareChecksums(const std::string& dir, int workers, double seconds, bool tls, int rounds,
                      const bench::FsyncFloor& floor) {
  std::vector<double> rate[2], cpu[2], workers_cpu[2];  // [with checksums]
  for (int round = 0; round < 2 * rounds; ++round) {
    // off, on, then on, off: a drift of the machine's load hits both sides alike.
    const bool on = (round % 2 == 1) != (round / 2 % 2 == 1);
    g_without_page_checksums = !on;
    std::printf("W3  round %d, page checksums %s\n", round / 2 + 1, on ? "on" : "off");
    rate[on].push_back(W3(dir, workers, seconds, 32, tls, floor));
    cpu[on].push_back(g_last_server_cpu_ms);
    workers_cpu[on].push_back(g_last_worker_cpu_ms);
  }
  g_without_page_checksums = false;
  auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return sum / static_cast<double>(v.size());
  };
  double lo = 1e9, hi = 0, cpu_lo = 1e9, cpu_hi = 0;
  for (int i = 0; i < rounds; ++i) {  // round i on against round i off, which ran beside it
    lo = std::min(lo, rate[1][i] / rate[0][i]);
    hi = std::max(hi, rate[1][i] / rate[0][i]);
    cpu_lo = std::min(cpu_lo, cpu[1][i] / cpu[0][i]);
    cpu_hi = std::max(cpu_hi, cpu[1][i] / cpu[0][i]);
  }
  std::printf("W3  page checksums on / off (%d rounds each, alternating; floor mean %.1f us): "
              "throughput %.3f x (per round %.3f-%.3f; off %.0f, on %.0f workflows/s), server "
              "CPU per workflow %.3f x (per round %.3f-%.3f; off %.2f ms, on %.2f ms); the "
              "workers' CPU per workflow, which the journal does not touch, %.3f x\n",
              rounds, floor.mean_us, mean(rate[1]) / mean(rate[0]), lo, hi, mean(rate[0]),
              mean(rate[1]), mean(cpu[1]) / mean(cpu[0]), cpu_lo, cpu_hi, mean(cpu[0]),
              mean(cpu[1]), mean(workers_cpu[1]) / mean(workers_cpu[0]));
}

struct Figures {
  double w1_p50 = 0, w1_p99 = 0, w3_rate = 0, server_cpu = 0, worker_cpu = 0, pg_cpu = 0,
         pg_xacts = 0, load = 0;
};

// One row of the --cluster-servers summary; what was not measured (--only) is left out.
void PrintFigures(const std::string& label, const Figures& f, const bench::FsyncFloor& floor) {
  std::printf("  %-22s", label.c_str());
  if (f.w1_p50 > 0) {
    std::printf("  W1 p50 %6.2f ms (%4.1f x floor)  p99 %6.2f ms", f.w1_p50,
                f.w1_p50 * 1000 / floor.mean_us, f.w1_p99);
  }
  if (f.w3_rate > 0) {
    std::printf("  W3 %5.0f workflows/s (%.2f per floor interval, load average %.1f at its "
                "start); per workflow: server CPU %.2f ms, workers %.2f ms",
                f.w3_rate, f.w3_rate * floor.mean_us / 1e6, f.load, f.server_cpu, f.worker_cpu);
    if (f.pg_xacts > 0) {
      std::printf(", PostgreSQL CPU %.2f ms, %.1f transactions", f.pg_cpu, f.pg_xacts);
    }
  }
  std::printf("\n");
}

// --journal-backend: W1 and W3 with the journal on SQLite, then on a private PostgreSQL, then
// (--cluster-servers) on clusters of N servers on that PostgreSQL, a fresh database each.
int CompareJournals(const std::string& dir, int workers, int w1, double w3_seconds, bool tls,
                    const std::string& only, const std::string& backends,
                    const std::vector<int>& cluster_sizes, const bench::FsyncFloor& floor) {
  std::unique_ptr<testing::PostgresServer> postgres;
  std::map<bool, double> w1_p50, w3_rate, server_cpu;  // [on PostgreSQL]
  std::vector<std::pair<std::string, Figures>> table;
  auto measure = [&](const std::string& label) {
    Figures f;
    if (only.empty() || only == "w1") {
      f.w1_p50 = W1(dir, workers, w1, tls, floor);
      f.w1_p99 = g_last_w1_p99;
    }
    if (only.empty() || only == "w3") {
      f.load = bench::LoadAverage();
      f.w3_rate = W3(dir, workers, w3_seconds, 32, tls, floor);
      f.server_cpu = g_last_server_cpu_ms;
      f.worker_cpu = g_last_worker_cpu_ms;
      f.pg_cpu = g_postgres ? g_last_pg_cpu_ms : 0;
      f.pg_xacts = g_postgres ? g_last_pg_xacts : 0;
    }
    table.emplace_back(label, f);
    return f;
  };
  for (bool on_postgres : {false, true}) {
    if (backends == (on_postgres ? "sqlite" : "postgres")) continue;
    if (on_postgres) {
      auto started = testing::PostgresServer::Start();
      if (!started) {
        std::fprintf(stderr, "PostgreSQL: %s\n", started.error().ToString().c_str());
        return 1;
      }
      postgres = std::move(started).value();
      g_postgres = postgres.get();
    }
    const Figures f = measure(on_postgres ? "one server, PostgreSQL" : "one server, SQLite");
    w1_p50[on_postgres] = f.w1_p50;
    w3_rate[on_postgres] = f.w3_rate;
    server_cpu[on_postgres] = f.server_cpu;
  }
  if (w1_p50.size() == 2 && w1_p50[false] > 0) {
    std::printf("W1  PostgreSQL / SQLite p50: %.2f x\n", w1_p50[true] / w1_p50[false]);
  }
  if (w3_rate.size() == 2 && w3_rate[false] > 0) {
    std::printf("W3  PostgreSQL / SQLite throughput: %.2f x (target >= 0.5); server CPU per "
                "workflow %.2f x; PostgreSQL CPU %.2f ms and %.1f transactions per workflow\n",
                w3_rate[true] / w3_rate[false], server_cpu[true] / server_cpu[false],
                g_last_pg_cpu_ms, g_last_pg_xacts);
  }
  if (g_postgres) {
    for (int servers : cluster_sizes) {
      g_cluster_servers = servers;
      measure("cluster of " + std::to_string(servers));
    }
    g_cluster_servers = 0;
  }
  g_postgres = nullptr;
  if (!cluster_sizes.empty()) {
    std::printf("Summary (fsync floor mean %.1f us; W1 %d workflows, W3 concurrency 32 for %.0f s; "
                "a cluster's server CPU is the sum over its servers):\n",
                floor.mean_us, w1, w3_seconds);
    for (const auto& [label, f] : table) PrintFigures(label, f, floor);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"server_bench: W1 and W3 with server and workers in separate processes"};
  std::string dir = std::filesystem::current_path().string();
  int workers = 2, w1 = 300;
  double w3_seconds = 20;
  std::string only;
  std::string transport = "both";
  app.add_option("--dir", dir, "scratch directory on the disk to measure");
  app.add_option("--workers", workers, "worker processes");
  app.add_option("--w1", w1, "W1: number of serial workflows");
  app.add_option("--w3-seconds", w3_seconds, "W3: duration");
  app.add_option("--only", only, "w1 or w3");
  app.add_option("--transport", transport,
                 "plaintext, tls (mTLS, as deployed) or both (default: side by side, with the "
                 "ratios)")
      ->check(CLI::IsMember({"plaintext", "tls", "both"}));
  app.add_flag("--inline-commit", g_inline_commit, "server commits on its event loop's thread");
  std::string metrics = "on";
  app.add_option("--metrics", metrics,
                 "the server's Prometheus metrics: on (default), off (--no-metrics), or compare "
                 "(W3 only: off, on, off, on in one run, and the on / off ratio)")
      ->check(CLI::IsMember({"on", "off", "compare"}));
  app.add_option("--reckon", g_reckon, "the reckon binary that serves (another build to compare)");
  bool otlp = false;
  app.add_flag("--otlp", otlp,
               "W3 without, then with --otlp-endpoint to a collector in this process; the ratio");
  std::string effects;
  app.add_option("--effects", effects,
                 "compare: W3 alternately with metrics, OTLP and the outbox (one message per "
                 "workflow, to a nats-server this program starts) all off and all on")
      ->check(CLI::IsMember({"compare"}));
  int rounds = 2;
  app.add_option("--rounds", rounds, "--effects or --checksums compare: rounds of each");
  std::string checksums;
  app.add_option("--checksums", checksums,
                 "compare: W3 alternately on a SQLite journal with page checksums and without")
      ->check(CLI::IsMember({"compare"}));
  std::string effects_on = "metrics,otlp,outbox";
  app.add_option("--effects-on", effects_on,
                 "--effects compare: what the on rounds turn on (default metrics,otlp,outbox)");
  std::string journal_backend;
  app.add_option("--journal-backend", journal_backend,
                 "sqlite, postgres (a private PostgreSQL this program starts) or both: W1 and "
                 "W3 on each (one transport: --transport plaintext or tls), the PostgreSQL / "
                 "SQLite ratios, and PostgreSQL's CPU and transactions per workflow")
      ->check(CLI::IsMember({"sqlite", "postgres", "both"}));
  app.add_flag("--pg-statements", g_pg_statements,
               "--journal-backend: after W3 on PostgreSQL, the most frequent statements per "
               "workflow from pg_stat_statements; PostgreSQL must preload it: set "
               "RECKON_POSTGRES_BIN to a directory whose `postgres` runs the real one with "
               "-c shared_preload_libraries=pg_stat_statements");
  std::vector<int> cluster_sizes;
  app.add_option("--cluster-servers", cluster_sizes,
                 "with --journal-backend postgres or both: after the one-server runs, W1 and W3 "
                 "on clusters of N `reckon server --cluster` on one fresh database each "
                 "(e.g. 1,2,3), the bench's client sending starts round robin and following "
                 "redirects, every worker connected to every server")
      ->delimiter(',')
      ->check(CLI::Range(1, 8));
  app.add_option("--shard-lease-ms", g_shard_lease_ms, "cluster runs: the servers' lease");
  bool failover = false;
  app.add_flag("--failover", failover,
               "the failover benchmark instead (bench/failover.h): SIGKILL the owner of a "
               "running workflow's shard, time the takeover; on a private PostgreSQL");
  bench::FailoverOptions failover_options;
  app.add_option("--failover-servers", failover_options.servers, "--failover: cluster size")
      ->check(CLI::Range(2, 8));
  app.add_option("--failover-lease-ms", failover_options.lease_ms,
                 "--failover: lease settings to measure (default 3000,1500)")
      ->delimiter(',');
  app.add_option("--failover-repeats", failover_options.repeats, "--failover: kills per lease");
  app.add_option("--failover-load", failover_options.load,
                 "--failover: concurrent ten_calls loops kept running");
  CLI11_PARSE(app, argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::printf("%s\n", bench::DescribeMachine(dir).c_str());
  auto floor = bench::MeasureFsyncFloor(dir, 2000);
  std::printf("floor: 4 KiB write + fdatasync: mean %.1f us, p50 %.1f us, p99 %.1f us\n",
              floor.mean_us, floor.p50_us, floor.p99_us);
  std::vector<bool> modes;
  if (transport != "tls") modes.push_back(false);
  if (transport != "plaintext") modes.push_back(true);
  std::map<bool, double> w1_p50, w3_rate;
  g_no_metrics = metrics == "off";
  if (failover) {
    auto started = testing::PostgresServer::Start();
    if (!started) {
      std::fprintf(stderr, "PostgreSQL: %s\n", started.error().ToString().c_str());
      return 1;
    }
    failover_options.deployment.dir = dir;
    failover_options.deployment.reckon = g_reckon;
    failover_options.deployment.worker_binary = BENCH_WORKER_PATH;
    failover_options.deployment.workers = workers;
    failover_options.deployment.tls = transport == "tls";
    failover_options.deployment.postgres = started.value().get();
    return bench::RunFailover(failover_options);
  }
  if (!cluster_sizes.empty() && journal_backend.empty()) journal_backend = "postgres";
  if (!journal_backend.empty()) {
    return CompareJournals(dir, workers, w1, w3_seconds, transport == "tls", only,
                           journal_backend, cluster_sizes, floor);
  }
  if (!checksums.empty()) {
    CompareChecksums(dir, workers, w3_seconds, transport == "tls", rounds, floor);
    return 0;
  }
  if (!effects.empty()) {
    CompareEffects(dir, workers, w3_seconds, transport == "tls", rounds, effects_on, floor);
    return 0;
  }
  if (metrics == "compare") {
    // Alternating rounds, so that a drift of the machine during the run hits both sides.
    // Throughput follows the disk, which is noisy on a shared machine; the server's CPU per
    // workflow is what the metrics add to.
    double rate[2] = {0, 0}, cpu[2] = {0, 0};  // [metrics on]
    for (int round = 0; round < 4; ++round) {
      g_no_metrics = round % 2 == 0;
      rate[g_no_metrics ? 0 : 1] += W3(dir, workers, w3_seconds, 32, transport == "tls", floor);
      cpu[g_no_metrics ? 0 : 1] += g_last_server_cpu_ms;
    }
    std::printf("W3  metrics on / off (2 rounds each, alternating): throughput %.3f x, server "
                "CPU per workflow %.3f x\n",
                rate[1] / rate[0], cpu[1] / cpu[0]);
    return 0;
  }
  for (bool tls : modes) {
    if (only.empty() || only == "w1") w1_p50[tls] = W1(dir, workers, w1, tls, floor);
  }
  for (bool tls : modes) {
    if (!only.empty() && only != "w3") continue;
    w3_rate[tls] = W3(dir, workers, w3_seconds, 32, tls, floor);
    if (!otlp) continue;
    testing::OtlpReceiver collector;
    g_otlp_endpoint = collector.endpoint();
    std::printf("W3  again, the server exporting OTLP traces to %s:\n", g_otlp_endpoint.c_str());
    const double with_otlp = W3(dir, workers, w3_seconds, 32, tls, floor);
    g_otlp_endpoint.clear();
    std::this_thread::sleep_for(1500ms);  // the last batch (flush interval 1 s)
    std::size_t spans = 0, requests = 0;
    for (const auto& request : collector.requests()) {
      ++requests;
      auto parsed = testing::ParseOtlpTraces(request.body);
      if (parsed) spans += parsed.value().size();
    }
    std::printf("W3  OTLP on / off throughput (%s): %.3f x  (%zu spans in %zu requests "
                "received)\n",
                tls ? "mTLS" : "plaintext", with_otlp / w3_rate[tls], spans, requests);
  }
  if (w1_p50.size() == 2) {
    std::printf("W1  mTLS / plaintext p50: %.2f x\n", w1_p50[true] / w1_p50[false]);
  }
  if (w3_rate.size() == 2) {
    std::printf("W3  mTLS / plaintext throughput: %.2f x\n", w3_rate[true] / w3_rate[false]);
  }
  return 0;
}
