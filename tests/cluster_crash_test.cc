// Crash loop of the refund sample on a cluster (issue 14, section 3): three `reckon server
// --cluster` processes share one private PostgreSQL journal (tests/support/reckon_cluster.h),
// two refund-workers each hold a connection to every server, and a payments provider keeps the
// ground truth (its ledger). At random (seeded) points one server is SIGKILLed and started again
// at once on the same port: its shards go to the others once its lease expires, or back to it
// when it returns first, and whoever takes a shard over recovers its runs as a restart does.
// Between kill points the test approves, from the CLI against a random server, every operation
// awaiting approval, as a person would; the CLI follows the redirects to the owner by itself.
// Then nothing is killed any more and every workflow must become terminal or wait for a person
// (an operation in needs_human); the workers and the servers are stopped with SIGTERM (each
// must exit with code 0), and the journal is audited against the ledger with the embedded
// loop's audit (tests/refund_crash_audit.h), over a companion connection once the servers are
// gone: no workflow lost, one refund per committed send_refund operation, none for the
// others, no duplicate, the backend's integrity check ok.
//
// An epoch: a fresh provider, ledger, database and cluster; refund-0 .. refund-7 (refund-i
// refunds pay-i, with refund-agent's inputs) started through `reckon start` against a random
// server, a quarter of them before each of the kKillsPerEpoch kill points, so that every kill
// finds fresh work; then all of them once more (a repeated start is idempotent, so the audit's
// "exactly one run per workflow" also checks that). An epoch ends early when every workflow is
// settled before a kill point. In every other epoch the provider takes 150 ms to commit, so
// that kills find attempts in flight.
//
// Two provider modes, as in tests/server_crash_test.cc: with deduplication by Idempotency-Key,
// and without it (the provider ignores the key for deduplication), where only reconciliation
// stands between a lost reply and a second refund. Both drop 30% of the replies of committed
// refunds. Tool task leases are short (1.5 s, heartbeats every 0.3 s) and so are shard leases
// (2 s), so that a killed server's work moves on quickly. No TLS: every process is on loopback,
// and each request carries the token of its role.
//
// RECKON_CLUSTER_CRASH_KILLS: kill points per mode (default 5, so about 10 in all; the heavy
// tier raises it). RECKON_CLUSTER_CRASH_SEED: the seed of the delays, the targets, the servers
// the CLI talks to and the provider's faults (printed). A failing epoch's files (logs, ledger,
// the CLI's view of each workflow) are kept under $TMPDIR (or /tmp), and the path is printed.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/refund_crash_audit.h"
#include "tests/support/crash_support.h"
#include "tests/support/postgres_server.h"
#include "tests/support/reckon_cluster.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace reckon::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
namespace json = boost::json;
using SteadyClock = std::chrono::steady_clock;

constexpr int kServers = 3;
constexpr int kWorkflows = 8;
constexpr int kWorkers = 2;
constexpr int kKillsPerEpoch = 4;
constexpr std::uint64_t kDefaultSeed = 20261403;
// The reasons and the card vault's seed of refund-agent in refund_crash_test (--seed 7).
constexpr std::uint64_t kInputSeed = 7;
constexpr int kSlowCommitMs = 150;
constexpr int kShardLeaseMs = 2000;
constexpr const char* kLeaseTimeoutMs = "1500";
constexpr const char* kHeartbeatMs = "300";
// A workflow needs a few seconds after the last kill (a shard lease 2 s, a task lease 1.5 s, a
// lost reply 2.5 s, then reconciliation lookups backing off 1 s, 2 s, ...): this is generous.
constexpr auto kDrainTimeout = 180s;
constexpr auto kServerReadyTimeout = 30s;
// A start may wait for a shard without an owner (the CLI retries for up to 15 s) several times.
constexpr auto kStartTimeout = 60s;
constexpr auto kCliTimeout = 40s;
constexpr auto kSweepInterval = 100ms;

