// One owner per journal, with real processes on real files (docs/JOURNAL_FORMAT.md, "Lock file and
// ownership"): a second refund-agent or `reckon server` on a journal that another process owns is
// refused at once, naming the holder; the lock of a SIGKILLed owner never blocks its restart; a
// journal damaged in the middle is refused at open and `reckon admin check` says so; a sound
// journal passes `reckon admin check`, also while its owner runs.
//
// The first agent must still hold the journal when the second starts: its provider takes 1 s
// per refund (below send_refund's 2 s attempt timeout), so the first agent runs for seconds
// while the second is refused within milliseconds of starting.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "reckon/storage/sqlite/sqlite_journal.h"
#include "reckon/storage/sqlite/journal_lock.h"
#include "tests/refund_crash_audit.h"
#include "tests/support/crash_support.h"
#include "tests/support/file_damage.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace reckon::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

constexpr int kWorkflows = 4;

std::string Hostname() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Waits until process `pid` holds the journal's lock: it has opened the journal as owner.
bool WaitForOwner(const std::string& journal, pid_t pid, const Subprocess& process) {
  const std::string expected = "pid=" + std::to_string(pid) + " ";
  for (auto deadline = std::chrono::steady_clock::now() + 20s;
       std::chrono::steady_clock::now() < deadline && process.running();
       std::this_thread::sleep_for(10ms)) {
    if (storage::JournalLock::DescribeHolder(journal).rfind(expected, 0) == 0) return true;
  }
  return false;
}

// Waits until the journal holds at least one run (its owner has migrated it and started).
bool WaitForRuns(const std::string& journal, const Subprocess& process) {
  storage::SqliteJournalOptions read_only;
  read_only.mode = storage::SqliteJournalOptions::Mode::kReadOnly;
  for (auto deadline = std::chrono::steady_clock::now() + 20s;
       std::chrono::steady_clock::now() < deadline && process.running();
       std::this_thread::sleep_for(10ms)) {
    auto opened = storage::OpenSqliteJournal(journal, read_only);
    if (!opened) continue;
    auto runs = opened.value()->ListRuns();
    if (runs && !runs.value().empty()) return true;
  }
  return false;
}

class JournalOwnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SubprocessOptions options;
    options.args = {"--port", "0", "--ledger", dir_.File("ledger.db"), "--seed", "3",
                    "--delay-ms", "1000"};
    options.stderr_path = dir_.File("provider.log");
    auto provider = StartListening(RECKON_PAYMENTS_PROVIDER, std::move(options));
    ASSERT_TRUE(provider) << provider.error().ToString();
    provider_.emplace(std::move(provider).value());
  }

  Result<Subprocess> StartAgent(const std::string& journal, const std::string& log) {
    SubprocessOptions options;
    options.args = {"--journal", journal, "--provider",
                    "http://127.0.0.1:" + std::to_string(provider_->port), "--count",
                    std::to_string(kWorkflows), "--seed", "7", "--approve-all", "--quiet"};
    options.stderr_path = dir_.File(log);
    return Subprocess::Start(RECKON_REFUND_AGENT, std::move(options));
  }

  // `reckon ARGS...`: exit status and stdout.
  std::pair<ExitStatus, std::string> Reckon(std::vector<std::string> args) {
    SubprocessOptions options;
    options.args = std::move(args);
    options.stderr_path = dir_.File("reckon.log");
    auto cli = Subprocess::Start(RECKON_CLI, std::move(options));
    EXPECT_TRUE(cli) << cli.error().ToString();
    if (!cli) return {};
    auto out = cli.value().ReadAll(60s);
    auto status = cli.value().WaitFor(60s);
    EXPECT_TRUE(status) << status.error().ToString();
    return {status ? status.value() : ExitStatus{}, out ? out.value() : ""};
  }

  void ExpectCleanAudit(const std::string& journal) {
    auto refunds = FetchRefunds(provider_->port);
    ASSERT_TRUE(refunds) << refunds.error().ToString();
    auto audit = AuditRefundJournal(journal, kWorkflows, refunds.value());
    ASSERT_TRUE(audit) << audit.error().ToString();
    for (const std::string& violation : audit.value().violations) ADD_FAILURE() << violation;
  }

  TempDir dir_;
  std::optional<ListeningProcess> provider_;
};

