// An agent plan on MCP tools, embedded (the sample's mcp-agent: engine, journal and MCP client
// in one process), through SIGKILLs of the MCP server (its own crash faults, over stdio and
// Streamable HTTP) and of mcp-agent itself. However the calls end, the ledger must hold exactly
// one refund per refund step, under the step's operation id, which also reached the server in
// _meta.
#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "tests/mcp/mcp_support.h"
#include "tests/support/crash_support.h"

namespace reckon::testing {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

constexpr int kRefundSteps = 5;

// Five refunds that run at once (no dependencies), each after its own lookup.
std::string WritePlan(const TempDir& dir) {
  json::array steps;
  for (int i = 1; i <= kRefundSteps; ++i) {
    const std::string payment = "pay-" + std::to_string(i);
    steps.push_back(json::object{{"id", "lookup" + std::to_string(i)}, {"tool", "lookup_payment"},
                                 {"input", json::object{{"payment_id", payment}}}});
    steps.push_back(json::object{
        {"id", "refund" + std::to_string(i)},
        {"tool", "send_refund"},
        {"depends_on", json::array{"lookup" + std::to_string(i)}},
        {"input", json::object{{"payment_id", payment},
                               {"amount_cents", {{"$ref", "steps.lookup" + std::to_string(i) + ".output.amount_cents"}}},
                               {"reason", "test"}}}});
  }
  const std::string path = dir.File("plan.json");
  std::ofstream(path) << json::serialize(json::object{{"plan_id", "mcp-five-refunds"}, {"steps", steps}});
  return path;
}

std::vector<std::string> AgentArgs(const TempDir& dir) {
  return {WritePlan(dir), "--journal", dir.File("agent.db"), "--contracts", FastContractsFile(dir)};
}

Result<Subprocess> StartAgent(const TempDir& dir, std::vector<std::string> args) {
  SubprocessOptions options;
  options.args = std::move(args);
  options.stderr_path = dir.File("agent.log");
  return Subprocess::Start(RECKON_MCP_AGENT, std::move(options));
}

void ExpectOneRefundPerStep(const TempDir& dir, const std::string& output) {
  auto refunds = LedgerRecords(dir, "refund");
  EXPECT_EQ(refunds.size(), static_cast<std::size_t>(kRefundSteps)) << output;
  std::map<std::string, int> per_key;
  std::map<std::string, int> per_payment;
  for (const json::object& refund : refunds) {
    const std::string key(refund.at("idempotency_key").as_string());
    ++per_key[key];
    ++per_payment[std::string(refund.at("payment_id").as_string())];
    EXPECT_EQ(refund.at("meta_operation_id"), refund.at("idempotency_key"));
  }
  for (const auto& [key, n] : per_key) EXPECT_EQ(n, 1) << "operation " << key << "\n" << output;
  for (const auto& [payment, n] : per_payment) EXPECT_EQ(n, 1) << payment << "\n" << output;
  EXPECT_EQ(per_payment.size(), static_cast<std::size_t>(kRefundSteps));
}

// The faults of the first send_refund calls, across restarts of the server.
const std::string kFaults = "crash,drop_reply,garbage,hang,crash_before,odd_error,crash";

TEST(McpPlanTest, StdioPlanCompletesThroughServerCrashesWithOneRefundPerStep) {
  TempDir dir;
  auto args = AgentArgs(dir);
  args.insert(args.end(), {"--mcp", StdioServerCommand(dir, kFaults)});
  auto agent = StartAgent(dir, args);
  ASSERT_TRUE(agent) << agent.error().ToString();
  auto output = agent.value().ReadAll(240s);
  ASSERT_TRUE(output) << Tail(dir.File("agent.log"));
  auto status = agent.value().WaitFor(10s);
  ASSERT_TRUE(status);
  EXPECT_TRUE(status.value().Succeeded()) << status.value().ToString() << "\n" << output.value()
                                          << Tail(dir.File("agent.log"));
  EXPECT_NE(output.value().find("plan mcp-five-refunds: completed"), std::string::npos) << output.value();
  EXPECT_NE(output.value().find("refused close_account"), std::string::npos) << output.value();
  ExpectOneRefundPerStep(dir, output.value());
  EXPECT_GE(LedgerRecords(dir, "call").size(), 7u);  // every fault was met
}

TEST(McpPlanTest, HttpPlanCompletesThroughServerCrashesWithOneRefundPerStep) {
  TempDir dir;
  auto server = StartHttpServer(dir, kFaults, 0, /*sse=*/true);
  ASSERT_TRUE(server) << server.error().ToString();
  const std::uint16_t port = server.value().port;
  std::optional<HttpMcpServer> running = std::move(server).value();
  auto args = AgentArgs(dir);
  args.insert(args.end(), {"--mcp-url", running->Url()});
  auto agent = StartAgent(dir, args);
  ASSERT_TRUE(agent) << agent.error().ToString();
  // The server's crash faults SIGKILL it; start it again on the same port, as an operator would.
  int restarts = 0;
  for (int i = 0; i < 4800 && agent.value().running(); ++i) {
    if (running && running->process.WaitFor(0ms)) {
      running.reset();
      auto again = StartHttpServer(dir, kFaults, port, /*sse=*/true);
      ASSERT_TRUE(again) << again.error().ToString();
      running = std::move(again).value();
      ++restarts;
    }
    if (agent.value().WaitFor(50ms)) break;
  }
  auto output = agent.value().ReadAll(10s);
  ASSERT_TRUE(output);
  auto status = agent.value().WaitFor(10s);
  ASSERT_TRUE(status);
  EXPECT_TRUE(status.value().Succeeded()) << status.value().ToString() << "\n" << output.value()
                                          << Tail(dir.File("agent.log"));
  EXPECT_NE(output.value().find("plan mcp-five-refunds: completed"), std::string::npos) << output.value();
  EXPECT_GE(restarts, 1);
  ExpectOneRefundPerStep(dir, output.value());
}

TEST(McpPlanTest, AgentKilledWhileACallHangsResumesWithOneRefundPerStep) {
  TempDir dir;
  auto args = AgentArgs(dir);
  args.insert(args.end(), {"--mcp", StdioServerCommand(dir, "hang,none,drop_reply")});
  {
    auto agent = StartAgent(dir, args);
    ASSERT_TRUE(agent) << agent.error().ToString();
    // Wait until the first refund call reached the server (it hangs there), then SIGKILL the
    // embedded engine: the server sees its stdin close and exits.
    for (int i = 0; i < 2000 && LedgerRecords(dir, "call").empty(); ++i) {
      std::this_thread::sleep_for(10ms);
    }
    ASSERT_FALSE(LedgerRecords(dir, "call").empty()) << Tail(dir.File("agent.log"));
    ASSERT_TRUE(agent.value().Kill(SIGKILL));
    ASSERT_TRUE(agent.value().Wait());
  }
  auto agent = StartAgent(dir, args);
  ASSERT_TRUE(agent) << agent.error().ToString();
  auto output = agent.value().ReadAll(240s);
  ASSERT_TRUE(output);
  auto status = agent.value().WaitFor(10s);
  ASSERT_TRUE(status);
  EXPECT_TRUE(status.value().Succeeded()) << status.value().ToString() << "\n" << output.value()
                                          << Tail(dir.File("agent.log"));
  ExpectOneRefundPerStep(dir, output.value());
}

// The MCP server SIGKILLed from outside at random moments while the plan runs (the client
// starts it again on the next call). Rounds: $RECKON_MCP_KILL_ROUNDS (default 1; the heavy
// tier runs 100).
TEST(McpPlanTest, StdioPlanThroughRandomKillsOfTheServer) {
  const char* env = std::getenv("RECKON_MCP_KILL_ROUNDS");
  const int rounds = env != nullptr ? std::max(1, std::atoi(env)) : 1;
  std::mt19937 random(20261202);
  for (int round = 0; round < rounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    TempDir dir;
    auto args = AgentArgs(dir);
    args.insert(args.end(), {"--mcp", StdioServerCommand(dir, "")});
    auto agent = StartAgent(dir, args);
    ASSERT_TRUE(agent) << agent.error().ToString();
    int kills = 0;
    for (int i = 0; i < 2000; ++i) {
      if (agent.value().WaitFor(std::chrono::milliseconds(5 + random() % 60))) break;
      const int pid = ServerPid(dir);
      if (pid > 0 && ::kill(pid, SIGKILL) == 0) ++kills;
    }
    auto output = agent.value().ReadAll(60s);
    ASSERT_TRUE(output);
    auto status = agent.value().WaitFor(10s);
    ASSERT_TRUE(status);
    EXPECT_TRUE(status.value().Succeeded()) << status.value().ToString() << "\n" << output.value()
                                            << Tail(dir.File("agent.log"));
    ExpectOneRefundPerStep(dir, output.value());
    std::printf("round %d: %d kills of the MCP server\n", round, kills);
  }
}

TEST(McpPlanTest, ABadContractsFileStartsNothingAndNamesEveryProblem) {
  TempDir dir;
  const std::string contracts = dir.File("bad.json");
  std::ofstream(contracts) << R"([
    {"contract": {"name": "send_refund", "side_effect": "non_repeatable_write",
                  "input_schema": {"type": "object"}, "reconcile": {"mode": "lookup"}},
     "mcp": {"operation_id_argument": "", "lookup": {"tool": "find_refund", "committed": "yes"}}},
    {"name": "lookup_payment", "side_effect": "read_only", "input_schema": {"type": "object"},
     "retry": {"max_attempts": 0}},
    "not a contract"])";
  auto agent = StartAgent(dir, {WritePlan(dir), "--journal", dir.File("agent.db"), "--contracts",
                                contracts, "--mcp", StdioServerCommand(dir, "")});
  ASSERT_TRUE(agent) << agent.error().ToString();
  auto status = agent.value().WaitFor(60s);
  ASSERT_TRUE(status);
  EXPECT_TRUE(status.value().exited && status.value().code == 2) << status.value().ToString();
  const std::string log = Tail(dir.File("agent.log"));
  for (const char* expected : {
           "tool 'send_refund': mcp.operation_id_argument: must be a non-empty string",
           "tool 'send_refund': mcp.lookup.committed: must be an array of strings",
           "tool 'send_refund': mcp.lookup.status_field: required",
           "tool 'send_refund': contract 'send_refund'",  // ValidateContract's own problems
           "tool 'lookup_payment': contract 'lookup_payment'",
           "entry [2]: must be an object",
       }) {
    EXPECT_NE(log.find(expected), std::string::npos) << "missing: " << expected << "\n" << log;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.File("server.pid"))) << "the MCP server was started";
  EXPECT_FALSE(std::filesystem::exists(dir.File("agent.db"))) << "the journal was created";
}

}  // namespace
}  // namespace reckon::testing