struct Mode {
  std::string name;  // letters, digits and '_': also part of the database's name
  std::vector<std::string> provider_flags;
  std::uint64_t salt = 0;  // mixed into the seed, so the modes draw different delays
};

// Where a kill lands after the previous one (as in server_crash_test): mostly within 400 ms
// (recovery, takeovers, first attempts), some within 0.4-2 s (attempts and shard leases still
// running), some within 2-3.5 s (takeovers, lost replies and their reconciliation), some later,
// so that reconciliations complete between kills.
std::chrono::milliseconds DrawDelay(std::mt19937_64& rng) {
  auto uniform = [&rng](int low, int high) {
    return std::chrono::milliseconds(std::uniform_int_distribution<int>(low, high)(rng));
  };
  const int band = std::uniform_int_distribution<int>(0, 99)(rng);
  if (band < 50) return uniform(0, 400);
  if (band < 75) return uniform(400, 2000);
  if (band < 90) return uniform(2000, 3500);
  return uniform(3500, 5000);
}

void Append(const fs::path& path, const std::string& text) {
  if (text.empty()) return;
  std::ofstream(path, std::ios::app) << text;
}

std::optional<ExitStatus> Ended(std::optional<Subprocess>& process) {
  if (!process) return std::nullopt;
  Result<ExitStatus> status = process->WaitFor(0ms);
  if (status) return status.value();
  return std::nullopt;
}

// What one sweep of the CLI saw: `reckon list --json`, then `reckon show` of each workflow
// waiting for a person, approving what awaits approval.
struct Observation {
  bool listed = false;
  int workflows = 0;
  int terminal = 0;
  int needs_human = 0;             // running, an operation waits for a person to resolve it
  std::vector<std::string> stuck;  // a stuck_reason
  std::vector<std::string> waiting;  // what needs a person, for the report
  int settled() const { return terminal + needs_human; }
};

struct Tally {
  int kill_points = 0;
  int busy_kills = 0;  // some workflow was not settled yet
  int kills_per_server[kServers] = {0, 0, 0};
  int finished_first = 0;
  int epochs = 0;
  int approvals = 0;
  std::int64_t shard_moves = 0;  // owner changes of shards (epochs past the first)
  RefundFigures figures;
};

// One epoch: its directory, database, processes, and the failure path that keeps the evidence.
class Epoch {
 public:
  Epoch(const Mode& mode, std::uint64_t seed, int number, fs::path dir)
      : mode_(mode), seed_(seed), number_(number), dir_(std::move(dir)),
        cli_rng_(seed ^ (static_cast<std::uint64_t>(number) << 32) ^ mode.salt) {
    fs::create_directories(dir_);
    context_ = "mode " + mode.name + ", seed " + std::to_string(seed) + ", epoch " +
               std::to_string(number);
  }

  const std::string& context() const { return context_; }
  const fs::path& dir() const { return dir_; }
  const std::string& journal() const { return journal_; }
  std::string kept_name() const {
    return "reckon-cluster-crash-" + mode_.name + "-" + std::to_string(seed_) + "-" +
           std::to_string(number_);
  }

