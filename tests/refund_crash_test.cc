// Crash loop of the refund sample. A payments provider stays up and keeps the ground truth
// (its ledger); refund-agent is started with the same arguments again and again and SIGKILLed
// after a random delay, so kills land during start-up, recovery, attempts, lookups and
// commits. Then one last run is left to finish, and the journal is audited against the ledger
// (tests/refund_crash_audit.h): no workflow lost, no refund lost, none made twice.
//
// Two provider modes: with deduplication by Idempotency-Key, and without it, where only
// reconciliation stands between a lost reply and a second refund. Both drop 30% of the
// replies of committed refunds.
//
// The kill points of one mode are spread over epochs: an epoch is a fresh provider, ledger
// and journal, and ends when the agent finished by itself before its kill (every workflow is
// terminal, so later kills would only hit an idle journal) or after kMaxKillsPerEpoch kills.
// Operation ids derive from the workflow id, so epochs cannot share a provider. In every
// other epoch the provider takes 150 ms to commit, so that early kills find attempts in flight.
//
// RECKON_REFUND_CRASH_KILLS: kill points per mode (default 15; the heavy tier raises it).
// RECKON_REFUND_CRASH_SEED: the seed of the delays and of the provider's faults (printed).
// A failing epoch's files are kept under $TMPDIR (or /tmp), and the path is printed.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/refund_crash_audit.h"
#include "tests/support/crash_support.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace reckon::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

constexpr int kWorkflows = 8;
constexpr int kMaxKillsPerEpoch = 20;
constexpr std::uint64_t kDefaultSeed = 20261207;
// Every other epoch the provider waits this long before committing a refund, so that kills
// within 300 ms find attempts in flight: the provider commits after the agent died.
constexpr int kSlowCommitMs = 150;

struct Mode {
  std::string name;
  std::vector<std::string> provider_flags;
  std::uint64_t salt = 0;  // mixed into the seed, so the modes draw different delays
};

Result<ListeningProcess> StartProvider(const fs::path& dir, std::uint64_t seed, int delay_ms,
                                       const Mode& mode) {
  SubprocessOptions options;
  options.args = {"--port",    "0",  "--ledger", (dir / "ledger.db").string(),
                  "--seed",    std::to_string(seed), "--delay-ms", std::to_string(delay_ms)};
  options.args.insert(options.args.end(), mode.provider_flags.begin(), mode.provider_flags.end());
  options.stderr_path = (dir / "provider.log").string();
  return StartListening(RECKON_PAYMENTS_PROVIDER, std::move(options));
}

Result<Subprocess> StartAgent(const fs::path& dir, std::uint16_t port) {
  SubprocessOptions options;
  options.args = {"--journal",  (dir / "journal.db").string(),
                  "--provider", "http://127.0.0.1:" + std::to_string(port),
                  "--count",    std::to_string(kWorkflows),
                  "--seed",     "7",
                  "--approve-all", "--quiet"};
  options.stderr_path = (dir / "agent.log").string();
  return Subprocess::Start(RECKON_REFUND_AGENT, std::move(options));
}

struct Tally {
  int kill_points = 0;
  int killed_running = 0;   // the SIGKILL hit a running agent
  int finished_first = 0;   // the agent had exited by itself (all terminal) before the kill
  int epochs = 0;
  RefundFigures figures;
};

