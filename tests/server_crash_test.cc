// Crash loop of the refund sample in server mode. A payments provider stays up for an epoch and
// keeps the ground truth (its ledger); `reckon server` and two refund-workers run against it,
// and at random (seeded) points either a worker or the server is SIGKILLed and started again
// at once: a worker with the same arguments (its tool tasks' leases run out and become unknown
// outcomes), the server on the same journal and port (it recovers every running workflow; the
// workers reconnect by themselves). Between kill points the test approves, from the CLI, every
// operation awaiting approval, as a person would. Then everything is left to run until every
// workflow is terminal, the processes are stopped with SIGTERM (each must exit with code 0),
// and the server's journal is audited against the ledger with the embedded crash loop's audit
// (tests/refund_crash_audit.h): no workflow lost, none stuck, one refund per committed
// send_refund operation, none for the others, integrity ok, no card token in the journal.
//
// An epoch: a fresh provider, ledger, journal and server; refund-0 .. refund-7 (refund-i
// refunds pay-i, with refund-agent's inputs) started through `reckon start`, a quarter of them
// before each of the kKillsPerEpoch kill points, so that every kill finds fresh work; then all
// of them once more (a repeated start is idempotent, so the audit's "exactly one run per
// workflow" also checks that). An epoch ends early when every workflow is terminal before a
// kill point, since later kills would only hit idle processes. In every other epoch the
// provider takes 150 ms to commit, so that kills find attempts in flight.
//
// Two provider modes, as in the embedded test: with deduplication by Idempotency-Key, and
// without it, where only reconciliation stands between a lost reply and a second refund. Both
// drop 30% of the replies of committed refunds. The server runs with a short lease (1.5 s,
// heartbeats every 0.3 s), so that the tool tasks of a killed worker are lost quickly. It
// runs as it would be deployed: TLS with client certificates (every process presents one) and
// a token per role.
//
// The server's first life listens on port 0 and writes its port to a file; later lives listen
// on that same port, because the workers were told that address. The port file, deleted
// before each start, also tells when a life has recovered and serves. The test does not wait
// for it after a restart, so that the next kill can land during recovery; it waits only before
// the final drain. Their stderr goes to <name>.log; anything they write to stdout is drained
// into <name>.stdout.log, so that the pipe can never fill and block them.
//
// RECKON_SERVER_CRASH_KILLS: kill points per mode (default 8; the heavy tier raises it).
// RECKON_SERVER_CRASH_SEED: the seed of the delays, the targets and the provider's faults
// (printed). A failing epoch's files (journal, ledger, logs, the CLI's view of each workflow)
// are kept under $TMPDIR (or /tmp), and the path is printed.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/refund_crash_audit.h"
#include "tests/support/crash_support.h"
#include "tests/support/role_tokens.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_certs.h"

namespace reckon::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
namespace json = boost::json;
using SteadyClock = std::chrono::steady_clock;

constexpr int kWorkflows = 8;
constexpr int kWorkers = 2;
constexpr int kKillsPerEpoch = 4;
constexpr std::uint64_t kDefaultSeed = 20261214;
// The reasons and the card vault's seed of refund-agent in refund_crash_test (--seed 7).
constexpr std::uint64_t kInputSeed = 7;
constexpr int kSlowCommitMs = 150;
constexpr const char* kLeaseTimeoutMs = "1500";
constexpr const char* kHeartbeatMs = "300";
// How long the last phase may take to bring every workflow to a terminal state. A workflow
// needs a few seconds after the last kill (a lost lease 1.5 s, a lost reply 2.5 s, then
// reconciliation lookups backing off 1 s, 2 s, ...): this is generous.
constexpr auto kDrainTimeout = 120s;
constexpr auto kServerReadyTimeout = 30s;
constexpr auto kStartTimeout = 30s;
constexpr auto kCliTimeout = 40s;
constexpr auto kSweepInterval = 100ms;

struct Mode {
  std::string name;
  std::vector<std::string> provider_flags;
  std::uint64_t salt = 0;  // mixed into the seed, so the modes draw different delays
};