  // Records a failure with the logs and the CLI's view of every workflow, stops every process
  // and keeps the epoch's files. Returns false, for `return Fail(...)`.
  bool Fail(const std::string& what) {
    std::string views = "(no server is running)\n";
    const int live = AnyLiveServer();
    if (live >= 0) {
      CliRun list = cluster_->Cli(live, {"list"}, 15s);
      views = list.out + list.err;
      const fs::path evidence = dir_ / "evidence";
      fs::create_directories(evidence);
      for (int i = 0; i < kWorkflows; ++i) {
        const std::string id = RefundWorkflowId(i);
        CliRun show = cluster_->Cli(live, {"show", id}, 15s);
        CliRun history = cluster_->Cli(live, {"history", id}, 15s);
        Append(evidence / (id + ".show.txt"), show.out + show.err);
        Append(evidence / (id + ".history.txt"), history.out + history.err);
      }
      Result<std::vector<ShardLease>> leases = cluster_->Leases();
      std::string table;
      if (leases) {
        for (const ShardLease& l : leases.value()) {
          table += std::to_string(l.shard) + " " + l.owner + " " + l.address + " epoch " +
                   std::to_string(l.epoch) + " expires in " + std::to_string(l.expires_in_ms) +
                   " ms\n";
        }
      } else {
        table = leases.error().ToString();
      }
      Append(evidence / "leases.txt", table);
    }
    KillAll();
    std::string logs;
    std::vector<std::string> names;
    for (int i = 0; i < kServers; ++i) names.push_back("server-" + std::to_string(i) + ".log");
    for (int i = 0; i < kWorkers; ++i) names.push_back("worker-" + std::to_string(i) + ".log");
    names.push_back("provider.log");
    for (const std::string& name : names) {
      const std::string tail = Tail(dir_ / name, 1500);
      if (!tail.empty()) logs += "\n--- " + name + " (tail)\n" + tail;
    }
    ADD_FAILURE() << context_ << ": " << what << "\nreckon list:\n"
                  << views << logs << "\nfiles kept in " << KeepEvidence(dir_, kept_name());
    return false;
  }

  // --- processes ------------------------------------------------------------------------------

  bool StartProviderProcess(int delay_ms) {
    SubprocessOptions options;
    const std::uint64_t seed = seed_ + mode_.salt * 1000 + static_cast<std::uint64_t>(number_);
    options.args = {"--port", "0", "--ledger", (dir_ / "ledger.db").string(), "--seed",
                    std::to_string(seed), "--delay-ms", std::to_string(delay_ms)};
    options.args.insert(options.args.end(), mode_.provider_flags.begin(),
                        mode_.provider_flags.end());
    options.stderr_path = (dir_ / "provider.log").string();
    Result<ListeningProcess> provider = StartListening(RECKON_PAYMENTS_PROVIDER, std::move(options));
    if (!provider) return Fail("payments-provider: " + provider.error().ToString());
    provider_.emplace(std::move(provider.value()));
    return true;
  }

  bool StartCluster(PostgresServer& postgres) {
    Result<std::string> database =
        postgres.CreateDatabase("cluster_" + mode_.name + "_" + std::to_string(number_));
    if (!database) return Fail("CreateDatabase: " + database.error().ToString());
    journal_ = database.value();
    ReckonClusterOptions options;
    options.servers = kServers;
    options.journal = journal_;
    options.dir = dir_;
    options.lease_ms = kShardLeaseMs;
    options.extra_args = {"--lease-timeout-ms", kLeaseTimeoutMs, "--heartbeat-ms", kHeartbeatMs};
    Result<std::unique_ptr<ReckonCluster>> cluster = ReckonCluster::Start(RECKON_CLI, options);
    if (!cluster) return Fail("starting the cluster: " + cluster.error().ToString());
    cluster_ = std::move(cluster).value();
    return true;
  }

  bool StartWorker(int i) {
    const std::string name = "worker-" + std::to_string(i);
    Append(dir_ / (name + ".log"), "=== worker life " + std::to_string(++worker_lives_[i]) + "\n");
    Result<Subprocess> worker = cluster_->StartWorker(
        RECKON_REFUND_WORKER, name,
        {"--provider", "http://127.0.0.1:" + std::to_string(provider_->port), "--seed",
         std::to_string(kInputSeed), "--id", name + "." + std::to_string(worker_lives_[i])});
    if (!worker) return Fail("refund-worker: " + worker.error().ToString());
    workers_[i].emplace(std::move(worker.value()));
    return true;
  }

  int AnyLiveServer() {
    if (!cluster_) return -1;
    for (int i = 0; i < kServers; ++i) {
      if (cluster_->process(i) && !cluster_->Ended(i)) return i;
    }
    return -1;
  }

