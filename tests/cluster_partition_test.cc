// A network partition on a cluster (issue 14, section 3): two `reckon server --cluster` on one
// private PostgreSQL, server-1 in a network namespace the test creates, joined to the test's
// own namespace by a veth pair (loopback only inside the sandbox). PostgreSQL also listens on
// the veth's address for server-1; the refund-worker and the CLI reach server-1 there too.
// While server-1 owns refunds under way, the test takes the veth link down: server-1 is cut
// off from PostgreSQL, the worker and the CLI. Server-0 takes its shards over once their
// leases expired and finishes every workflow. Server-1 must stop acting on its shards: it
// logs `cluster: lost shards` (its leases could not be renewed), or it exits with code 1
// because its journal's connection is lost (then the test restarts it once the link is back,
// as a supervisor would). Then the link comes back, and:
//   - none of server-1's writes landed: the history of each workflow it owned is what
//     server-0 wrote, each run completed once, the journal audited against the ledger shows
//     one refund per committed operation;
//   - server-1 gets shards again, and every process exits with code 0 on SIGTERM.
// Skipped (GTEST_SKIP) when network namespaces cannot be made here (not root, no `ip`).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
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

constexpr const char* kIp = "/usr/sbin/ip";
constexpr int kWorkflows = 8;
constexpr int kShardLeaseMs = 1500;
constexpr int kProviderDelayMs = 1800;
constexpr int kCut = 1;   // the server in the namespace
constexpr int kKept = 0;  // the server beside PostgreSQL

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// `ip ARGS...` to completion; the error quotes its stderr.
Result<void> Ip(std::vector<std::string> args, const fs::path& log) {
  SubprocessOptions options;
  std::string shown = "ip";
  for (const std::string& arg : args) shown += " " + arg;
  options.args = std::move(args);
  options.stderr_path = log.string();
  RECKON_TRY(Subprocess process, Subprocess::Start(kIp, std::move(options)));
  RECKON_TRY(ExitStatus status, process.WaitFor(20s));
  if (!status.Succeeded()) {
    return Err(Errc::kFailedPrecondition, "`" + shown + "` " + status.ToString() + ": " +
                                              Tail(log, 500));
  }
  return Ok();
}

// A network namespace joined to ours by a veth pair: 10.213.N.1 here, 10.213.N.2 inside.
// Owns both; the destructor deletes them.
class Sandbox {
 public:
  static Result<std::unique_ptr<Sandbox>> Create(const fs::path& dir) {
    if (::geteuid() != 0) return Err(Errc::kFailedPrecondition, "not root");
    if (::access(kIp, X_OK) != 0) return Err(Errc::kFailedPrecondition, "no " + std::string(kIp));
    std::unique_ptr<Sandbox> box(new Sandbox());
    const std::string id = std::to_string(::getpid());
    const std::string net = std::to_string(::getpid() % 250 + 1);
    box->log_ = dir / "ip.log";
    box->name_ = "rkpart-" + id;
    box->host_if_ = "rkh" + id;
    box->ns_if_ = "rkn" + id;
    box->host_ip_ = "10.213." + net + ".1";
    box->ns_ip_ = "10.213." + net + ".2";
    RECKON_TRY(Ip({"netns", "add", box->name_}, box->log_));
    box->made_ = true;
    RECKON_TRY(Ip({"link", "add", box->host_if_, "type", "veth", "peer", "name", box->ns_if_},
                  box->log_));
    RECKON_TRY(Ip({"link", "set", box->ns_if_, "netns", box->name_}, box->log_));
    RECKON_TRY(Ip({"addr", "add", box->host_ip_ + "/30", "dev", box->host_if_}, box->log_));
    RECKON_TRY(Ip({"link", "set", box->host_if_, "up"}, box->log_));
    RECKON_TRY(box->InNamespace({"addr", "add", box->ns_ip_ + "/30", "dev", box->ns_if_}));
    RECKON_TRY(box->InNamespace({"link", "set", box->ns_if_, "up"}));
    RECKON_TRY(box->InNamespace({"link", "set", "lo", "up"}));
    return box;
  }
  ~Sandbox() {
    if (!made_) return;
    (void)Ip({"link", "del", host_if_}, log_);
    (void)Ip({"netns", "del", name_}, log_);
  }
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  Result<void> Cut() { return Ip({"link", "set", host_if_, "down"}, log_); }
  Result<void> Heal() { return Ip({"link", "set", host_if_, "up"}, log_); }
  std::vector<std::string> Prefix() const { return {kIp, "netns", "exec", name_}; }
  const std::string& host_ip() const { return host_ip_; }
  const std::string& ns_ip() const { return ns_ip_; }

