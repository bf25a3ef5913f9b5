// A plan on MCP tools in server mode: `reckon server`, `reckon worker --mcp 'COMMAND ARGS'
// --contracts FILE` hosting the Python refund MCP server's tools, and `reckon plan run`. The
// worker is SIGKILLed while a refund call hangs in the MCP server (its MCP server then sees its
// stdin close and exits) and started again; the attempt it held becomes an unknown outcome, the
// new worker's lookup finds nothing, and the refund is made once. One refund per step.
#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>

#include <chrono>
#include <csignal>
#include <fstream>
#include <map>
#include <thread>

#include "tests/mcp/mcp_support.h"
#include "tests/support/crash_support.h"
#include "tests/support/reckon_server.h"

namespace reckon::testing {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

constexpr int kSteps = 3;

std::string WritePlan(const TempDir& dir) {
  json::array steps;
  for (int i = 1; i <= kSteps; ++i) {
    steps.push_back(json::object{
        {"id", "refund" + std::to_string(i)},
        {"tool", "send_refund"},
        {"input", json::object{{"payment_id", "pay-" + std::to_string(i)},
                               {"amount_cents", 500},
                               {"reason", "test"}}}});
  }
  const std::string path = dir.File("plan.json");
  std::ofstream(path) << json::serialize(json::object{{"plan_id", "mcp-worker-refunds"}, {"steps", steps}});
  return path;
}

TEST(McpWorkerTest, PlanOnAServerWithAnMcpWorkerSigkilledMidCall) {
  TempDir dir;
  auto server = ReckonServer::Start(RECKON_CLI_PATH);
  ASSERT_TRUE(server) << server.error().ToString();
  ReckonServer& s = *server.value();
  const std::string contracts = FastContractsFile(dir);
  std::map<std::string, Subprocess> workers;
  auto start_worker = [&](const std::string& name) {
    SubprocessOptions options;
    options.args = {"worker", "--server", s.address(), "--mcp",
                    StdioServerCommand(dir, "hang,none,drop_reply"), "--contracts", contracts};
    options.stderr_path = s.dir().File(name + ".log");
    options.env = s.client_env();
    options.env.emplace_back("RECKON_TOKEN_FILE", s.TokenFile("worker"));
    auto worker = Subprocess::Start(RECKON_CLI_PATH, std::move(options));
    if (worker) workers.emplace(name, std::move(worker).value());
    return worker.has_value();
  };
  ASSERT_TRUE(start_worker("w1"));
  // The plan is validated against the contracts the worker registered: wait for them.
  ASSERT_TRUE(Eventually([&] {
    CliRun listed = s.Cli({"contracts"});
    return listed.out.find("send_refund") != std::string::npos;
  })) << Tail(s.dir().File("w1.log"));
  auto plan = s.StartCli({"plan", "run", WritePlan(dir)});
  ASSERT_TRUE(plan) << plan.error().ToString();
  // The first refund call hangs in the MCP server: SIGKILL the worker then, and start another.
  ASSERT_TRUE(Eventually([&] { return !LedgerRecords(dir, "call").empty(); }, 60s))
      << Tail(s.dir().File("w1.log"));
  ASSERT_TRUE(workers.at("w1").Kill(SIGKILL));
  ASSERT_TRUE(workers.at("w1").Wait());
  ASSERT_TRUE(start_worker("w2"));
  auto out = plan.value().ReadAll(240s);
  ASSERT_TRUE(out) << Tail(s.dir().File("w2.log"));
  auto status = plan.value().WaitFor(10s);
  ASSERT_TRUE(status);
  EXPECT_TRUE(status.value().Succeeded()) << status.value().ToString() << "\n" << out.value()
                                          << Tail(s.dir().File("w2.log"));
  EXPECT_NE(out.value().find("completed"), std::string::npos) << out.value();
  auto refunds = LedgerRecords(dir, "refund");
  EXPECT_EQ(refunds.size(), static_cast<std::size_t>(kSteps)) << out.value();
  std::map<std::string, int> per_key;
  for (const json::object& refund : refunds) {
    ++per_key[std::string(refund.at("idempotency_key").as_string())];
    EXPECT_EQ(refund.at("meta_operation_id"), refund.at("idempotency_key"));
  }
  for (const auto& [key, n] : per_key) EXPECT_EQ(n, 1) << key;
  EXPECT_EQ(per_key.size(), static_cast<std::size_t>(kSteps));
  // The hung call made no refund and was followed by a new attempt.
  EXPECT_GE(LedgerRecords(dir, "call").size(), static_cast<std::size_t>(kSteps + 1));
  const json::object first = LedgerRecords(dir, "call").front();
  EXPECT_EQ(first.at("fault"), "hang");
}

}  // namespace
}  // namespace reckon::testing