TEST_F(JournalOwnerTest, ASecondAgentIsRefusedAtOnceAndTheFirstCompletes) {
  const std::string journal = dir_.File("journal.db");
  auto first = StartAgent(journal, "first.log");
  ASSERT_TRUE(first) << first.error().ToString();
  ASSERT_TRUE(WaitForOwner(journal, first.value().pid(), first.value()))
      << Tail(dir_.File("first.log"));

  auto second = StartAgent(journal, "second.log");
  ASSERT_TRUE(second) << second.error().ToString();
  auto refused = second.value().WaitFor(10s);
  ASSERT_TRUE(refused) << "the second agent was not refused at once";
  EXPECT_TRUE(refused.value().exited && refused.value().code == 1) << refused.value().ToString();
  const std::string message = ReadFile(dir_.File("second.log"));
  EXPECT_NE(message.find("owned by another process"), std::string::npos) << message;
  EXPECT_NE(message.find("pid=" + std::to_string(first.value().pid())), std::string::npos)
      << message;
  EXPECT_NE(message.find("host=" + Hostname()), std::string::npos) << message;

  // `reckon admin check` reads beside the running owner, and names it.
  ASSERT_TRUE(WaitForRuns(journal, first.value())) << Tail(dir_.File("first.log"));
  ASSERT_TRUE(first.value().running()) << "the first agent ended before the checks";
  auto [check, report] = Reckon({"admin", "check", journal});
  EXPECT_TRUE(check.Succeeded()) << check.ToString() << "\n" << report;
  EXPECT_NE(report.find("owner:          pid=" + std::to_string(first.value().pid())),
            std::string::npos)
      << report;

  auto done = first.value().WaitFor(60s);
  ASSERT_TRUE(done) << done.error().ToString();
  EXPECT_TRUE(done.value().Succeeded()) << done.value().ToString() << "\n"
                                        << Tail(dir_.File("first.log"));
  ExpectCleanAudit(journal);
}

TEST_F(JournalOwnerTest, ASecondServerIsRefusedAtOnce) {
  const std::string journal = dir_.File("journal.db");
  auto start_server = [&](const std::string& name) {
    SubprocessOptions options;
    options.args = {"server", "--journal", journal, "--listen", "127.0.0.1:0", "--port-file",
                    dir_.File(name + ".port"), "--quiet"};
    options.stderr_path = dir_.File(name + ".log");
    return Subprocess::Start(RECKON_CLI, std::move(options));
  };
  auto first = start_server("first");
  ASSERT_TRUE(first) << first.error().ToString();
  ASSERT_TRUE(WaitForOwner(journal, first.value().pid(), first.value()))
      << Tail(dir_.File("first.log"));
  // The port file is written once the server serves (and handles SIGTERM).
  for (auto deadline = std::chrono::steady_clock::now() + 20s;
       ReadFile(dir_.File("first.port")).empty() && first.value().running() &&
       std::chrono::steady_clock::now() < deadline;
       std::this_thread::sleep_for(10ms)) {
  }
  ASSERT_FALSE(ReadFile(dir_.File("first.port")).empty()) << Tail(dir_.File("first.log"));

  auto second = start_server("second");
  ASSERT_TRUE(second) << second.error().ToString();
  auto refused = second.value().WaitFor(10s);
  ASSERT_TRUE(refused) << "the second server was not refused at once";
  EXPECT_TRUE(refused.value().exited && refused.value().code == 1) << refused.value().ToString();
  EXPECT_FALSE(fs::exists(dir_.File("second.port"))) << "the second server served";
  const std::string message = ReadFile(dir_.File("second.log"));
  EXPECT_NE(message.find("pid=" + std::to_string(first.value().pid())), std::string::npos)
      << message;
  EXPECT_NE(message.find("host=" + Hostname()), std::string::npos) << message;

  EXPECT_TRUE(first.value().running()) << "the first server must keep serving";
  auto stopped = first.value().Terminate(10s);
  ASSERT_TRUE(stopped) << stopped.error().ToString();
  EXPECT_TRUE(stopped.value().Succeeded()) << stopped.value().ToString();
  auto [check, report] = Reckon({"admin", "check", journal});
  EXPECT_TRUE(check.Succeeded()) << check.ToString() << "\n" << report;
}