 private:
  Sandbox() = default;
  Result<void> InNamespace(std::vector<std::string> args) {
    args.insert(args.begin(), {"netns", "exec", name_, kIp});
    return Ip(std::move(args), log_);
  }
  fs::path log_;
  std::string name_, host_if_, ns_if_, host_ip_, ns_ip_;
  bool made_ = false;
};

class ClusterPartitionTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (!HasFailure()) return;
    std::string logs;
    for (const char* name : {"server-0.log", "server-1.log", "worker.log", "ip.log"}) {
      logs += "\n--- " + std::string(name) + " (tail)\n" + Tail(dir_.path() / name, 2500);
    }
    ADD_FAILURE() << logs << "\nfiles kept in "
                  << KeepEvidence(dir_.path(), "reckon-cluster-partition");
  }

  // Status of the workflow, approving its operations awaiting approval; "" if the CLI failed.
  std::string StatusApproving(int server, const std::string& id) {
    CliRun run = cluster_->Cli(server, {"show", id, "--json"}, 20s);
    boost::system::error_code ec;
    json::value parsed = json::parse(run.out, ec);
    if (!run.status.Succeeded() || ec || !parsed.is_object()) return "";
    const json::object& object = parsed.as_object();
    for (const json::value& value : object.at("operations").as_array()) {
      const json::object& op = value.as_object();
      if (op.at("state").as_string() != "awaiting_approval") continue;
      (void)cluster_->Cli(server, {"approve", id, "--operation",
                                   std::string(op.at("operation_id").as_string()),
                                   "--fingerprint", std::string(op.at("intent_hash").as_string()),
                                   "--note", "partition-test"});
    }
    return std::string(object.at("status").as_string());
  }

  bool AllTerminal(int server, int count) {
    bool all = true;
    for (int i = 0; i < count; ++i) {
      const std::string status = StatusApproving(server, RefundWorkflowId(i));
      if (status.empty() || status == "running") all = false;
    }
    return all;
  }

  int Owned(int server) {
    auto leases = cluster_->Leases();
    int owned = 0;
    for (const ShardLease& lease : leases ? leases.value() : std::vector<ShardLease>{}) {
      owned += cluster_->IndexOf(lease) == server && lease.expires_in_ms > 0 ? 1 : 0;
    }
    return owned;
  }

  TempDir dir_;
  std::unique_ptr<ReckonCluster> cluster_;
};

