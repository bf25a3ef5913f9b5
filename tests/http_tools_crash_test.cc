// Crash loop of an agent plan on the tools-file tools: `reckon plan run PLAN --tools
// samples/refund/tools.json --journal J --approve-all` (embedded, no sample code) is started
// again and again and SIGKILLed after a random delay (DrawRefundKillDelay), while the payments
// provider stays up and keeps the ground truth. Then one last run is left to finish, and the
// journal is audited against the ledger (AuditRefundPlanJournal): the plan completed, and every
// refund step made exactly one refund, under its operation id. The same two provider modes as
// the C++ tools' crash loop (tests/refund_crash_test.cc): with deduplication by
// Idempotency-Key and without it, both dropping 30% of the replies of committed refunds, and a
// slow commit (150 ms) in every other epoch; and, for comparison, the same plan over the C++
// tools (`refund-agent plan`) without deduplication, under the same audit.
//
// RECKON_HTTP_CRASH_KILLS: kill points per mode (default 8; the heavy tier raises it).
// RECKON_HTTP_CRASH_SEED: the seed of the delays and of the provider's faults (printed).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "tests/refund_crash_audit.h"
#include "tests/support/crash_support.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace reckon::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
namespace json = boost::json;

constexpr int kRefundSteps = 6;
constexpr int kMaxKillsPerEpoch = 12;
constexpr char kPlanId[] = "refunds-under-fire";

// Six independent refunds of pay-0 .. pay-5, below the approval threshold.
void WritePlan(const fs::path& path) {
  json::array steps;
  for (int i = 0; i < kRefundSteps; ++i) {
    steps.push_back(json::object{
        {"id", "refund" + std::to_string(i)},
        {"tool", "send_refund"},
        {"input", json::object{{"payment_id", "pay-" + std::to_string(i)},
                               {"amount_cents", 100 + i},
                               {"reason", "duplicate charge"}}}});
  }
  std::ofstream(path) << json::serialize(json::object{
      {"plan_id", kPlanId}, {"description", "refunds under SIGKILL"}, {"steps", steps}});
}

struct Mode {
  std::string name;
  std::vector<std::string> provider_flags;
  std::uint64_t salt = 0;
  // The same plan over the sample's C++ tools (`refund-agent plan`), for comparison.
  bool cpp_tools = false;
};

class HttpToolsCrashTest : public ::testing::Test {
 protected:
  Result<Subprocess> StartRun(const Mode& mode, const fs::path& dir, std::uint16_t port) {
    SubprocessOptions o;
    if (mode.cpp_tools) {
      o.args = {"plan", (dir / "plan.json").string(), "--provider",
                "http://127.0.0.1:" + std::to_string(port), "--journal",
                (dir / "journal.db").string(), "--approve-all"};
      o.stderr_path = (dir / "run.log").string();
      return Subprocess::Start(RECKON_REFUND_AGENT, std::move(o));
    }
    o.args = {"plan", "run", (dir / "plan.json").string(), "--tools",
              std::string(RECKON_SOURCE_DIR) + "/samples/refund/tools.json", "--journal",
              (dir / "journal.db").string(), "--approve-all"};
    o.env = {{"PAYMENTS_URL", "http://127.0.0.1:" + std::to_string(port)},
             {"REFUND_CARD_TOKEN", "tok_secret_http_crash_loop"}};
    o.stderr_path = (dir / "run.log").string();
    return Subprocess::Start(RECKON_CLI_PATH, std::move(o));
  }

