// `reckon contracts --mcp 'COMMAND ARGS' | --mcp-url URL --contracts FILE` against the Python
// refund MCP server: every listed tool with its verdict, the tool without a contract refused,
// and pairing problems named by tool and field.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/mcp/mcp_support.h"
#include "tests/support/crash_support.h"

namespace reckon::testing {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

const std::string kContracts = std::string(RECKON_SOURCE_DIR) + "/samples/mcp/contracts.json";

std::pair<ExitStatus, std::string> Reckon(const TempDir& dir, std::vector<std::string> args) {
  SubprocessOptions options;
  options.args = std::move(args);
  options.stderr_path = dir.File("cli.log");
  auto cli = Subprocess::Start(RECKON_CLI_PATH, std::move(options));
  EXPECT_TRUE(cli) << cli.error().ToString();
  if (!cli) return {};
  auto out = cli.value().ReadAll(60s);
  auto status = cli.value().WaitFor(10s);
  EXPECT_TRUE(status);
  return {status ? status.value() : ExitStatus{}, out ? out.value() : std::string()};
}

TEST(McpCliTest, ContractsListsAStdioServersToolsWithVerdictsAndRefusals) {
  TempDir dir;
  auto [status, out] = Reckon(dir, {"contracts", "--contracts", kContracts, "--mcp",
                                    StdioServerCommand(dir, "")});
  EXPECT_TRUE(status.Succeeded()) << status.ToString() << "\n" << out << Tail(dir.File("cli.log"));
  for (const char* expected : {"lookup_payment", "send_refund", "find_refund", "close_account",
                               "consistent", "no_contract",
                               "refused: close_account has no contract"}) {
    EXPECT_NE(out.find(expected), std::string::npos) << expected << "\n" << out;
  }
}

TEST(McpCliTest, ContractsListsAnHttpServersToolsAsJson) {
  TempDir dir;
  auto server = StartHttpServer(dir, "");
  ASSERT_TRUE(server) << server.error().ToString();
  auto [status, out] = Reckon(dir, {"contracts", "--json", "--contracts", kContracts,
                                    "--mcp-url", server.value().Url()});
  ASSERT_TRUE(status.Succeeded()) << status.ToString() << "\n" << out << Tail(dir.File("cli.log"));
  json::value report = json::parse(out);
  EXPECT_EQ(report.at("tools").as_array().size(), 4u);
  EXPECT_EQ(report.at("refused"), json::parse(R"(["close_account"])"));
  EXPECT_EQ(report.at("problems"), json::array{});
  EXPECT_EQ(report.at("summary").at("consistent"), 3);
  EXPECT_EQ(report.at("summary").at("no_contract"), 1);
}

TEST(McpCliTest, ContractsNamesPairingProblemsAndFails) {
  TempDir dir;
  // A contract for a tool the server does not list, and a binding to an argument it lacks.
  std::ifstream in(kContracts);
  std::stringstream text;
  text << in.rdbuf();
  json::value file = json::parse(text.str());
  json::object& refund = file.as_array()[1].as_object();
  refund["mcp"].as_object()["operation_id_argument"] = "request_id";
  json::object extra = file.as_array()[2].as_object();
  extra["contract"].as_object()["name"] = "refund_status";
  file.as_array().push_back(extra);
  const std::string path = dir.File("contracts.json");
  std::ofstream(path) << json::serialize(file);
  auto [status, out] = Reckon(dir, {"contracts", "--contracts", path, "--mcp",
                                    StdioServerCommand(dir, "")});
  EXPECT_FALSE(status.Succeeded()) << out;
  const std::string all = out + Tail(dir.File("cli.log"));
  for (const char* expected : {
           "tool 'send_refund': mcp.operation_id_argument: the tool's inputSchema declares no "
           "property 'request_id'",
           "tool 'refund_status': the MCP server lists no tool of that name"}) {
    EXPECT_NE(all.find(expected), std::string::npos) << expected << "\n" << all;
  }
}

TEST(McpCliTest, PlanRunEmbeddedOnAnMcpServer) {
  TempDir dir;
  auto [status, out] = Reckon(dir, {"plan", "run", std::string(RECKON_SOURCE_DIR) + "/samples/mcp/refund_plan.json",
                                    "--journal", dir.File("plan.db"), "--approve-all",
                                    "--mcp", StdioServerCommand(dir, "crash"),
                                    "--contracts", FastContractsFile(dir)});
  EXPECT_TRUE(status.Succeeded()) << status.ToString() << "\n" << out << Tail(dir.File("cli.log"));
  EXPECT_NE(out.find("completed"), std::string::npos) << out;
  EXPECT_EQ(LedgerRecords(dir, "refund").size(), 2u) << out;
}

TEST(McpCliTest, WorkerAndPlanRunRefuseMcpWithoutContracts) {
  TempDir dir;
  auto [status, out] = Reckon(dir, {"plan", "run", std::string(RECKON_SOURCE_DIR) + "/samples/mcp/refund_plan.json",
                                    "--journal", dir.File("plan.db"), "--mcp", StdioServerCommand(dir, "")});
  EXPECT_EQ(status.code, 2) << status.ToString() << out;
  EXPECT_NE(Tail(dir.File("cli.log")).find("need --contracts FILE"), std::string::npos)
      << Tail(dir.File("cli.log"));
  EXPECT_FALSE(std::filesystem::exists(dir.File("server.pid")));
}

TEST(McpCliTest, ContractsStillReadsASavedCatalogFile) {
  TempDir dir;
  auto [status, out] = Reckon(dir, {"contracts", "--contracts",
                                    std::string(RECKON_SOURCE_DIR) + "/samples/refund/refund_contracts.json",
                                    "--mcp", std::string(RECKON_SOURCE_DIR) + "/samples/mcp/tools_list.json"});
  EXPECT_TRUE(status.Succeeded()) << status.ToString() << "\n" << out << Tail(dir.File("cli.log"));
  EXPECT_NE(out.find("MCP catalog"), std::string::npos) << out;
}

}  // namespace
}  // namespace reckon::testing