  void DrainOutputs() {
    if (cluster_) cluster_->DrainOutputs();
    for (int i = 0; i < kWorkers; ++i) {
      if (!workers_[i]) continue;
      std::string lines;
      for (;;) {
        Result<std::string> line = workers_[i]->ReadLine(0ms);
        if (!line) break;
        lines += line.value() + "\n";
      }
      Append(dir_ / ("worker-" + std::to_string(i) + ".stdout.log"), lines);
    }
  }

  // False (with the failure recorded) if a server or a worker ended without being killed.
  bool CheckAlive() {
    DrainOutputs();
    for (int i = 0; i < kServers; ++i) {
      if (std::optional<ExitStatus> ended = cluster_->Ended(i)) {
        return Fail("server-" + std::to_string(i) + " life " +
                    std::to_string(cluster_->lives(i)) + " " + ended->ToString() + " by itself");
      }
    }
    for (int i = 0; i < kWorkers; ++i) {
      if (std::optional<ExitStatus> ended = Ended(workers_[i])) {
        return Fail("worker-" + std::to_string(i) + " life " + std::to_string(worker_lives_[i]) +
                    " " + ended->ToString() + " by itself");
      }
    }
    return true;
  }

  bool KillAndRestart(int server) {
    if (auto killed = cluster_->Kill(server); !killed) return Fail(killed.error().ToString());
    if (auto launched = cluster_->Launch(server); !launched) {
      return Fail("restarting server-" + std::to_string(server) + ": " +
                  launched.error().ToString());
    }
    return true;
  }

  bool WaitAllReady() {
    for (int i = 0; i < kServers; ++i) {
      if (auto ready = cluster_->WaitReady(i, kServerReadyTimeout); !ready) {
        return Fail(ready.error().ToString());
      }
    }
    return true;
  }

  void KillAll() {
    for (std::optional<Subprocess>& worker : workers_) {
      if (worker && worker->running()) {
        (void)worker->Kill(SIGKILL);
        (void)worker->Wait();
      }
    }
    DrainOutputs();
    cluster_.reset();  // SIGKILLs its servers
    if (provider_ && provider_->process.running()) {
      (void)provider_->process.Kill(SIGKILL);
      (void)provider_->process.Wait();
    }
  }

  // The graceful stop: each worker, then each server, must exit with code 0 on SIGTERM.
  bool StopGracefully() {
    for (int i = 0; i < kWorkers; ++i) {
      Result<ExitStatus> status = workers_[i]->Terminate(10s);
      DrainOutputs();
      if (!status || !status.value().Succeeded()) {
        return Fail("worker-" + std::to_string(i) + " on SIGTERM: " +
                    (status ? status.value().ToString() : status.error().ToString()));
      }
    }
    if (auto stopped = cluster_->Stop(); !stopped) return Fail(stopped.error().ToString());
    return true;
  }

  // --- the CLI ---------------------------------------------------------------------------------

  // `reckon ARGS` against a random server (the CLI follows redirects to the owner).
  CliRun Cli(std::vector<std::string> args) {
    const int server = std::uniform_int_distribution<int>(0, kServers - 1)(cli_rng_);
    return cluster_->Cli(server, std::move(args), kCliTimeout);
  }

  // `reckon start` for workflows [from, to), each retried while it fails with exit code 1 (its
  // server is down, its shard has no owner yet, no worker registered yet). Any other answer
  // fails the test.
  bool StartWorkflows(int from, int to) {
    const SteadyClock::time_point deadline = SteadyClock::now() + kStartTimeout;
    for (int i = from; i < to; ++i) {
      for (;;) {
        if (!CheckAlive()) return false;
        CliRun started =
            Cli({"start", RefundWorkflowId(i), "--type", "refund", "--input", RefundWorkflowInput(i)});
        if (started.status.Succeeded()) break;
        if (started.code() != 1) {
          return Fail("reckon start " + RefundWorkflowId(i) + ": " + started.Describe());
        }
        if (SteadyClock::now() >= deadline) {
          return Fail("reckon start " + RefundWorkflowId(i) + " kept failing for 60 s: " +
                      started.Describe());
        }
        std::this_thread::sleep_for(50ms);
      }
    }
    return true;
  }