// Where a kill lands after the previous one, whose workflows were started just before it.
// Mostly within 400 ms: a restarted server's recovery, workers reconnecting, lookups,
// approvals and first attempts (a workflow takes a few hundred ms when nothing is lost). Some
// within 0.4-1.5 s: attempts in flight whose lease has not run out yet. Some within 1.5-3 s:
// lost leases (1.5 s), lost replies (2 s attempt timeout + 0.5 s grace) and their
// reconciliation. Some past 3 s, so that reconciliations complete between kills.
std::chrono::milliseconds DrawDelay(std::mt19937_64& rng) {
  auto uniform = [&rng](int low, int high) {
    return std::chrono::milliseconds(std::uniform_int_distribution<int>(low, high)(rng));
  };
  const int band = std::uniform_int_distribution<int>(0, 99)(rng);
  if (band < 50) return uniform(0, 400);
  if (band < 75) return uniform(400, 1500);
  if (band < 90) return uniform(1500, 3000);
  return uniform(3000, 4500);
}

void Append(const fs::path& path, const std::string& text) {
  if (text.empty()) return;
  std::ofstream(path, std::ios::app) << text;
}

// How a child ended, if it has; nullopt while it runs (or was never started).
std::optional<ExitStatus> Ended(std::optional<Subprocess>& process) {
  if (!process) return std::nullopt;
  Result<ExitStatus> status = process->WaitFor(0ms);  // a reaped child: its remembered status
  if (status) return status.value();
  return std::nullopt;
}

Result<ListeningProcess> StartProvider(const fs::path& dir, std::uint64_t seed, int delay_ms,
                                       const Mode& mode) {
  SubprocessOptions options;
  options.args = {"--port",    "0",  "--ledger", (dir / "ledger.db").string(),
                  "--seed",    std::to_string(seed), "--delay-ms", std::to_string(delay_ms)};
  options.args.insert(options.args.end(), mode.provider_flags.begin(), mode.provider_flags.end());
  options.stderr_path = (dir / "provider.log").string();
  return StartListening(RECKON_PAYMENTS_PROVIDER, std::move(options));
}

struct CliResult {
  ExitStatus status;
  std::string out;
};

// What one sweep of the CLI saw: `reckon list --json`, then `reckon show` of each workflow
// waiting for a person, approving what awaits approval.
struct Observation {
  bool listed = false;  // the list call answered
  int workflows = 0;
  int terminal = 0;
  std::vector<std::string> stuck;  // a stuck_reason, or an operation that needs a person
};

struct Tally {
  int kill_points = 0;
  int server_kills = 0, worker_kills = 0;
  int busy_server_kills = 0, busy_worker_kills = 0;  // some workflow was not terminal yet
  int finished_first = 0;  // epochs whose workflows were all terminal before a kill point
  int epochs = 0;
  int approvals = 0;
  RefundFigures figures;
};

// One epoch: its directory, its processes, and the failure path that keeps the evidence.
class Epoch {
 public:
  Epoch(const Mode& mode, std::uint64_t seed, int number, fs::path dir)
      : mode_(mode), seed_(seed), number_(number), dir_(std::move(dir)) {
    fs::create_directories(dir_);
    context_ = "mode " + mode.name + ", seed " + std::to_string(seed) + ", epoch " +
               std::to_string(number);
  }

  const std::string& context() const { return context_; }
  const fs::path& dir() const { return dir_; }
  std::string journal() const { return (dir_ / "journal.db").string(); }
  std::string kept_name() const {
    return "reckon-server-crash-" + mode_.name + "-" + std::to_string(seed_) + "-" +
           std::to_string(number_);
  }