TEST_F(ClusterPartitionTest, CutOffServerStopsActingAndNoneOfItsWritesLand) {
  auto sandbox = Sandbox::Create(dir_.path());
  if (!sandbox) GTEST_SKIP() << "no network namespace here: " << sandbox.error().ToString();
  Sandbox& box = *sandbox.value();

  PostgresServerOptions pg_options;
  pg_options.listen_addresses = "127.0.0.1," + box.host_ip();
  pg_options.trusted_networks = {box.ns_ip() + "/32"};
  auto postgres = PostgresServer::Start(pg_options);
  ASSERT_TRUE(postgres) << postgres.error().ToString();
  auto database = postgres.value()->CreateDatabase("partition");
  ASSERT_TRUE(database) << database.error().ToString();
  std::string from_namespace = database.value();
  from_namespace.replace(from_namespace.find("127.0.0.1"), 9, box.host_ip());

  SubprocessOptions provider_options;
  provider_options.args = {"--port", "0", "--ledger", dir_.File("ledger.db"), "--seed", "1515",
                           "--delay-ms", std::to_string(kProviderDelayMs)};
  provider_options.stderr_path = dir_.File("provider.log");
  auto provider = StartListening(RECKON_PAYMENTS_PROVIDER, std::move(provider_options));
  ASSERT_TRUE(provider) << provider.error().ToString();

  ReckonClusterOptions options;
  options.servers = 2;
  options.journal = database.value();
  options.dir = dir_.path();
  options.lease_ms = kShardLeaseMs;
  options.quiet = false;
  options.extra_args = {"--lease-timeout-ms", "1500", "--heartbeat-ms", "300"};
  options.placements[kCut] = {box.Prefix(), box.ns_ip(), from_namespace};
  auto cluster = ReckonCluster::Start(RECKON_CLI, options);
  ASSERT_TRUE(cluster) << cluster.error().ToString();
  cluster_ = std::move(cluster).value();
  auto worker = cluster_->StartWorker(
      RECKON_REFUND_WORKER, "worker",
      {"--provider", "http://127.0.0.1:" + std::to_string(provider.value().port), "--seed", "7",
       "--id", "partition-worker"});
  ASSERT_TRUE(worker) << worker.error().ToString();

  ASSERT_TRUE(Eventually([&] { return Owned(kKept) > 0 && Owned(kCut) > 0; }, 60s))
      << "the two servers never both owned shards";
  std::map<std::string, std::int64_t> epoch_before;  // the cut server's workflows
  for (int i = 0; i < kWorkflows; ++i) {
    auto lease = cluster_->OwnerOf(RefundWorkflowId(i));
    ASSERT_TRUE(lease) << lease.error().ToString();
    if (cluster_->IndexOf(lease.value()) == kCut) epoch_before[RefundWorkflowId(i)] = lease.value().epoch;
  }
  ASSERT_FALSE(epoch_before.empty()) << "server-1 owns none of the workflows' shards";
  for (int i = 0; i < kWorkflows; ++i) {
    CliRun run;
    Eventually([&] {
      run = cluster_->Cli(kKept, {"start", RefundWorkflowId(i), "--type", "refund", "--input",
                                  RefundWorkflowInput(i)});
      return run.status.Succeeded() || run.code() != 1;
    }, 60s);
    ASSERT_TRUE(run.status.Succeeded()) << run.Describe();
  }
  // Cut while the cut server has a refund in flight (the provider takes 1.8 s to commit),
  // approving through it what awaits approval.
  ASSERT_TRUE(Eventually(
      [&] {
        for (const auto& [id, epoch] : epoch_before) {
          CliRun run = cluster_->Cli(kCut, {"show", id, "--json"}, 20s);
          if (run.out.find("\"in_flight\"") != std::string::npos) return true;
          if (run.out.find("\"awaiting_approval\"") != std::string::npos) {
            (void)StatusApproving(kCut, id);
          }
        }
        return false;
      },
      60s))
      << "server-1 never had a refund in flight";
  const std::size_t log_at_cut = ReadText(cluster_->log(kCut)).size();
  ASSERT_TRUE(box.Cut());
  const auto cut_at = SteadyClock::now();

  std::string not_yet;
  ASSERT_TRUE(Eventually(
      [&] {
        for (const auto& [id, epoch] : epoch_before) {
          auto lease = cluster_->OwnerOf(id);
          if (!lease || cluster_->IndexOf(lease.value()) != kKept || lease.value().epoch <= epoch) {
            not_yet = id;
            return false;
          }
        }
        return true;
      },
      30s))
      << "server-0 did not take server-1's shards over (" << not_yet << ")";
  const double takeover_s = std::chrono::duration<double>(SteadyClock::now() - cut_at).count();
  ASSERT_TRUE(Eventually([&] { return AllTerminal(kKept, kWorkflows); }, 120s))
      << "server-0 did not finish every workflow during the partition";
  std::map<std::string, std::string> history;
  for (const auto& [id, epoch] : epoch_before) {
    history[id] = cluster_->Cli(kKept, {"history", id, "--json"}, 20s).out;
  }

  // The cut server stops acting on its shards: it gives them up, or it exits (code 1).
  bool gave_up = false;
  ASSERT_TRUE(Eventually(
      [&] {
        gave_up = ReadText(cluster_->log(kCut)).find("cluster: lost shards", log_at_cut) !=
                  std::string::npos;
        return gave_up || cluster_->Ended(kCut).has_value();
      },
      90s))
      << "server-1 neither gave its shards up nor stopped during the partition";
  const double stopped_s = std::chrono::duration<double>(SteadyClock::now() - cut_at).count();

  // Healed. A server whose journal connection was lost exits with code 1 (at its next journal
  // read or write, which may come after the heal) for a supervisor to restart it: the test
  // restarts it once, as a supervisor would. Either way it gets shards again.
  ASSERT_TRUE(box.Heal());
  std::string exit_seen = "stayed up";
  EXPECT_TRUE(Eventually(
      [&] {
        if (std::optional<ExitStatus> ended = cluster_->Ended(kCut)) {
          if (cluster_->lives(kCut) > 1) return false;  // restarted once already
          exit_seen = "life 1 " + ended->ToString() + ", restarted";
          EXPECT_TRUE(ended->exited && ended->code == 1) << "server-1 " << ended->ToString();
          if (!cluster_->Launch(kCut)) return false;
          auto ready = cluster_->WaitReady(kCut, 60s);
          EXPECT_TRUE(ready) << ready.error().ToString();
        }
        return Owned(kCut) > 0;
      },
      90s))
      << "server-1 got no shard again after the partition healed (" << exit_seen << ")";

  for (const auto& [id, epoch] : epoch_before) {
    const std::string after = cluster_->Cli(kKept, {"history", id, "--json"}, 20s).out;
    EXPECT_EQ(after, history[id]) << id << "'s history changed after the partition healed";
    boost::system::error_code ec;
    json::value events = json::parse(after, ec);
    ASSERT_FALSE(ec) << id << ": " << after;
    int completed = 0;
    for (const json::value& event : events.as_array()) {
      completed += event.at("type").as_string() == "WorkflowCompleted" ? 1 : 0;
    }
    EXPECT_EQ(completed, 1) << id << ": " << after;
  }

  auto worker_stopped = worker.value().Terminate(10s);
  ASSERT_TRUE(worker_stopped) << worker_stopped.error().ToString();
  EXPECT_TRUE(worker_stopped.value().Succeeded()) << worker_stopped.value().ToString();
  auto stopped = cluster_->Stop();
  ASSERT_TRUE(stopped) << stopped.error().ToString();
  auto refunds = FetchRefunds(provider.value().port);
  ASSERT_TRUE(refunds) << refunds.error().ToString();
  auto audit = AuditRefundJournal(database.value(), kWorkflows, refunds.value());
  ASSERT_TRUE(audit) << audit.error().ToString();
  std::string violations;
  for (const std::string& v : audit.value().violations) violations += "\n  " + v;
  EXPECT_TRUE(audit.value().violations.empty()) << violations;
  std::printf("[cluster partition] server-1 owned %zu workflows; takeover %.1f s after the cut "
              "(shard lease %d ms); server-1 %s %.1f s after the cut; after the heal it %s | %s\n",
              epoch_before.size(), takeover_s, kShardLeaseMs,
              gave_up ? "gave its shards up" : "exited", stopped_s, exit_seen.c_str(),
              audit.value().figures.ToString().c_str());
}

}  // namespace
}  // namespace reckon::testing