  // One sweep: list the workflows, approve what awaits approval, note what waits for a person.
  Observation Sweep(Tally& tally) {
    Observation seen;
    CliRun list = Cli({"list", "--all", "--json"});
    if (!list.status.Succeeded()) return seen;  // that server is down: later
    boost::system::error_code ec;
    json::value listed = json::parse(list.out, ec);
    if (ec || !listed.is_array()) return seen;
    seen.listed = true;
    for (const json::value& item : listed.as_array()) {
      const json::object& run = item.as_object();
      const std::string id(run.at("workflow_id").as_string());
      ++seen.workflows;
      if (run.at("status").as_string() != "running") {
        ++seen.terminal;
        continue;
      }
      if (!run.at("stuck_reason").as_string().empty()) {
        seen.stuck.push_back(id + ": stuck_reason '" +
                             std::string(run.at("stuck_reason").as_string()) + "'");
      }
      if (run.at("waiting_for_person").to_number<std::int64_t>() == 0) continue;
      CliRun show = Cli({"show", id, "--json"});
      if (!show.status.Succeeded()) continue;
      json::value detail = json::parse(show.out, ec);
      if (ec || !detail.is_object()) continue;
      bool needs_human = false;
      for (const json::value& op_value : detail.as_object().at("operations").as_array()) {
        const json::object& op = op_value.as_object();
        const std::string state(op.at("state").as_string());
        const std::string op_id(op.at("operation_id").as_string());
        if (state == "needs_human") {
          needs_human = true;
          seen.waiting.push_back(id + ": operation " + op_id + " (" +
                                 std::string(op.at("tool").as_string()) + ") needs a person: " +
                                 std::string(op.at("failure_code").as_string()) + " " +
                                 std::string(op.at("failure_message").as_string()));
        } else if (state == "awaiting_approval") {
          CliRun approved = Cli({"approve", id, "--operation", op_id, "--fingerprint",
                                 std::string(op.at("intent_hash").as_string()), "--note",
                                 "cluster-crash-test"});
          // A refusal (the server went away, the decision already took effect) is retried by
          // the next sweep, which sees the operation's state afresh.
          if (approved.status.Succeeded()) ++tally.approvals;
        }
      }
      if (needs_human) ++seen.needs_human;
    }
    return seen;
  }

  // Sweeps until `until`, checking that no process ended by itself and no workflow is stuck.
  bool RunUntil(SteadyClock::time_point until, Tally& tally, Observation& last) {
    for (;;) {
      if (!CheckAlive()) return false;
      const auto left = until - SteadyClock::now();
      if (left <= 0ms) return true;
      if (left >= 60ms) {
        Observation seen = Sweep(tally);
        if (seen.listed) last = seen;
        if (!seen.stuck.empty()) {
          std::string listed;
          for (const std::string& s : seen.stuck) listed += "\n  " + s;
          return Fail("workflows are stuck:" + listed);
        }
      }
      std::this_thread::sleep_for(
          std::min<SteadyClock::duration>(kSweepInterval, until - SteadyClock::now()));
    }
  }

  // --- members ---------------------------------------------------------------------------------

  const Mode& mode_;
  std::uint64_t seed_;
  int number_;
  fs::path dir_;
  std::mt19937_64 cli_rng_;  // which server each CLI call goes to; apart from the kill schedule
  std::string context_;
  std::string journal_;
  std::optional<ListeningProcess> provider_;
  std::unique_ptr<ReckonCluster> cluster_;
  std::optional<Subprocess> workers_[kWorkers];
  int worker_lives_[kWorkers] = {0, 0};
};