  // Records a failure with the logs and the CLI's view of every workflow, stops every process
  // and keeps the epoch's files. Returns false, for `return Fail(...)`.
  bool Fail(const std::string& what) {
    std::string views = "(the server is not running)\n";
    if (server_ && !Ended(server_)) {
      Result<CliResult> list = Cli({"list"}, 15s);
      views = list ? list.value().out : list.error().ToString() + "\n";
      const fs::path evidence = dir_ / "evidence";
      fs::create_directories(evidence);
      for (int i = 0; list && i < kWorkflows; ++i) {
        const std::string id = RefundWorkflowId(i);
        Result<CliResult> show = Cli({"show", id}, 15s);
        Result<CliResult> history = Cli({"history", id}, 15s);
        Append(evidence / (id + ".show.txt"), show ? show.value().out : show.error().ToString());
        Append(evidence / (id + ".history.txt"),
               history ? history.value().out : history.error().ToString());
      }
    }
    KillAll();
    DrainOutputs();
    std::string logs;
    for (const char* name : {"server.log", "server.stdout.log", "worker-0.log",
                             "worker-0.stdout.log", "worker-1.log", "worker-1.stdout.log",
                             "provider.log"}) {
      const std::string tail = Tail(dir_ / name, 1500);
      if (!tail.empty()) logs += "\n--- " + std::string(name) + " (tail)\n" + tail;
    }
    ADD_FAILURE() << context_ << ": " << what << "\nreckon list:\n"
                  << views << logs << "\nfiles kept in " << KeepEvidence(dir_, kept_name());
    return false;
  }

  // --- processes ------------------------------------------------------------------------------

  bool StartProviderProcess(int delay_ms) {
    Result<ListeningProcess> provider =
        StartProvider(dir_, seed_ + mode_.salt * 1000 + static_cast<std::uint64_t>(number_),
                      delay_ms, mode_);
    if (!provider) return Fail("payments-provider: " + provider.error().ToString());
    provider_.emplace(std::move(provider.value()));
    return true;
  }

  // The first life listens on port 0; later ones on the port of the first.
  bool StartServer() {
    std::error_code ignored;
    fs::remove(dir_ / "port", ignored);
    if (!certificates_) {
      // TLS with client certificates: the server, the workers and the CLI all present them.
      auto made = WriteTestCertificates(dir_);
      if (!made) return Fail("test certificates: " + made.error().ToString());
      certificates_ = std::move(made).value();
      client_env_ = {{"RECKON_CA", certificates_->ca},
                     {"RECKON_CERT", certificates_->client_cert},
                     {"RECKON_KEY", certificates_->client_key}};
    }
    SubprocessOptions options;
    options.args = {"server",
                    "--journal", journal(),
                    "--listen", "127.0.0.1:" + std::to_string(port_),
                    "--port-file", (dir_ / "port").string(),
                    "--quiet",
                    "--lease-timeout-ms", kLeaseTimeoutMs,
                    "--heartbeat-ms", kHeartbeatMs,
                    "--tls-cert", certificates_->server_cert,
                    "--tls-key", certificates_->server_key,
                    "--client-ca", certificates_->ca};
    options.stderr_path = (dir_ / "server.log").string();
    Append(dir_ / "server.log", "=== server life " + std::to_string(++server_lives_) + "\n");
    Result<Subprocess> server = Subprocess::Start(RECKON_CLI, std::move(options));
    if (!server) return Fail("reckon server: " + server.error().ToString());
    server_.emplace(std::move(server.value()));
    return true;
  }

  // Waits until the current server life wrote its port file: it has recovered and serves.
  bool WaitServerReady() {
    const SteadyClock::time_point deadline = SteadyClock::now() + kServerReadyTimeout;
    for (;;) {
      DrainOutputs();
      std::ifstream in(dir_ / "port");
      int port = 0;
      if (in >> port && port > 0) {
        if (port_ != 0 && port != port_) {
          return Fail("the server restarted on port " + std::to_string(port) + ", not " +
                      std::to_string(port_));
        }
        port_ = static_cast<std::uint16_t>(port);
        return true;
      }
      if (std::optional<ExitStatus> ended = Ended(server_)) {
        return Fail("reckon server life " + std::to_string(server_lives_) + " " +
                    ended->ToString() + " before it listened");
      }
      if (SteadyClock::now() >= deadline) {
        return Fail("reckon server life " + std::to_string(server_lives_) +
                    " did not write its port file within 30 s");
      }
      std::this_thread::sleep_for(10ms);
    }
  }

