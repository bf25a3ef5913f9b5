// Fencing on a cluster (issue 14, section 3): two `reckon server --cluster` processes on one
// private PostgreSQL (tests/support/reckon_cluster.h), one refund-worker connected to both, and
// a payments provider that takes 1.8 s to commit a refund, so that refunds are in flight for a
// while. The owner of some workflows' shards (the "old owner") is SIGSTOPped while it has work
// under way: a send_refund attempt in flight at the worker (whose result the worker then sends
// to the paused server), refunds awaiting approval, and an approval sent to it while it is
// paused (the request waits in its socket). Its shard lease (1.5 s) runs out; the other server
// takes the shards over (`reckon cluster --workflow ID --json` shows it as the owner with a
// higher epoch), recovers the runs, is given the approvals, and finishes every workflow. Then
// the old owner is SIGCONTed, and:
//   - its log says `cluster: lost shards`;
//   - none of its writes landed: the history of every workflow it owned is exactly what it was
//     when the new owner had finished it (same events, same sequence numbers), each run
//     completed once, and the journal audited against the ledger (tests/refund_crash_audit.h)
//     shows one refund per committed operation and no other;
//   - it stays up, gets shards again by rebalance, and finishes a new workflow on one of them;
//   - every process exits with code 0 on SIGTERM.
// Whether the old owner tried a write at all (and logged `cluster: write refused`) depends on
// whether it learned of its loss before acting; the test reports it without requiring it.
//
// The workflows are refund-0 .. refund-7 (refund-i refunds pay-i), then refund-8 ... until one
// falls on a shard of the old owner after the rebalance. A failure keeps the directory (logs,
// histories) under $TMPDIR (or /tmp) and prints the path.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
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

constexpr int kWorkflows = 8;
constexpr int kShardLeaseMs = 1500;
// Below send_refund's attempt timeout (2 s): the attempt's reply comes, late.
constexpr int kProviderDelayMs = 1800;
constexpr std::uint64_t kInputSeed = 7;
constexpr std::uint64_t kProviderSeed = 1414;
constexpr int kMaxWorkflows = 24;  // refund-8 .. refund-23 to find one of the old owner's shards

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A workflow as `reckon show ID --json` sees it.
struct View {
  bool ok = false;
  std::string status;  // running, completed, ...
  struct Op {
    std::string id, tool, state, intent_hash;
  };
  std::vector<Op> ops;
  bool Has(const std::string& tool, const std::string& state) const {
    for (const Op& op : ops) {
      if (op.tool == tool && op.state == state) return true;
    }
    return false;
  }
};

class ClusterFencingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto postgres = PostgresServer::Start();
    ASSERT_TRUE(postgres) << postgres.error().ToString();
    postgres_ = std::move(postgres).value();
    auto database = postgres_->CreateDatabase("fencing");
    ASSERT_TRUE(database) << database.error().ToString();

    SubprocessOptions provider;
    provider.args = {"--port", "0", "--ledger", dir_.File("ledger.db"), "--seed",
                     std::to_string(kProviderSeed), "--delay-ms", std::to_string(kProviderDelayMs)};
    provider.stderr_path = dir_.File("provider.log");
    auto started = StartListening(RECKON_PAYMENTS_PROVIDER, std::move(provider));
    ASSERT_TRUE(started) << started.error().ToString();
    provider_.emplace(std::move(started).value());

    ReckonClusterOptions options;
    options.servers = 2;
    options.journal = database.value();
    options.dir = dir_.path();
    options.lease_ms = kShardLeaseMs;
    options.quiet = false;  // the info lines "cluster: acquired shards ..." are evidence
    options.extra_args = {"--lease-timeout-ms", "1500", "--heartbeat-ms", "300"};
    auto cluster = ReckonCluster::Start(RECKON_CLI, options);
    ASSERT_TRUE(cluster) << cluster.error().ToString();
    cluster_ = std::move(cluster).value();
    auto worker = cluster_->StartWorker(
        RECKON_REFUND_WORKER, "worker",
        {"--provider", "http://127.0.0.1:" + std::to_string(provider_->port), "--seed",
         std::to_string(kInputSeed), "--id", "fencing-worker"});
    ASSERT_TRUE(worker) << worker.error().ToString();
    worker_.emplace(std::move(worker).value());
  }

  // On failure: the directory is kept, its path printed with the logs' tails.
  void TearDown() override {
    if (cluster_) {
      for (int i = 0; i < cluster_->size(); ++i) (void)cluster_->Resume(i);
    }
    if (!HasFailure()) return;
    std::string logs;
    for (const char* name : {"server-0.log", "server-1.log", "worker.log", "provider.log"}) {
      logs += "\n--- " + std::string(name) + " (tail)\n" + Tail(dir_.path() / name, 2500);
    }
    ADD_FAILURE() << logs << "\nfiles kept in "
                  << KeepEvidence(dir_.path(), "reckon-cluster-fencing");
  }

  View Show(int server, const std::string& id) {
    View view;
    CliRun run = cluster_->Cli(server, {"show", id, "--json"}, 20s);
    boost::system::error_code ec;
    json::value parsed = json::parse(run.out, ec);
    if (!run.status.Succeeded() || ec || !parsed.is_object()) return view;
    const json::object& object = parsed.as_object();
    view.ok = true;
    view.status = std::string(object.at("status").as_string());
    for (const json::value& value : object.at("operations").as_array()) {
      const json::object& op = value.as_object();
      view.ops.push_back({std::string(op.at("operation_id").as_string()),
                          std::string(op.at("tool").as_string()),
                          std::string(op.at("state").as_string()),
                          std::string(op.at("intent_hash").as_string())});
    }
    return view;
  }

  // `reckon history ID --json` through `server`; empty on failure.
  std::string History(int server, const std::string& id) {
    CliRun run = cluster_->Cli(server, {"history", id, "--json"}, 20s);
    return run.status.Succeeded() ? run.out : std::string();
  }

  // Approves, through `server`, every operation awaiting approval of workflows [0, count);
  // true once every one of them is terminal.
  bool ApproveAndCheckTerminal(int server, int count) {
    bool all_terminal = true;
    for (int i = 0; i < count; ++i) {
      const View view = Show(server, RefundWorkflowId(i));
      if (!view.ok || view.status == "running") all_terminal = false;
      for (const View::Op& op : view.ops) {
        if (op.state != "awaiting_approval") continue;
        CliRun approved = cluster_->Cli(server, {"approve", RefundWorkflowId(i), "--operation", op.id,
                                                 "--fingerprint", op.intent_hash, "--note",
                                                 "fencing-test"});
        if (approved.status.Succeeded()) ++approvals_;
      }
    }
    return all_terminal;
  }

  std::string StartWorkflow(int server, int i) {
    CliRun run;
    Eventually(
        [&] {
          run = cluster_->Cli(server, {"start", RefundWorkflowId(i), "--type", "refund", "--input",
                                       RefundWorkflowInput(i)});
          return run.status.Succeeded() || run.code() != 1;
        },
        60s);
    return run.status.Succeeded() ? std::string() : run.Describe();
  }

  // Shards whose live lease (not expired) `server` holds.
  int OwnedBy(const std::vector<ShardLease>& leases, int server) const {
    int owned = 0;
    for (const ShardLease& lease : leases) {
      owned += cluster_->IndexOf(lease) == server && lease.expires_in_ms > 0 ? 1 : 0;
    }
    return owned;
  }

  TempDir dir_;
  std::unique_ptr<PostgresServer> postgres_;
  std::optional<ListeningProcess> provider_;
  std::unique_ptr<ReckonCluster> cluster_;
  std::optional<Subprocess> worker_;
  int approvals_ = 0;
};