class ClusterCrashTest : public ::testing::Test {
 protected:
  void RunMode(const Mode& mode) {
    const std::uint64_t seed = EnvNumber("RECKON_CLUSTER_CRASH_SEED", kDefaultSeed);
    const int kill_points = static_cast<int>(EnvNumber("RECKON_CLUSTER_CRASH_KILLS", 5));
    std::printf("[cluster crash %s] seed=%llu (RECKON_CLUSTER_CRASH_SEED) kill points=%d "
                "(RECKON_CLUSTER_CRASH_KILLS), %d servers, shard lease %d ms\n",
                mode.name.c_str(), static_cast<unsigned long long>(seed), kill_points, kServers,
                kShardLeaseMs);
    std::fflush(stdout);
    auto postgres = PostgresServer::Start();
    ASSERT_TRUE(postgres) << postgres.error().ToString();
    std::mt19937_64 rng(seed ^ (mode.salt * 0x9E3779B97F4A7C15ULL));
    TempDir dir;
    Tally tally;
    const auto began = SteadyClock::now();
    while (tally.kill_points < kill_points) {
      RunEpoch(mode, seed, dir, kill_points, rng, *postgres.value(), tally);
      if (HasFailure()) return;
    }
    const RefundFigures& f = tally.figures;
    std::printf("[cluster crash %s] total: %d kill points (%d with work left; server-0 %d, "
                "server-1 %d, server-2 %d) over %d epochs in %.1f s; %lld shard owner changes; "
                "%d epoch(s) settled before a kill point; %d approvals\n[cluster crash %s] "
                "total: %s\n",
                mode.name.c_str(), tally.kill_points, tally.busy_kills, tally.kills_per_server[0],
                tally.kills_per_server[1], tally.kills_per_server[2], tally.epochs,
                std::chrono::duration<double>(SteadyClock::now() - began).count(),
                static_cast<long long>(tally.shard_moves), tally.finished_first, tally.approvals,
                mode.name.c_str(), f.ToString().c_str());
    std::fflush(stdout);
    EXPECT_GT(tally.busy_kills, 0) << "no server kill found work left (seed " << seed << ")";
    EXPECT_GT(tally.approvals, 0) << "nothing was approved: the approval path was not exercised";
    EXPECT_GT(f.outcome_unknown, 0) << "no OutcomeUnknown: lost replies were not exercised";
  }