  // After the first life: the server wrote its admin token; every later request of the epoch
  // (workers, the CLI) presents the token of its role.
  bool IssueTokens() {
    auto issued = IssueRoleTokens(RECKON_CLI, "127.0.0.1:" + std::to_string(port_),
                                  journal() + ".admin-token", dir_.string(), client_env_);
    if (!issued) return Fail("issuing tokens: " + issued.error().ToString());
    return true;
  }

  bool StartWorker(int i) {
    SubprocessOptions options;
    options.env = client_env_;
    options.env.emplace_back("RECKON_TOKEN_FILE", RoleTokenFile(dir_.string(), "worker"));
    options.args = {"--server", "127.0.0.1:" + std::to_string(port_),
                    "--provider", "http://127.0.0.1:" + std::to_string(provider_->port),
                    "--seed", std::to_string(kInputSeed),
                    "--id", "worker-" + std::to_string(i) + "." + std::to_string(++worker_lives_[i])};
    const fs::path log = dir_ / ("worker-" + std::to_string(i) + ".log");
    options.stderr_path = log.string();
    Append(log, "=== worker life " + std::to_string(worker_lives_[i]) + "\n");
    Result<Subprocess> worker = Subprocess::Start(RECKON_REFUND_WORKER, std::move(options));
    if (!worker) return Fail("refund-worker: " + worker.error().ToString());
    workers_[i].emplace(std::move(worker.value()));
    return true;
  }

  // Moves what the server and the workers wrote to stdout into files, so the pipes never fill.
  void DrainOutputs() {
    Drain(server_, dir_ / "server.stdout.log");
    for (int i = 0; i < kWorkers; ++i) {
      Drain(workers_[i], dir_ / ("worker-" + std::to_string(i) + ".stdout.log"));
    }
  }

  // False (with the failure recorded) if the server or a worker ended without being killed.
  bool CheckAlive() {
    DrainOutputs();
    if (std::optional<ExitStatus> ended = Ended(server_)) {
      return Fail("reckon server life " + std::to_string(server_lives_) + " " +
                  ended->ToString() + " by itself");
    }
    for (int i = 0; i < kWorkers; ++i) {
      if (std::optional<ExitStatus> ended = Ended(workers_[i])) {
        return Fail("worker-" + std::to_string(i) + " life " + std::to_string(worker_lives_[i]) +
                    " " + ended->ToString() + " by itself");
      }
    }
    return true;
  }

  // SIGKILLs the server (target -1) or worker `target`, then starts it again at once.
  bool KillAndRestart(int target) {
    Subprocess& process = target < 0 ? *server_ : *workers_[target];
    const std::string name = target < 0 ? "reckon server life " + std::to_string(server_lives_)
                                        : "worker-" + std::to_string(target) + " life " +
                                              std::to_string(worker_lives_[target]);
    if (!process.Kill(SIGKILL)) return Fail(name + ": cannot send SIGKILL");
    Result<ExitStatus> status = process.Wait();
    if (!status) return Fail(name + ": " + status.error().ToString());
    if (!status.value().KilledBy(SIGKILL)) {
      return Fail(name + " " + status.value().ToString() + " by itself before the kill");
    }
    DrainOutputs();
    return target < 0 ? StartServer() : StartWorker(target);
  }

  // The failure path: SIGKILL to every process of the epoch.
  void KillAll() {
    for (std::optional<Subprocess>* process : {&workers_[0], &workers_[1], &server_}) {
      if (*process && (*process)->running()) {
        (void)(*process)->Kill(SIGKILL);
        (void)(*process)->Wait();
      }
    }
    if (provider_ && provider_->process.running()) {
      (void)provider_->process.Kill(SIGKILL);
      (void)provider_->process.Wait();
    }
  }

  // The graceful stop: each worker, then the server, must exit with code 0 on SIGTERM.
  bool StopGracefully() {
    for (int i = 0; i < kWorkers; ++i) {
      Result<ExitStatus> status = workers_[i]->Terminate(10s);
      Drain(workers_[i], dir_ / ("worker-" + std::to_string(i) + ".stdout.log"));
      if (!status || !status.value().Succeeded()) {
        return Fail("worker-" + std::to_string(i) + " on SIGTERM: " +
                    (status ? status.value().ToString() : status.error().ToString()));
      }
    }
    Result<ExitStatus> status = server_->Terminate(10s);
    Drain(server_, dir_ / "server.stdout.log");
    if (!status || !status.value().Succeeded()) {
      return Fail("reckon server on SIGTERM: " +
                  (status ? status.value().ToString() : status.error().ToString()));
    }
    return true;
  }