TEST_F(JournalOwnerTest, TheLockOfAKilledOwnerDoesNotBlockItsRestart) {
  const std::string journal = dir_.File("journal.db");
  auto first = StartAgent(journal, "first.log");
  ASSERT_TRUE(first) << first.error().ToString();
  ASSERT_TRUE(WaitForOwner(journal, first.value().pid(), first.value()));
  std::this_thread::sleep_for(300ms);  // into the first attempts (not needed for the lock)
  ASSERT_TRUE(first.value().Kill(SIGKILL));
  ASSERT_TRUE(first.value().Wait());
  EXPECT_TRUE(fs::exists(journal + ".lock")) << "the lock file stays behind";
  EXPECT_EQ(storage::JournalLock::DescribeHolder(journal), "") << "the lock does not";

  auto restart = StartAgent(journal, "restart.log");
  ASSERT_TRUE(restart) << restart.error().ToString();
  auto done = restart.value().WaitFor(60s);
  ASSERT_TRUE(done) << done.error().ToString();
  EXPECT_TRUE(done.value().Succeeded()) << done.value().ToString() << "\n"
                                        << Tail(dir_.File("restart.log"));
  ExpectCleanAudit(journal);
}

TEST_F(JournalOwnerTest, ADamagedJournalIsRefusedAndAdminCheckSaysSo) {
  const std::string journal = dir_.File("journal.db");
  auto agent = StartAgent(journal, "agent.log");
  ASSERT_TRUE(agent) << agent.error().ToString();
  auto done = agent.value().WaitFor(60s);
  ASSERT_TRUE(done && done.value().Succeeded()) << Tail(dir_.File("agent.log"));
  auto [good, good_report] = Reckon({"admin", "check", journal, "--json"});
  EXPECT_TRUE(good.Succeeded()) << good.ToString() << "\n" << good_report;
  EXPECT_NE(good_report.find("\"ok\":true"), std::string::npos) << good_report;
  EXPECT_NE(good_report.find("\"runs\":" + std::to_string(kWorkflows)), std::string::npos)
      << good_report;

  const std::string copy = dir_.File("copy.db");
  fs::copy_file(journal, copy);  // the agent's last close checkpointed the WAL into the file
  auto flipped = FlipMiddle(copy);
  ASSERT_TRUE(flipped) << flipped.error().ToString();

  auto damaged = StartAgent(copy, "damaged.log");
  ASSERT_TRUE(damaged) << damaged.error().ToString();
  auto refused = damaged.value().WaitFor(30s);
  ASSERT_TRUE(refused) << refused.error().ToString();
  EXPECT_TRUE(refused.value().exited && refused.value().code == 1) << refused.value().ToString();
  const std::string message = ReadFile(dir_.File("damaged.log"));
  EXPECT_NE(message.find("journal '" + copy + "' is damaged"), std::string::npos) << message;
  EXPECT_NE(message.find("reckon admin check"), std::string::npos) << message;

  auto [bad, bad_report] = Reckon({"admin", "check", copy});
  EXPECT_TRUE(bad.exited && bad.code == 1) << bad.ToString() << "\n" << bad_report;
  EXPECT_NE(bad_report.find("integrity:      DAMAGED"), std::string::npos) << bad_report;

  auto [missing, missing_report] = Reckon({"admin", "check", dir_.File("absent.db")});
  EXPECT_TRUE(missing.exited && missing.code == 2) << missing.ToString();
  EXPECT_FALSE(fs::exists(dir_.File("absent.db")));
}

}  // namespace
}  // namespace reckon::testing