  void RunEpoch(const Mode& mode, std::uint64_t seed, const TempDir& dir, int kill_points,
                std::mt19937_64& rng, PostgresServer& postgres, Tally& tally) {
    const auto began = SteadyClock::now();
    const int number = ++tally.epochs;
    Epoch epoch(mode, seed, number, dir.path() / (mode.name + "-epoch" + std::to_string(number)));
    const int delay_ms = number % 2 == 0 ? kSlowCommitMs : 0;
    if (!epoch.StartProviderProcess(delay_ms) || !epoch.StartCluster(postgres)) return;
    for (int i = 0; i < kWorkers; ++i) {
      if (!epoch.StartWorker(i)) return;
    }
    int started = 0;
    Observation last;
    int kills = 0, busy = 0;
    std::string targets;
    bool finished = false;
    for (int k = 0; k < kKillsPerEpoch && tally.kill_points < kill_points; ++k) {
      const int more = kWorkflows * (k + 1) / kKillsPerEpoch;
      if (!epoch.StartWorkflows(started, more)) return;
      started = more;
      const std::chrono::milliseconds delay = DrawDelay(rng);
      const int target = std::uniform_int_distribution<int>(0, kServers - 1)(rng);
      if (!epoch.RunUntil(SteadyClock::now() + delay, tally, last)) return;
      const bool work_left =
          !(last.listed && last.workflows == started && last.settled() == started);
      if (!work_left && started == kWorkflows) {
        finished = true;
        ++tally.finished_first;
        break;
      }
      if (!epoch.KillAndRestart(target)) return;
      ++kills;
      ++tally.kill_points;
      ++tally.kills_per_server[target];
      busy += work_left ? 1 : 0;
      tally.busy_kills += work_left ? 1 : 0;
      targets += (targets.empty() ? "" : ",") + std::to_string(target);
    }
    if (!epoch.StartWorkflows(0, kWorkflows)) return;

    // Nothing is killed any more: every workflow must become terminal or wait for a person.
    if (!epoch.WaitAllReady()) return;
    const SteadyClock::time_point drain_began = SteadyClock::now();
    const SteadyClock::time_point deadline = drain_began + kDrainTimeout;
    for (;;) {
      if (!epoch.RunUntil(SteadyClock::now() + 200ms, tally, last)) return;
      if (last.listed && last.workflows == kWorkflows && last.settled() == kWorkflows) break;
      if (SteadyClock::now() >= deadline) {
        epoch.Fail("not every workflow is terminal or waiting for a person 180 s after the last "
                   "kill: " + std::to_string(last.settled()) + " of " +
                   std::to_string(last.workflows) + " listed are (" + std::to_string(kWorkflows) +
                   " started)");
        return;
      }
    }
    const double drained_s =
        std::chrono::duration<double>(SteadyClock::now() - drain_began).count();
    // How often shards changed owner: each takeover or move raises a shard's epoch by one.
    Result<std::vector<ShardLease>> leases = epoch.cluster_->Leases();
    if (!leases) {
      epoch.Fail("reckon cluster: " + leases.error().ToString());
      return;
    }
    std::int64_t moves = 0;
    for (const ShardLease& lease : leases.value()) moves += std::max<std::int64_t>(lease.epoch - 1, 0);
    tally.shard_moves += moves;
    for (const std::string& waiting : last.waiting) {
      std::printf("[cluster crash %s] epoch %d: waits for a person: %s\n", mode.name.c_str(),
                  number, waiting.c_str());
    }
    if (!epoch.StopGracefully()) return;

    Result<std::vector<LedgerRefund>> refunds = FetchRefunds(epoch.provider_->port);
    if (!refunds) {
      epoch.Fail("GET /refunds: " + refunds.error().ToString());
      return;
    }
    Result<ExitStatus> stopped = epoch.provider_->process.Terminate(5s);
    ASSERT_TRUE(stopped) << stopped.error().ToString();
    RefundAuditOptions audit_options;
    audit_options.allow_waiting_for_person = true;
    Result<RefundAudit> audit =
        AuditRefundJournal(epoch.journal(), kWorkflows, refunds.value(), audit_options);
    if (!audit) {
      epoch.Fail("the audit cannot read the journal: " + audit.error().ToString());
      return;
    }
    std::printf("[cluster crash %s] epoch %d (provider delay %d ms): %d kill points (servers "
                "%s; %d with work left), %lld shard owner changes%s, drained in %.1f s, epoch "
                "%.1f s | %s\n",
                mode.name.c_str(), number, delay_ms, kills, targets.c_str(), busy,
                static_cast<long long>(moves),
                finished ? ", then all were settled before a kill point" : "", drained_s,
                std::chrono::duration<double>(SteadyClock::now() - began).count(),
                audit.value().figures.ToString().c_str());
    std::fflush(stdout);
    tally.figures.Add(audit.value().figures);
    if (!audit.value().violations.empty()) {
      std::string listed;
      for (const std::string& violation : audit.value().violations) listed += "\n  " + violation;
      ADD_FAILURE() << epoch.context() << ": " << audit.value().violations.size()
                    << " invariant(s) broken:" << listed << "\nfiles kept in "
                    << KeepEvidence(epoch.dir(), epoch.kept_name());
    }
  }
};

TEST_F(ClusterCrashTest, ProviderWithDedupDroppingReplies) {
  RunMode(Mode{"dedup", {"--drop-reply-rate", "0.3"}, 1});
}

TEST_F(ClusterCrashTest, ProviderWithoutDedupDroppingReplies) {
  RunMode(Mode{"no_dedup", {"--no-dedup", "--drop-reply-rate", "0.3"}, 2});
}

}  // namespace
}  // namespace reckon::testing