  // --- the CLI ---------------------------------------------------------------------------------

  // Runs `reckon ARGS --server 127.0.0.1:PORT`; its stderr goes to cli.log.
  Result<CliResult> Cli(std::vector<std::string> args,
                        std::chrono::milliseconds timeout = kCliTimeout) {
    const std::string role = RoleForCommand(args);
    args.push_back("--token-file");
    args.push_back(RoleTokenFile(dir_.string(), role));
    args.push_back("--server");
    args.push_back("127.0.0.1:" + std::to_string(port_));
    SubprocessOptions options;
    options.args = std::move(args);
    options.env = client_env_;
    options.stderr_path = (dir_ / "cli.log").string();
    RECKON_TRY(Subprocess process, Subprocess::Start(RECKON_CLI, std::move(options)));
    RECKON_TRY(std::string out, process.ReadAll(timeout));
    RECKON_TRY(ExitStatus status, process.Wait());
    return CliResult{status, std::move(out)};
  }

  // `reckon start` for workflows [from, to), each retried while the server is down or no
  // worker has registered yet (exit code 1). Any other answer fails the test.
  bool StartWorkflows(int from, int to) {
    const SteadyClock::time_point deadline = SteadyClock::now() + kStartTimeout;
    for (int i = from; i < to; ++i) {
      for (;;) {
        if (!CheckAlive()) return false;
        Result<CliResult> started =
            Cli({"start", RefundWorkflowId(i), "--type", "refund", "--input", RefundWorkflowInput(i)});
        if (!started) return Fail("reckon start: " + started.error().ToString());
        if (started.value().status.Succeeded()) break;
        if (started.value().status.code != 1) {
          return Fail("reckon start " + RefundWorkflowId(i) + " " +
                      started.value().status.ToString() + "; cli.log:\n" + Tail(dir_ / "cli.log"));
        }
        if (SteadyClock::now() >= deadline) {
          return Fail("reckon start " + RefundWorkflowId(i) + " kept failing for 30 s; cli.log:\n" +
                      Tail(dir_ / "cli.log"));
        }
        std::this_thread::sleep_for(50ms);
      }
    }
    return true;
  }

  // One sweep: list the workflows, approve what awaits approval, note what is stuck.
  Observation Sweep(Tally& tally) {
    Observation seen;
    Result<CliResult> list = Cli({"list", "--all", "--json"});
    if (!list || !list.value().status.Succeeded()) return seen;  // the server is down: later
    boost::system::error_code ec;
    json::value listed = json::parse(list.value().out, ec);
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
      Result<CliResult> show = Cli({"show", id, "--json"});
      if (!show || !show.value().status.Succeeded()) continue;
      json::value detail = json::parse(show.value().out, ec);
      if (ec || !detail.is_object()) continue;
      for (const json::value& op_value : detail.as_object().at("operations").as_array()) {
        const json::object& op = op_value.as_object();
        const std::string state(op.at("state").as_string());
        const std::string op_id(op.at("operation_id").as_string());
        if (state == "needs_human") {
          seen.stuck.push_back(id + ": operation " + op_id + " (" +
                               std::string(op.at("tool").as_string()) + ") needs a person: " +
                               std::string(op.at("failure_code").as_string()) + " " +
                               std::string(op.at("failure_message").as_string()));
        } else if (state == "awaiting_approval") {
          Result<CliResult> approved =
              Cli({"approve", id, "--operation", op_id, "--fingerprint",
                   std::string(op.at("intent_hash").as_string()), "--note", "server-crash-test"});
          // A refusal (the server went away, or the decision already took effect) is retried by
          // the next sweep, which sees the operation's state afresh.
          if (approved && approved.value().status.Succeeded()) ++tally.approvals;
        }
      }
    }
    return seen;
  }

  // Sweeps until `until`, checking that no process ended by itself and no workflow is stuck.
  // A sweep starts only if it likely ends in time, so that short delays stay short.
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
  std::string context_;
  std::optional<ListeningProcess> provider_;
  std::optional<Subprocess> server_;
  std::optional<Subprocess> workers_[kWorkers];
  std::uint16_t port_ = 0;
  int server_lives_ = 0;
  int worker_lives_[kWorkers] = {0, 0};
  std::optional<TestCertificates> certificates_;                 // made by the first life
  std::vector<std::pair<std::string, std::string>> client_env_;  // $RECKON_CA, _CERT, _KEY

 private:
  static void Drain(std::optional<Subprocess>& process, const fs::path& file) {
    if (!process) return;
    std::string lines;
    for (;;) {
      Result<std::string> line = process->ReadLine(0ms);
      if (!line) break;
      lines += line.value() + "\n";
    }
    Append(file, lines);
  }
};