class RefundCrashTest : public ::testing::Test {
 protected:
  void RunMode(const Mode& mode) {
    const std::uint64_t seed = EnvNumber("RECKON_REFUND_CRASH_SEED", kDefaultSeed);
    const int kill_points = static_cast<int>(EnvNumber("RECKON_REFUND_CRASH_KILLS", 15));
    std::printf("[refund crash %s] seed=%llu (RECKON_REFUND_CRASH_SEED) kill points=%d "
                "(RECKON_REFUND_CRASH_KILLS)\n",
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
    std::printf("[refund crash %s] total: %d kill points over %d epochs: %d hit a running agent, "
                "%d found it finished\n[refund crash %s] total: %s\n",
                mode.name.c_str(), tally.kill_points, tally.epochs, tally.killed_running,
                tally.finished_first, mode.name.c_str(), f.ToString().c_str());
    std::fflush(stdout);
    EXPECT_GT(tally.killed_running, 0);
    EXPECT_GT(f.outcome_unknown, 0);
    auto committed = f.reconciliation_results.find("committed");
    EXPECT_TRUE(committed != f.reconciliation_results.end() && committed->second > 0)
        << "no OutcomeUnknown was reconciled as committed: the test did not exercise "
           "reconciliation (seed "
        << seed << ")";
  }

  void RunEpoch(const Mode& mode, std::uint64_t seed, const TempDir& dir, int kill_points,
                std::mt19937_64& rng, Tally& tally) {
    const int epoch = ++tally.epochs;
    const fs::path epoch_dir = dir.path() / (mode.name + "-epoch" + std::to_string(epoch));
    fs::create_directories(epoch_dir);
    const std::string context = "mode " + mode.name + ", seed " + std::to_string(seed) +
                                ", epoch " + std::to_string(epoch);
    const int delay_ms = epoch % 2 == 0 ? kSlowCommitMs : 0;
    Result<ListeningProcess> provider =
        StartProvider(epoch_dir, seed + mode.salt * 1000 + epoch, delay_ms, mode);
    ASSERT_TRUE(provider) << provider.error().ToString();

    int kills = 0, hits = 0;
    bool finished = false;
    while (!finished && tally.kill_points < kill_points && kills < kMaxKillsPerEpoch) {
      const std::chrono::milliseconds delay = DrawRefundKillDelay(rng);
      Result<Subprocess> agent = StartAgent(epoch_dir, provider.value().port);
      ASSERT_TRUE(agent) << agent.error().ToString();
      ++kills;
      ++tally.kill_points;
      Result<ExitStatus> early = agent.value().WaitFor(delay);
      ExitStatus status;
      if (early) {
        status = early.value();
      } else {
        ASSERT_EQ(early.error().code(), Errc::kDeadlineExceeded) << early.error().ToString();
        ASSERT_TRUE(agent.value().Kill(SIGKILL));
        Result<ExitStatus> waited = agent.value().Wait();
        ASSERT_TRUE(waited) << waited.error().ToString();
        status = waited.value();
      }
      if (status.KilledBy(SIGKILL)) {
        ++hits;
        continue;
      }
      // It exited by itself before the kill: every workflow must be terminal.
      Result<std::string> output = agent.value().ReadAll(5s);
      ASSERT_TRUE(status.Succeeded())
          << context << ": refund-agent " << status.ToString() << " after " << delay.count()
          << " ms\nstdout:\n"
          << (output ? output.value() : output.error().ToString()) << "\nstderr tail:\n"
          << Tail(epoch_dir / "agent.log", 4000) << "\nfiles kept in "
          << KeepEvidence(epoch_dir, "reckon-refund-crash-" + mode.name + "-" +
                                         std::to_string(seed) + "-" + std::to_string(epoch));
      finished = true;
      ++tally.finished_first;
    }
    tally.killed_running += hits;

    // The last run is left alone: it must bring every workflow to a terminal state.
    Result<Subprocess> last = StartAgent(epoch_dir, provider.value().port);
    ASSERT_TRUE(last) << last.error().ToString();
    Result<ExitStatus> last_status = last.value().WaitFor(60s);
    Result<std::string> last_output = last.value().ReadAll(5s);
    const std::string kept_name = "reckon-refund-crash-" + mode.name + "-" +
                                  std::to_string(seed) + "-" + std::to_string(epoch);
    ASSERT_TRUE(last_status && last_status.value().Succeeded())
        << context << ": the final refund-agent run "
        << (last_status ? last_status.value().ToString() : last_status.error().ToString())
        << "\nstdout:\n"
        << (last_output ? last_output.value() : last_output.error().ToString())
        << "\nstderr tail:\n"
        << Tail(epoch_dir / "agent.log", 4000) << "\nfiles kept in "
        << KeepEvidence(epoch_dir, kept_name);

    Result<std::vector<LedgerRefund>> refunds = FetchRefunds(provider.value().port);
    ASSERT_TRUE(refunds) << refunds.error().ToString();
    Result<ExitStatus> stopped = provider.value().process.Terminate(5s);
    ASSERT_TRUE(stopped) << stopped.error().ToString();
    Result<RefundAudit> audit =
        AuditRefundJournal((epoch_dir / "journal.db").string(), kWorkflows, refunds.value());
    ASSERT_TRUE(audit) << context << ": " << audit.error().ToString();
    std::printf("[refund crash %s] epoch %d (provider delay %d ms): %d kill points, %d hit a "
                "running agent%s | %s\n",
                mode.name.c_str(), epoch, delay_ms, kills, hits,
                finished ? ", then it finished by itself" : "",
                audit.value().figures.ToString().c_str());
    std::fflush(stdout);
    tally.figures.Add(audit.value().figures);
    if (!audit.value().violations.empty()) {
      std::string listed;
      for (const std::string& violation : audit.value().violations) listed += "\n  " + violation;
      ADD_FAILURE() << context << ": " << audit.value().violations.size()
                    << " invariant(s) broken:" << listed << "\nfiles kept in "
                    << KeepEvidence(epoch_dir, kept_name);
    }
  }
};

TEST_F(RefundCrashTest, ProviderWithDedupDroppingReplies) {
  RunMode(Mode{"dedup", {"--drop-reply-rate", "0.3"}, 1});
}

TEST_F(RefundCrashTest, ProviderWithoutDedupDroppingReplies) {
  RunMode(Mode{"no-dedup", {"--no-dedup", "--drop-reply-rate", "0.3"}, 2});
}

}  // namespace
}  // namespace reckon::testing
