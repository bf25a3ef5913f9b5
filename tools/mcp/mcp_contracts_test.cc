#include "reckon/tools/mcp/mcp_contracts.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "reckon/contract/contract_json.h"
#include "reckon/contract/testing/test_contracts.h"
#include "reckon/tools/mcp/mcp_tool_source.h"

namespace reckon::tools {
namespace {

namespace json = boost::json;

const std::string kSample = std::string(RECKON_SOURCE_DIR) + "/samples/mcp/contracts.json";

TEST(McpContractsTest, ReadsTheSampleFile) {
  auto file = LoadMcpContractsFile(kSample);
  ASSERT_TRUE(file) << file.error().ToString();
  ASSERT_EQ(file.value().tools.size(), 3u);
  const McpBoundContract* refund = file.value().Find("send_refund");
  ASSERT_NE(refund, nullptr);
  EXPECT_EQ(refund->mcp.operation_id_argument, "idempotency_key");
  ASSERT_TRUE(refund->mcp.lookup);
  EXPECT_EQ(refund->mcp.lookup->tool, "find_refund");
  EXPECT_EQ(refund->mcp.lookup->committed, std::vector<std::string>{"committed"});
  EXPECT_EQ(file.value().Find("lookup_payment")->mcp, McpToolBinding{});
  EXPECT_NE(file.value().registry.Find("find_refund"), nullptr);
}

TEST(McpContractsTest, APlainContractArrayStaysValid) {
  json::array plain{ContractToJson(testing_contracts::Lookup())};
  auto file = ParseMcpContracts(plain, "plain.json");
  ASSERT_TRUE(file) << file.error().ToString();
  EXPECT_EQ(file.value().tools.size(), 1u);
}

TEST(McpContractsTest, ReportsEveryProblemAtOnceByToolAndField) {
  json::value payout = ContractToJson(testing_contracts::Payout());  // reconcile.mode lookup
  json::value lookup = ContractToJson(testing_contracts::Lookup());
  json::value bad_class = lookup;
  bad_class.as_object()["name"] = "bad_class";
  bad_class.as_object()["side_effect"] = "sometimes";
  json::array file{
      json::object{{"contract", payout}},  // lookup mode, no mcp.lookup
      json::object{{"contract", lookup},
                   {"mcp", json::object{{"operation_id_argument", 7},
                                        {"lookup", json::object{{"tool", "get_payee"},
                                                                {"status_field", "a..b"},
                                                                {"committed", json::array{"ok"}},
                                                                {"not_found", json::array{"ok"}},
                                                                {"colour", "red"}}}}}},
      bad_class,
      lookup,  // a second get_payee
      42,
  };
  auto parsed = ParseMcpContracts(file, "bad.json");
  ASSERT_FALSE(parsed);
  const std::string message = parsed.error().message();
  EXPECT_EQ(parsed.error().code(), Errc::kInvalidArgument);
  for (const char* expected : {
           "bad.json: ",
           "tool 'send_payout': mcp.lookup: required: reconcile.mode is lookup",
           "tool 'get_payee': mcp.operation_id_argument: must be a non-empty string",
           "tool 'get_payee': mcp.lookup.tool: the lookup must be another tool",
           "tool 'get_payee': mcp.lookup.status_field: 'a..b' is not a dotted field path",
           "tool 'get_payee': mcp.lookup.not_found: 'ok' is also in committed",
           "tool 'get_payee': mcp.lookup.colour: unknown field",
           "tool 'get_payee': mcp.lookup: given, but reconcile.mode is 'unset'",
           "tool 'bad_class': ",
           "tool 'get_payee': a second contract for 'get_payee'",
           "entry [4]: must be an object",
       }) {
    EXPECT_NE(message.find(expected), std::string::npos) << "missing: " << expected << "\n" << message;
  }
}

TEST(McpContractsTest, PairingRefusesToolsWithoutContractAndNamesMissingOnes) {
  auto contracts = LoadMcpContractsFile(kSample);
  ASSERT_TRUE(contracts) << contracts.error().ToString();
  json::value catalog = json::parse(R"({"tools": [
      {"name": "lookup_payment", "inputSchema": {"type": "object", "properties": {"payment_id": {"type": "string"}},
       "required": ["payment_id"]}, "annotations": {"readOnlyHint": true}},
      {"name": "send_refund", "inputSchema": {"type": "object", "properties": {"payment_id": {"type": "string"},
       "amount_cents": {"type": "integer"}, "reason": {"type": "string"}, "idempotency_key": {"type": "string"}},
       "required": ["payment_id", "amount_cents", "reason", "idempotency_key"]},
       "annotations": {"readOnlyHint": false, "destructiveHint": true}},
      {"name": "find_refund", "inputSchema": {"type": "object", "properties": {"idempotency_key": {"type": "string"}}},
       "annotations": {"readOnlyHint": true}},
      {"name": "close_account", "inputSchema": {"type": "object"}}]})");
  auto pairing = PairMcpTools(catalog, contracts.value());
  ASSERT_TRUE(pairing) << pairing.error().ToString();
  EXPECT_EQ(pairing.value().hosted,
            (std::vector<std::string>{"lookup_payment", "send_refund", "find_refund"}));
  EXPECT_EQ(pairing.value().refused, std::vector<std::string>{"close_account"});
  const McpToolReport& refund = pairing.value().report.tools[1];
  EXPECT_EQ(refund.verdict, McpVerdict::kConsistent);
  // The operation id argument is Reckon's, not the plan's: no note about it.
  for (const std::string& note : refund.notes) {
    EXPECT_EQ(note.find("idempotency_key"), std::string::npos) << note;
  }

  json::value missing = json::parse(R"({"tools": [
      {"name": "lookup_payment", "inputSchema": {"type": "object"}},
      {"name": "send_refund", "inputSchema": {"type": "object", "properties": {"payment_id": {}}}}]})");
  auto paired = PairMcpTools(missing, contracts.value());
  ASSERT_TRUE(paired) << paired.error().ToString();
  auto bad = paired.value().Check();
  ASSERT_FALSE(bad);
  EXPECT_EQ(paired.value().problems.size(), 3u);
  const std::string message = bad.error().message();
  for (const char* expected : {
           "tool 'send_refund': mcp.operation_id_argument: the tool's inputSchema declares no "
           "property 'idempotency_key'",
           "tool 'send_refund': mcp.lookup.tool: the MCP server lists no tool 'find_refund'",
           "tool 'find_refund': the MCP server lists no tool of that name",
       }) {
    EXPECT_NE(message.find(expected), std::string::npos) << "missing: " << expected << "\n" << message;
  }
}

}  // namespace
}  // namespace reckon::tools