class ServerCrashTest : public ::testing::Test {
 protected:
  void RunMode(const Mode& mode) {
    const std::uint64_t seed = EnvNumber("RECKON_SERVER_CRASH_SEED", kDefaultSeed);
    const int kill_points = static_cast<int>(EnvNumber("RECKON_SERVER_CRASH_KILLS", 8));
    std::printf("[server crash %s] seed=%llu (RECKON_SERVER_CRASH_SEED) kill points=%d "
                "(RECKON_SERVER_CRASH_KILLS)\n",
                mode.name.c_str(), static_cast<unsigned long long>(seed), kill_points);
    std::fflush(stdout);
    std::mt19937_64 rng(seed ^ (mode.salt * 0x9E3779B97F4A7C15ULL));
    TempDir dir;
    Tally tally;
    while (tally.kill_points < kill_points) {
      RunEpoch(mode, seed, dir, kill_points, rng, tally);
      if (HasFailure()) return;
    }
    const RefundFigures& f = tally.figures;
    std::printf("[server crash %s] total: %d kill points over %d epochs: server %d (%d with work "
                "left), worker %d (%d with work left); %d epoch(s) finished before a kill point; "
                "%d approvals\n[server crash %s] total: %s\n",
                mode.name.c_str(), tally.kill_points, tally.epochs, tally.server_kills,
                tally.busy_server_kills, tally.worker_kills, tally.busy_worker_kills,
                tally.finished_first, tally.approvals, mode.name.c_str(), f.ToString().c_str());
    std::fflush(stdout);
    EXPECT_GT(tally.busy_server_kills, 0) << "no server kill found work left (seed " << seed << ")";
    EXPECT_GT(tally.busy_worker_kills, 0) << "no worker kill found work left (seed " << seed << ")";
    EXPECT_GT(tally.approvals, 0) << "nothing was approved: the approval path was not exercised";
    EXPECT_GT(f.outcome_unknown, 0);
    auto committed = f.reconciliation_results.find("committed");
    EXPECT_TRUE(committed != f.reconciliation_results.end() && committed->second > 0)
        << "no OutcomeUnknown was reconciled as committed: the test did not exercise "
           "reconciliation (seed "
        << seed << ")";
  }