  void RunMode(const Mode& mode) {
    const std::uint64_t seed = EnvNumber("RECKON_HTTP_CRASH_SEED", 20261202);
    const int kill_points = static_cast<int>(EnvNumber("RECKON_HTTP_CRASH_KILLS", 8));
    std::printf("[http crash %s] seed=%llu kill points=%d\n", mode.name.c_str(),
                static_cast<unsigned long long>(seed), kill_points);
    std::mt19937_64 rng(seed ^ (mode.salt * 0x9E3779B97F4A7C15ULL));
    TempDir dir;
    RefundFigures total;
    int kills = 0, hits = 0;
    for (int epoch = 1; kills < kill_points; ++epoch) {
      const fs::path epoch_dir = dir.path() / (mode.name + "-epoch" + std::to_string(epoch));
      fs::create_directories(epoch_dir);
      WritePlan(epoch_dir / "plan.json");
      const std::string evidence_name = "reckon-http-crash-" + mode.name + "-" +
                                        std::to_string(seed) + "-" + std::to_string(epoch);
      SubprocessOptions po;
      po.args = {"--port", "0", "--ledger", (epoch_dir / "ledger.db").string(), "--seed",
                 std::to_string(seed + mode.salt * 1000 + epoch), "--delay-ms",
                 epoch % 2 == 0 ? "150" : "0"};
      po.args.insert(po.args.end(), mode.provider_flags.begin(), mode.provider_flags.end());
      po.stderr_path = (epoch_dir / "provider.log").string();
      auto provider = StartListening(RECKON_PAYMENTS_PROVIDER, std::move(po));
      ASSERT_TRUE(provider) << provider.error().ToString();

      for (int in_epoch = 0; in_epoch < kMaxKillsPerEpoch && kills < kill_points; ++in_epoch) {
        const std::chrono::milliseconds delay = DrawRefundKillDelay(rng);
        auto run = StartRun(mode, epoch_dir, provider.value().port);
        ASSERT_TRUE(run) << run.error().ToString();
        ++kills;
        auto early = run.value().WaitFor(delay);
        ExitStatus status;
        if (early) {
          status = early.value();
        } else {
          ASSERT_EQ(early.error().code(), Errc::kDeadlineExceeded) << early.error().ToString();
          ASSERT_TRUE(run.value().Kill(SIGKILL));
          auto waited = run.value().Wait();
          ASSERT_TRUE(waited) << waited.error().ToString();
          status = waited.value();
        }
        if (status.KilledBy(SIGKILL)) {
          ++hits;
          continue;
        }
        // It exited by itself, before the kill or as it was sent: the plan must have completed.
        ASSERT_TRUE(status.Succeeded())
            << mode.name << " epoch " << epoch << ": " << status.ToString() << "\n"
            << Tail(epoch_dir / "run.log") << "\nfiles kept in "
            << KeepEvidence(epoch_dir, evidence_name);
        break;  // the plan completed before its kill: the epoch is over
      }
      // The last run is left alone and must complete the plan.
      auto last = StartRun(mode, epoch_dir, provider.value().port);
      ASSERT_TRUE(last) << last.error().ToString();
      auto status = last.value().WaitFor(60s);
      auto out = last.value().ReadAll(5s);
      ASSERT_TRUE(status && status.value().Succeeded())
          << mode.name << " epoch " << epoch << ": the final run "
          << (status ? status.value().ToString() : status.error().ToString()) << "\n"
          << (out ? out.value() : "") << Tail(epoch_dir / "run.log") << "\nfiles kept in "
          << KeepEvidence(epoch_dir, evidence_name);
      auto ledger = FetchRefunds(provider.value().port);
      ASSERT_TRUE(ledger) << ledger.error().ToString();
      ASSERT_TRUE(provider.value().process.Terminate(5s));
      auto audit = AuditRefundPlanJournal((epoch_dir / "journal.db").string(), kPlanId,
                                          kRefundSteps, ledger.value());
      ASSERT_TRUE(audit) << audit.error().ToString();
      std::printf("[http crash %s] epoch %d: %s\n", mode.name.c_str(), epoch,
                  audit.value().figures.ToString().c_str());
      total.Add(audit.value().figures);
      std::string listed;
      for (const std::string& violation : audit.value().violations) listed += "\n  " + violation;
      ASSERT_TRUE(audit.value().violations.empty())
          << mode.name << " epoch " << epoch << ":" << listed << "\nfiles kept in "
          << KeepEvidence(epoch_dir, evidence_name);
    }
    std::printf("[http crash %s] total: %d kill points, %d hit a running plan | %s\n",
                mode.name.c_str(), kills, hits, total.ToString().c_str());
    std::fflush(stdout);
    EXPECT_GT(hits, 0);
    EXPECT_GT(total.outcome_unknown, 0) << "no unknown outcome: reconciliation was not exercised";
  }
};

TEST_F(HttpToolsCrashTest, ProviderWithDedupDroppingReplies) {
  RunMode(Mode{"dedup", {"--drop-reply-rate", "0.3"}, 1});
}

TEST_F(HttpToolsCrashTest, ProviderWithoutDedupDroppingReplies) {
  RunMode(Mode{"no-dedup", {"--no-dedup", "--drop-reply-rate", "0.3"}, 2});
}

// The same loop, same seed and provider, over the sample's C++ tools: the same audit holds.
TEST_F(HttpToolsCrashTest, TheCppToolsUnderTheSameLoop) {
  RunMode(Mode{"cpp-no-dedup", {"--no-dedup", "--drop-reply-rate", "0.3"}, 2, true});
}

}  // namespace
}  // namespace reckon::testing