TEST_F(ClusterFencingTest, PausedOwnerIsFencedAndRejoins) {
  ASSERT_TRUE(cluster_ && worker_);
  // Both servers own shards before anything starts.
  std::string last_table;
  ASSERT_TRUE(Eventually(
      [&] {
        auto leases = cluster_->Leases();
        if (!leases) {
          last_table = leases.error().ToString();
          return false;
        }
        last_table = std::to_string(leases.value().size()) + " rows, server-0 owns " +
                     std::to_string(OwnedBy(leases.value(), 0)) + ", server-1 " +
                     std::to_string(OwnedBy(leases.value(), 1));
        return OwnedBy(leases.value(), 0) > 0 && OwnedBy(leases.value(), 1) > 0;
      },
      60s))
      << "the two servers never both owned shards: " << last_table;

  // The old owner: the server owning the shards of more of refund-0 .. refund-7.
  std::map<std::string, ShardLease> before;  // workflow id -> its shard's lease
  int owned[2] = {0, 0};
  for (int i = 0; i < kWorkflows; ++i) {
    auto lease = cluster_->OwnerOf(RefundWorkflowId(i));
    ASSERT_TRUE(lease) << lease.error().ToString();
    const int owner = cluster_->IndexOf(lease.value());
    ASSERT_GE(owner, 0) << RefundWorkflowId(i) << "'s shard " << lease.value().shard
                        << " is owned by an unknown server '" << lease.value().owner << "' at '"
                        << lease.value().address << "'";
    ++owned[owner];
    before[RefundWorkflowId(i)] = lease.value();
  }
  const int old_owner = owned[0] >= owned[1] ? 0 : 1;
  const int new_owner = 1 - old_owner;
  std::vector<std::string> fenced;  // the old owner's workflows
  for (const auto& [id, lease] : before) {
    if (cluster_->IndexOf(lease) == old_owner) fenced.push_back(id);
  }
  std::printf("[cluster fencing] server-%d owns %zu of the %d workflows' shards; it will be "
              "paused\n", old_owner, fenced.size(), kWorkflows);

  // Started through the new owner: the old owner's are redirected to it.
  for (int i = 0; i < kWorkflows; ++i) {
    const std::string failed = StartWorkflow(new_owner, i);
    ASSERT_TRUE(failed.empty()) << "reckon start " << RefundWorkflowId(i) << ": " << failed;
  }

  // Pause when the old owner has a send_refund in flight, or once every one of its workflows
  // waits for approval or is done.
  std::string in_flight;
  std::map<std::string, View::Op> awaiting;  // workflow id -> its operation awaiting approval
  std::set<std::string> unfinished;           // not terminal when paused
  ASSERT_TRUE(Eventually(
      [&] {
        awaiting.clear();
        unfinished.clear();
        int settled = 0;
        for (const std::string& id : fenced) {
          const View view = Show(old_owner, id);
          if (!view.ok) return false;
          if (view.status == "running") unfinished.insert(id);
          for (const View::Op& op : view.ops) {
            if (op.tool == "send_refund" && op.state == "in_flight") in_flight = id;
            if (op.state == "awaiting_approval") awaiting[id] = op;
          }
          settled += view.status != "running" || awaiting.contains(id) ? 1 : 0;
        }
        return !in_flight.empty() || settled == static_cast<int>(fenced.size());
      },
      60s))
      << "the old owner's workflows never had a refund in flight nor all waited";
  ASSERT_FALSE(unfinished.empty()) << "the old owner finished its workflows before the pause";
  ASSERT_TRUE(cluster_->Pause(old_owner));
  const auto paused_at = SteadyClock::now();
  std::printf("[cluster fencing] paused server-%d: send_refund in flight: %s; awaiting "
              "approval: %zu; unfinished: %zu\n",
              old_owner, in_flight.empty() ? "none" : in_flight.c_str(), awaiting.size(),
              unfinished.size());

  // An approval sent to the paused owner: it waits in its socket until SIGCONT.
  std::optional<Subprocess> stale_approval;
  if (!awaiting.empty()) {
    const auto& [id, op] = *awaiting.begin();
    auto started = cluster_->StartCli(
        old_owner, {"approve", id, "--operation", op.id, "--fingerprint", op.intent_hash,
                    "--note", "sent to the paused owner"},
        "stale-approval.err");
    ASSERT_TRUE(started) << started.error().ToString();
    stale_approval.emplace(std::move(started).value());
  }

  // The new owner takes every shard of the old owner's workflows over, with a higher epoch.
  std::string not_yet;
  ASSERT_TRUE(Eventually(
      [&] {
        for (const std::string& id : fenced) {
          auto lease = cluster_->OwnerOf(id);
          if (!lease || cluster_->IndexOf(lease.value()) != new_owner ||
              lease.value().epoch <= before[id].epoch) {
            not_yet = id + ": " + (lease ? lease.value().owner + " epoch " +
                                               std::to_string(lease.value().epoch)
                                         : lease.error().ToString());
            return false;
          }
        }
        return true;
      },
      30s))
      << "no takeover of the paused owner's shards within 30 s (" << not_yet << ")";
  const double takeover_s =
      std::chrono::duration<double>(SteadyClock::now() - paused_at).count();

  // The new owner makes progress: approvals through it, every workflow finishes.
  ASSERT_TRUE(Eventually([&] { return ApproveAndCheckTerminal(new_owner, kWorkflows); }, 120s))
      << "not every workflow finished on the new owner while the old one was paused";
  const double finished_s =
      std::chrono::duration<double>(SteadyClock::now() - paused_at).count();
  std::map<std::string, std::string> history_before;
  for (const std::string& id : fenced) {
    history_before[id] = History(new_owner, id);
    ASSERT_FALSE(history_before[id].empty()) << "reckon history " << id << " failed";
  }
  const std::optional<ExitStatus> ended_paused = cluster_->Ended(old_owner);
  ASSERT_FALSE(ended_paused) << "the paused server " << ended_paused->ToString();

  // SIGCONT: the old owner finds its leases gone.
  const std::string lost_line = "cluster: lost shards";
  const std::size_t log_at_resume = ReadText(cluster_->log(old_owner)).size();
  ASSERT_TRUE(cluster_->Resume(old_owner));
  EXPECT_TRUE(Eventually(
      [&] { return ReadText(cluster_->log(old_owner)).find(lost_line) != std::string::npos; },
      30s))
      << "server-" << old_owner << " never logged '" << lost_line << "'; its log after SIGCONT:\n"
      << ReadText(cluster_->log(old_owner)).substr(log_at_resume, 3000);
  std::string stale_answer = "(none sent)";
  if (stale_approval) {
    auto out = stale_approval->ReadAll(60s);
    auto status = stale_approval->Wait();
    stale_answer = (status ? status.value().ToString() : status.error().ToString()) + ": " +
                   (out ? out.value() : out.error().ToString()) +
                   ReadText(dir_.path() / "stale-approval.err");
  }

  // It rejoins: shards again by rebalance, acquired after the SIGCONT.
  std::string table;
  EXPECT_TRUE(Eventually(
      [&] {
        const std::string log = ReadText(cluster_->log(old_owner));
        if (log.find("cluster: acquired shards", log_at_resume) == std::string::npos) return false;
        auto leases = cluster_->Leases();
        table = leases ? std::to_string(OwnedBy(leases.value(), old_owner)) + " shards"
                       : leases.error().ToString();
        return leases && OwnedBy(leases.value(), old_owner) > 0;
      },
      60s))
      << "server-" << old_owner << " got no shard again after SIGCONT (" << table << ")";
  const std::optional<ExitStatus> ended = cluster_->Ended(old_owner);
  ASSERT_FALSE(ended) << "server-" << old_owner << " " << ended->ToString() << " after SIGCONT";

  // None of its writes landed: each history is exactly what the new owner had written.
  for (const std::string& id : fenced) {
    const std::string after = History(new_owner, id);
    EXPECT_EQ(after, history_before[id]) << id << "'s history changed after SIGCONT";
    boost::system::error_code ec;
    json::value events = json::parse(after, ec);
    ASSERT_FALSE(ec) << id << ": " << after;
    std::int64_t expected_seq = 1;
    int completed = 0;
    for (const json::value& event : events.as_array()) {
      EXPECT_EQ(event.at("seq").to_number<std::int64_t>(), expected_seq++) << id << ": " << after;
      completed += event.at("type").as_string() == "WorkflowCompleted" ? 1 : 0;
    }
    EXPECT_EQ(completed, 1) << id << " completed " << completed << " times: " << after;
  }

  // A new workflow on one of the old owner's new shards runs to its end there.
  int count = kWorkflows;
  std::string landed;
  for (; count < kMaxWorkflows && landed.empty(); ++count) {
    auto lease = cluster_->OwnerOf(RefundWorkflowId(count));
    ASSERT_TRUE(lease) << lease.error().ToString();
    const std::string failed = StartWorkflow(new_owner, count);
    ASSERT_TRUE(failed.empty()) << "reckon start " << RefundWorkflowId(count) << ": " << failed;
    if (cluster_->IndexOf(lease.value()) == old_owner) landed = RefundWorkflowId(count);
  }
  EXPECT_FALSE(landed.empty()) << "none of refund-8 .. refund-" << kMaxWorkflows - 1
                               << " fell on a shard of server-" << old_owner;
  ASSERT_TRUE(Eventually([&] { return ApproveAndCheckTerminal(new_owner, count); }, 120s))
      << "the workflows started after the rejoin did not finish";

  // Everything stops cleanly.
  auto worker_stopped = worker_->Terminate(10s);
  ASSERT_TRUE(worker_stopped) << worker_stopped.error().ToString();
  EXPECT_TRUE(worker_stopped.value().Succeeded()) << "worker " << worker_stopped.value().ToString();
  auto stopped = cluster_->Stop();
  ASSERT_TRUE(stopped) << stopped.error().ToString();

  auto refunds = FetchRefunds(provider_->port);
  ASSERT_TRUE(refunds) << refunds.error().ToString();
  auto audit = AuditRefundJournal(cluster_->journal(), count, refunds.value());
  ASSERT_TRUE(audit) << audit.error().ToString();
  std::string violations;
  for (const std::string& v : audit.value().violations) violations += "\n  " + v;
  EXPECT_TRUE(audit.value().violations.empty()) << violations;

  const std::string old_log = ReadText(cluster_->log(old_owner));
  int refused = 0;
  for (std::size_t at = old_log.find("cluster: write refused"); at != std::string::npos;
       at = old_log.find("cluster: write refused", at + 1)) {
    ++refused;
  }
  std::printf("[cluster fencing] takeover %.1f s after the pause, all finished %.1f s after it; "
              "%d approvals through the new owner; old owner: %d 'write refused' line(s); the "
              "approval sent to it while paused: %s\n[cluster fencing] %d workflows (%s on the "
              "rejoined server) | %s\n",
              takeover_s, finished_s, approvals_, refused, stale_answer.c_str(), count,
              landed.c_str(), audit.value().figures.ToString().c_str());
}

}  // namespace
}  // namespace reckon::testing