  void RunEpoch(const Mode& mode, std::uint64_t seed, const TempDir& dir, int kill_points,
                std::mt19937_64& rng, Tally& tally) {
    const auto began = SteadyClock::now();
    const int number = ++tally.epochs;
    Epoch epoch(mode, seed, number, dir.path() / (mode.name + "-epoch" + std::to_string(number)));
    const int delay_ms = number % 2 == 0 ? kSlowCommitMs : 0;
    if (!epoch.StartProviderProcess(delay_ms)) return;
    if (!epoch.StartServer() || !epoch.WaitServerReady() || !epoch.IssueTokens()) return;
    for (int i = 0; i < kWorkers; ++i) {
      if (!epoch.StartWorker(i)) return;
    }
    int started = 0;  // refund-0 .. refund-(started-1) were started

    Observation last;  // the latest sweep that answered
    int kills = 0, server_kills = 0, worker_kills = 0, busy = 0;
    bool finished = false;
    for (int k = 0; k < kKillsPerEpoch && tally.kill_points < kill_points; ++k) {
      const int more = kWorkflows * (k + 1) / kKillsPerEpoch;
      if (!epoch.StartWorkflows(started, more)) return;
      started = more;
      const std::chrono::milliseconds delay = DrawDelay(rng);
      // The server with probability 0.4, else a worker; an epoch's last kill point makes sure
      // that the epoch killed both kinds.
      int target = std::uniform_int_distribution<int>(0, 9)(rng) < 4
                       ? -1
                       : std::uniform_int_distribution<int>(0, kWorkers - 1)(rng);
      if (k == kKillsPerEpoch - 1 && server_kills == 0) target = -1;
      if (k == kKillsPerEpoch - 1 && worker_kills == 0) target = 0;
      if (!epoch.RunUntil(SteadyClock::now() + delay, tally, last)) return;
      // Work is left unless the latest sweep saw every workflow started so far terminal (a
      // workflow can finish between that sweep and the kill: this may overcount a little).
      const bool work_left =
          !(last.listed && last.workflows == started && last.terminal == started);
      if (!work_left && started == kWorkflows) {
        finished = true;  // later kills would hit idle processes
        ++tally.finished_first;
        break;
      }
      if (!epoch.KillAndRestart(target)) return;
      ++kills;
      ++tally.kill_points;
      busy += work_left ? 1 : 0;
      if (target < 0) {
        ++server_kills;
        ++tally.server_kills;
        tally.busy_server_kills += work_left ? 1 : 0;
      } else {
        ++worker_kills;
        ++tally.worker_kills;
        tally.busy_worker_kills += work_left ? 1 : 0;
      }
    }
    // Every workflow once more (and those an early end of the kill points left unstarted):
    // a start is idempotent on the workflow id, even for a finished run.
    if (!epoch.StartWorkflows(0, kWorkflows)) return;

    // Nothing is killed any more: every workflow must become terminal.
    if (!epoch.WaitServerReady()) return;
    const SteadyClock::time_point drain_began = SteadyClock::now();
    const SteadyClock::time_point deadline = drain_began + kDrainTimeout;
    for (;;) {
      if (!epoch.RunUntil(SteadyClock::now() + 200ms, tally, last)) return;
      if (last.listed && last.workflows == kWorkflows && last.terminal == kWorkflows) break;
      if (SteadyClock::now() >= deadline) {
        epoch.Fail("not every workflow is terminal 120 s after the last kill: " +
                   std::to_string(last.terminal) + " of " + std::to_string(last.workflows) +
                   " listed are (" + std::to_string(kWorkflows) + " started)");
        return;
      }
    }
    const double drained_s =
        std::chrono::duration<double>(SteadyClock::now() - drain_began).count();
    if (!epoch.StopGracefully()) return;

    Result<std::vector<LedgerRefund>> refunds = FetchRefunds(epoch.provider_->port);
    if (!refunds) {
      epoch.Fail("GET /refunds: " + refunds.error().ToString());
      return;
    }
    Result<ExitStatus> stopped = epoch.provider_->process.Terminate(5s);
    ASSERT_TRUE(stopped) << stopped.error().ToString();
    Result<RefundAudit> audit = AuditRefundJournal(epoch.journal(), kWorkflows, refunds.value());
    if (!audit) {
      epoch.Fail("the audit cannot read the journal: " + audit.error().ToString());
      return;
    }
    std::printf("[server crash %s] epoch %d (provider delay %d ms): %d kill points (server %d, "
                "worker %d; %d with work left)%s, drained in %.1f s, epoch %.1f s | %s\n",
                mode.name.c_str(), number, delay_ms, kills, server_kills, worker_kills, busy,
                finished ? ", then all were terminal before a kill point" : "", drained_s,
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

TEST_F(ServerCrashTest, ProviderWithDedupDroppingReplies) {
  RunMode(Mode{"dedup", {"--drop-reply-rate", "0.3"}, 1});
}

TEST_F(ServerCrashTest, ProviderWithoutDedupDroppingReplies) {
  RunMode(Mode{"no-dedup", {"--no-dedup", "--drop-reply-rate", "0.3"}, 2});
}

}  // namespace
}  // namespace reckon::testing
