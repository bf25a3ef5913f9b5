// The secret canary, in server mode with the real processes: `reckon server`, the refund
// sample's worker (whose send_refund tool puts a card token from its vault, "tok_secret_...",
// into the contract's secret field card_token) and the payments provider. Refunds run to the
// end, approvals come from the CLI, and a client also tries to slip card tokens in through a
// workflow input, an agent plan and `reckon plan run`. Afterwards no card token is anywhere:
// not in the journal, its WAL, the trace, the server's or the worker's log, nor in the output
// of any CLI command (show, history, trace, list, in both text and JSON).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/crash_support.h"
#include "tests/support/reckon_server.h"

namespace reckon::testing {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

// Every card token of the sample's vault starts with this (samples/refund/card_vault.cc), and
// so do the canaries a client tries to send.
constexpr char kTokenPrefix[] = "tok_secret_";
constexpr char kClientCanary[] = "tok_secret_client_canary_8813";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

class SecretCanaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SubprocessOptions o;
    o.args = {"--port", "0", "--ledger", dir_.File("ledger.db"), "--seed", "5"};
    o.stderr_path = dir_.File("provider.log");
    auto provider = StartListening(RECKON_PAYMENTS_PROVIDER, std::move(o));
    ASSERT_TRUE(provider) << provider.error().ToString();
    provider_.emplace(std::move(provider).value());
    auto server = ReckonServer::Start(RECKON_CLI_PATH);
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(server).value();
    const std::string url = "http://127.0.0.1:" + std::to_string(provider_->port);
    ASSERT_TRUE(server_->StartWorker(RECKON_REFUND_WORKER, "refund-worker",
                                     {"--provider", url, "--seed", "11", "--id", "refund-w1"}));
  }

  // Runs the CLI and keeps what it printed, for the canary search.
  CliRun Cli(std::vector<std::string> args) {
    CliRun run = server_->Cli(std::move(args));
    printed_ += run.out + run.err;
    return run;
  }

  // Approves every operation of `id` that awaits approval; true once the run is finished.
  bool ApproveOrFinished(const std::string& id) {
    const CliRun show = Cli({"show", id, "--json"});
    if (show.code() != 0) return false;
    const json::value detail = json::parse(show.out);
    if (detail.at("status").as_string() != "running") return true;
    for (const json::value& op : detail.at("operations").as_array()) {
      if (op.at("state").as_string() != "awaiting_approval") continue;
      Cli({"approve", id, "--operation", std::string(op.at("operation_id").as_string()),
           "--fingerprint", std::string(op.at("intent_hash").as_string()), "--note", "canary-test"});
    }
    return false;
  }

  // The files a card token must never reach.
  std::vector<std::string> Files() const {
    const std::string journal = server_->journal_path();
    return {journal, journal + "-wal", journal + "-shm", journal + ".trace.jsonl",
            server_->dir().File("server.log"), server_->dir().File("refund-worker.log")};
  }

  std::vector<std::string> FilesHolding(const std::string& needle) const {
    std::vector<std::string> holding;
    for (const std::string& path : Files()) {
      if (std::filesystem::exists(path) && ReadFile(path).find(needle) != std::string::npos) {
        holding.push_back(path);
      }
    }
    return holding;
  }

  TempDir dir_;
  std::optional<ListeningProcess> provider_;
  std::unique_ptr<ReckonServer> server_;
  std::string printed_;  // everything the CLI printed
};

TEST_F(SecretCanaryTest, NoCardTokenReachesTheJournalTheTraceTheLogsOrTheCli) {
  const std::vector<std::string> ids = {"refund-1", "refund-2", "refund-3"};
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const CliRun started = server_->StartWorkflow(
        ids[i], "refund",
        R"({"payment_id": "pay-)" + std::to_string(i + 1) + R"(", "reason": "duplicate"})");
    ASSERT_EQ(started.code(), 0) << started.Describe();
  }
  for (const std::string& id : ids) {
    EXPECT_TRUE(Eventually([&] { return ApproveOrFinished(id); }, 60s)) << id;
    const CliRun show = Cli({"show", id, "--json"});
    EXPECT_EQ(json::parse(show.out).at("status").as_string(), "completed") << show.Describe();
  }

  // A client tries to hand card tokens over itself: refused, and never stored.
  const CliRun by_input = Cli({"start", "sneaky-1", "--type", "refund", "--input",
                               R"({"payment_id": "pay-1", "reason": "r", "card_token": ")" +
                                   std::string(kClientCanary) + "\"}"});
  EXPECT_EQ(by_input.code(), 2) << by_input.Describe();
  EXPECT_NE(by_input.err.find("'card_token', a secret field of tool 'send_refund'"),
            std::string::npos)
      << by_input.Describe();
  const std::string plan = server_->dir().File("sneaky-plan.json");
  std::ofstream(plan) << R"({"plan_id": "sneaky-plan", "steps": [{"id": "refund",
      "tool": "send_refund", "input": {"payment_id": "pay-2", "amount_cents": 100,
      "reason": "r", "card_token": ")" << kClientCanary << R"("}}]})";
  const CliRun by_plan = Cli({"plan", "run", plan});
  EXPECT_EQ(by_plan.code(), 2) << by_plan.Describe();
  EXPECT_NE(by_plan.err.find("secrets come from the worker's side"), std::string::npos)
      << by_plan.Describe();

  // What people read.
  for (const std::string& id : ids) {
    for (const char* command : {"show", "history", "trace"}) {
      EXPECT_EQ(Cli({command, id}).code(), 0) << command;
    }
    EXPECT_EQ(Cli({"show", id, "--json"}).code(), 0);
    EXPECT_EQ(Cli({"history", id, "--json"}).code(), 0);
  }
  EXPECT_EQ(Cli({"list"}).code(), 0);
  EXPECT_EQ(Cli({"list", "--json"}).code(), 0);
  EXPECT_NE(printed_.find("refund-3"), std::string::npos);  // the outputs are not empty
  EXPECT_NE(printed_.find("OperationCommitted"), std::string::npos);

  EXPECT_EQ(printed_.find(kTokenPrefix), std::string::npos)
      << printed_.substr(printed_.find(kTokenPrefix) - std::min<std::size_t>(
                                                           200, printed_.find(kTokenPrefix)),
                         400);
  EXPECT_EQ(FilesHolding(kTokenPrefix), std::vector<std::string>());
  ASSERT_TRUE(server_->Stop());
  EXPECT_EQ(FilesHolding(kTokenPrefix), std::vector<std::string>());
  EXPECT_FALSE(ReadFile(server_->journal_path()).empty());
  EXPECT_NE(ReadFile(server_->journal_path() + ".trace.jsonl").find("operation.committed"),
            std::string::npos) << "the trace was written";
}

}  // namespace
}  // namespace reckon::testing
