// The MCP client against a real MCP server process (tests/mcp/refund_mcp_server.py), over
// stdio, Streamable HTTP with JSON answers, and Streamable HTTP with event streams: the
// catalog, tool calls with the operation id, pairing with contracts, and every fault of the
// server, each ending as tools/mcp/mcp_outcome.h says and then reconciled by the lookup.
#include <gtest/gtest.h>

#include <signal.h>

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>

#include <chrono>
#include <fstream>
#include <thread>

#include "reckon/tools/mcp/mcp_client.h"
#include "reckon/tools/mcp/mcp_outcome.h"
#include "reckon/tools/mcp/mcp_tool_source.h"
#include "reckon/tools/mcp/stdio_transport.h"
#include "tests/mcp/mcp_support.h"

namespace reckon::testing {
namespace {

namespace json = boost::json;
using namespace reckon::tools;
using namespace std::chrono_literals;

enum class Transport { kStdio, kHttpJson, kHttpSse };

std::string Name(const ::testing::TestParamInfo<Transport>& info) {
  switch (info.param) {
    case Transport::kStdio: return "Stdio";
    case Transport::kHttpJson: return "HttpJson";
    case Transport::kHttpSse: return "HttpSse";
  }
  return "?";
}

// False once `pid` is a zombie or gone.
bool ProcessAlive(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const std::size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

auto In(std::chrono::milliseconds ms) { return std::chrono::steady_clock::now() + ms; }

class McpClientTest : public ::testing::TestWithParam<Transport> {
 protected:
  bool http() const { return GetParam() != Transport::kStdio; }

  // A client for a server with `faults`; an HTTP server is started here (port: 0, any).
  std::unique_ptr<McpClient> Client(const std::string& faults, std::uint16_t port = 0) {
    McpServerAddress address;
    faults_ = faults;
    if (http()) {
      auto server = StartHttpServer(dir_, faults, port, GetParam() == Transport::kHttpSse);
      EXPECT_TRUE(server) << server.error().ToString();
      if (!server) return nullptr;
      address.url = server.value().Url();
      server_ = std::move(server).value();
    } else {
      address.command = StdioServerCommand(dir_, faults);
    }
    auto client = McpClient::Open(io_.get_executor(), address);
    EXPECT_TRUE(client) << client.error().ToString();
    return client ? std::move(client).value() : nullptr;
  }

  // The source with the tests' contracts, connected and registered on `tools_`.
  std::unique_ptr<McpToolSource> Source(const std::string& faults) {
    auto contracts = LoadMcpContractsFile(FastContractsFile(dir_));
    EXPECT_TRUE(contracts) << contracts.error().ToString();
    auto source = std::make_unique<McpToolSource>(Client(faults), std::move(contracts).value());
    auto pairing = RunTask(io_, source->Connect(In(20s)));
    EXPECT_TRUE(pairing) << pairing.error().ToString();
    EXPECT_TRUE(source->RegisterTools(tools_));
    return source;
  }

  AttemptOutcome Refund(const std::string& operation_id, std::chrono::milliseconds deadline = 5s) {
    ToolCallContext context;
    context.operation_id = operation_id;
    context.attempt = 1;
    context.deadline = In(deadline);
    json::value input = json::parse(R"({"payment_id": "pay-3", "amount_cents": 700, "reason": "test"})");
    return RunTask(io_, tools_.Find("send_refund")->execute(input, context));
  }

  ReconcileOutcome Lookup(const std::string& operation_id) {
    ToolCallContext context;
    context.operation_id = operation_id;
    context.deadline = In(5s);
    json::value input = json::parse(R"({"payment_id": "pay-3", "amount_cents": 700, "reason": "test"})");
    return RunTask(io_, tools_.Find("send_refund")->reconcile(input, context));
  }

  // After a crash fault: an HTTP server must be started again (a stdio one is restarted by the
  // client itself).
  void RestartHttpServerIfDead() {
    if (!http() || !server_) return;
    const std::uint16_t port = server_->port;
    auto status = server_->process.WaitFor(10s);
    ASSERT_TRUE(status) << "the server did not die";
    server_.reset();
    auto server = StartHttpServer(dir_, faults_, port, GetParam() == Transport::kHttpSse);
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(server).value();
  }

  std::string faults_;  // the server's, kept across its restarts (they count in the ledger)
  TempDir dir_;
  boost::asio::io_context io_;
  std::optional<HttpMcpServer> server_;
  ToolRegistry tools_;
};

TEST_P(McpClientTest, ListsEveryPageAndCallsAToolWithTheOperationIdInMeta) {
  auto client = Client("");
  ASSERT_NE(client, nullptr);
  auto catalog = RunTask(io_, client->ListTools(In(20s)));
  ASSERT_TRUE(catalog) << catalog.error().ToString();
  ASSERT_EQ(catalog.value().at("tools").as_array().size(), 4u);  // two pages of two
  json::object arguments{{"payment_id", "pay-3"}, {"amount_cents", 500}, {"reason", "r"},
                         {"idempotency_key", "key-1"}};
  McpReply reply = RunTask(io_, client->CallTool("send_refund", arguments, "op-1", In(5s)));
  ASSERT_EQ(reply.status, McpReply::Status::kResult) << reply.message;
  EXPECT_EQ(reply.result.at("structuredContent").at("refund_id"), "re-1");
  auto refunds = LedgerRecords(dir_, "refund");
  ASSERT_EQ(refunds.size(), 1u);
  EXPECT_EQ(refunds[0].at("meta_operation_id"), "op-1");
  EXPECT_EQ(refunds[0].at("idempotency_key"), "key-1");
  McpReply unknown_tool = RunTask(io_, client->CallTool("no_such_tool", {}, "op-2", In(5s)));
  EXPECT_EQ(unknown_tool.status, McpReply::Status::kError);
  EXPECT_EQ(unknown_tool.error_code, -32602);
}

TEST_P(McpClientTest, HostsToolsWithAContractRefusesTheRestAndReconciles) {
  auto contracts = LoadMcpContractsFile(FastContractsFile(dir_));
  ASSERT_TRUE(contracts) << contracts.error().ToString();
  McpToolSource source(Client(""), std::move(contracts).value());
  auto pairing = RunTask(io_, source.Connect(In(20s)));
  ASSERT_TRUE(pairing) << pairing.error().ToString();
  EXPECT_EQ(pairing.value().hosted,
            (std::vector<std::string>{"lookup_payment", "send_refund", "find_refund"}));
  EXPECT_EQ(pairing.value().refused, std::vector<std::string>{"close_account"});
  EXPECT_EQ(pairing.value().report.Count(McpVerdict::kConsistent), 3u);
  ASSERT_TRUE(source.RegisterTools(tools_));
  EXPECT_EQ(tools_.Find("close_account"), nullptr);

  AttemptOutcome refund = Refund("op-a");
  ASSERT_TRUE(refund.success) << refund.code << ": " << refund.message;
  EXPECT_EQ(refund.provider_ref, "re-1");
  auto refunds = LedgerRecords(dir_, "refund");
  ASSERT_EQ(refunds.size(), 1u);
  EXPECT_EQ(refunds[0].at("idempotency_key"), "op-a");  // the binding's argument
  EXPECT_EQ(refunds[0].at("meta_operation_id"), "op-a");

  ReconcileOutcome found = Lookup("op-a");
  EXPECT_EQ(found.verdict, ReconcileVerdict::kCommitted) << found.message;
  EXPECT_EQ(found.provider_ref, "re-1");
  EXPECT_EQ(found.output.at("refund_id"), "re-1");
  EXPECT_EQ(Lookup("op-never").verdict, ReconcileVerdict::kNotFound);

  // A definitive rejection by code: more than the payment.
  ToolCallContext context;
  context.operation_id = "op-big";
  context.deadline = In(5s);
  AttemptOutcome too_much = RunTask(io_, tools_.Find("send_refund")->execute(
      json::parse(R"({"payment_id": "pay-3", "amount_cents": 999999, "reason": "r"})"), context));
  EXPECT_EQ(too_much.kind, FailureKind::kDefinitive);
  EXPECT_EQ(too_much.code, "amount_exceeds_payment");
}

struct FaultCase {
  const char* fault;
  FailureKind kind;
  const char* stdio_code;
  const char* http_code;
  ReconcileVerdict verdict;  // what the lookup then finds
  std::size_t refunds;
};

TEST_P(McpClientTest, EachServerFaultEndsAsTheRulesSayAndTheLookupTellsTheTruth) {
  const FaultCase cases[] = {
      // Hangs before refunding: the deadline -> unknown; the lookup finds nothing.
      {"hang", FailureKind::kUnknown, "mcp_deadline", "mcp_deadline", ReconcileVerdict::kNotFound, 0},
      // Refunds, then no reply (stdio) or a closed connection (HTTP) -> unknown; committed.
      {"drop_reply", FailureKind::kUnknown, "mcp_deadline", "mcp_connection_lost",
       ReconcileVerdict::kCommitted, 1},
      // Refunds, then SIGKILLs itself mid-call -> unknown; committed.
      {"crash", FailureKind::kUnknown, "mcp_connection_lost", "mcp_connection_lost",
       ReconcileVerdict::kCommitted, 1},
      // SIGKILLs itself before refunding: the client cannot know -> unknown; not found.
      {"crash_before", FailureKind::kUnknown, "mcp_connection_lost", "mcp_connection_lost",
       ReconcileVerdict::kNotFound, 0},
      // Refunds, then answers bytes that are not JSON -> unknown; committed.
      {"garbage", FailureKind::kUnknown, "mcp_bad_reply", "mcp_bad_reply",
       ReconcileVerdict::kCommitted, 1},
      // isError with a code no contract lists -> unknown.
      {"odd_error", FailureKind::kUnknown, "odd_error", "odd_error", ReconcileVerdict::kNotFound, 0},
      // isError with a listed retryable code -> retryable.
      {"rate_limited", FailureKind::kRetryable, "rate_limited", "rate_limited",
       ReconcileVerdict::kNotFound, 0},
  };
  std::string faults;
  for (const FaultCase& c : cases) faults += std::string(faults.empty() ? "" : ",") + c.fault;
  auto source = Source(faults);
  std::size_t refunds = 0;
  for (const FaultCase& c : cases) {
    SCOPED_TRACE(c.fault);
    const std::string operation_id = std::string("op-") + c.fault;
    AttemptOutcome outcome = Refund(operation_id, 1500ms);
    EXPECT_FALSE(outcome.success);
    EXPECT_EQ(outcome.kind, c.kind) << outcome.code << ": " << outcome.message;
    EXPECT_EQ(outcome.code, http() ? c.http_code : c.stdio_code) << outcome.message;
    if (std::string(c.fault).rfind("crash", 0) == 0) RestartHttpServerIfDead();
    ReconcileOutcome found = Lookup(operation_id);
    EXPECT_EQ(found.verdict, c.verdict) << found.message;
    refunds += c.refunds;
    EXPECT_EQ(LedgerRecords(dir_, "refund").size(), refunds);
  }
  // After all that, the server works: the next call (past the fault list) refunds.
  AttemptOutcome fine = Refund("op-fine");
  EXPECT_TRUE(fine.success) << fine.code << ": " << fine.message;
}

TEST_P(McpClientTest, AServerDeadBeforeTheRequestIsRetryable) {
  // A server that is not there at all.
  McpServerAddress address;
  if (http()) {
    auto server = StartHttpServer(dir_, "");
    ASSERT_TRUE(server) << server.error().ToString();
    address.url = server.value().Url();
    ASSERT_TRUE(server.value().process.Kill(SIGKILL));
    ASSERT_TRUE(server.value().process.Wait());
  } else {
    address.command = dir_.File("no-such-server") + " --stdio";
  }
  auto client = McpClient::Open(io_.get_executor(), address);
  ASSERT_TRUE(client);
  auto contracts = LoadMcpContractsFile(FastContractsFile(dir_));
  ASSERT_TRUE(contracts);
  const McpBoundContract* refund = contracts.value().Find("send_refund");
  McpReply reply = RunTask(io_, client.value()->CallTool("send_refund", {}, "op-1", In(5s)));
  EXPECT_EQ(reply.status, McpReply::Status::kNotSent) << reply.message;
  AttemptOutcome outcome = McpAttemptOutcome(refund->contract, refund->mcp, reply);
  EXPECT_EQ(outcome.kind, FailureKind::kRetryable) << outcome.message;
  EXPECT_EQ(outcome.code, "mcp_not_sent");
  EXPECT_TRUE(LedgerRecords(dir_, "call").empty());
}

TEST_P(McpClientTest, AServerKilledBetweenCallsIsStartedOrReconnectedAgain) {
  auto source = Source("");
  ASSERT_TRUE(Refund("op-1").success);
  if (http()) {
    const std::uint16_t port = server_->port;
    ASSERT_TRUE(server_->process.Kill(SIGKILL));
    ASSERT_TRUE(server_->process.Wait());
    server_.reset();
    auto server = StartHttpServer(dir_, "", port, GetParam() == Transport::kHttpSse);
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(server).value();
  } else {
    const int pid = ServerPid(dir_);
    ASSERT_GT(pid, 0);
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    // Until it is dead (a zombie: its stdin and stdout are closed), so that nothing written
    // after this can reach it.
    for (int i = 0; i < 1000 && ProcessAlive(pid); ++i) std::this_thread::sleep_for(10ms);
  }
  // The old session (HTTP) or process (stdio) is gone; nothing was sent to it, so the call
  // goes to the new one.
  AttemptOutcome second = Refund("op-2");
  EXPECT_TRUE(second.success) << second.code << ": " << second.message;
  EXPECT_EQ(LedgerRecords(dir_, "refund").size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Transports, McpClientTest,
                         ::testing::Values(Transport::kStdio, Transport::kHttpJson,
                                           Transport::kHttpSse),
                         Name);

}  // namespace
}  // namespace reckon::testing
