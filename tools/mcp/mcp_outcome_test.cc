// The mapping table of mcp_outcome.h, row by row.
#include "reckon/tools/mcp/mcp_outcome.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "reckon/contract/testing/test_contracts.h"

namespace reckon::tools {
namespace {

namespace json = boost::json;

McpReply Result(std::string_view text) {
  McpReply reply;
  reply.status = McpReply::Status::kResult;
  reply.result = json::parse(text);
  return reply;
}

McpReply JsonRpcError(std::int64_t code) {
  McpReply reply;
  reply.status = McpReply::Status::kError;
  reply.error_code = code;
  reply.message = "error";
  return reply;
}

class McpOutcomeTest : public ::testing::Test {
 protected:
  AttemptOutcome Map(const McpReply& reply) { return McpAttemptOutcome(contract_, binding_, reply); }

  ToolContract contract_ = testing_contracts::Payout();  // retryable rate_limited, definitive
                                                         // insufficient_funds, unknown internal_error
  McpToolBinding binding_{.operation_id_argument = "", .provider_ref_field = "payout.id", .lookup = {}};
};

TEST_F(McpOutcomeTest, SuccessOutputIsStructuredContentElseTextJsonElseText) {
  AttemptOutcome structured = Map(Result(
      R"({"content":[{"type":"text","text":"ignored"}],"structuredContent":{"payout":{"id":"po_1"}}})"));
  ASSERT_TRUE(structured.success);
  EXPECT_EQ(structured.output, json::parse(R"({"payout":{"id":"po_1"}})"));
  EXPECT_EQ(structured.provider_ref, "po_1");
  AttemptOutcome text_json = Map(Result(
      R"({"content":[{"type":"text","text":"{\"payout\":"},{"type":"text","text":"{\"id\":7}}"}]})"));
  ASSERT_TRUE(text_json.success);
  EXPECT_EQ(text_json.output, json::parse(R"({"payout":{"id":7}})"));
  EXPECT_EQ(text_json.provider_ref, "7");
  AttemptOutcome text = Map(Result(R"({"content":[{"type":"text","text":"done"}],"isError":false})"));
  ASSERT_TRUE(text.success);
  EXPECT_EQ(text.output, json::parse(R"({"text":"done"})"));
  EXPECT_EQ(text.provider_ref, "");
}

TEST_F(McpOutcomeTest, IsErrorMapsByItsCodeThroughTheContract) {
  auto code_of = [&](std::string_view result) { return Map(Result(result)); };
  AttemptOutcome definitive = code_of(R"({"isError":true,"structuredContent":{"code":"insufficient_funds"}})");
  EXPECT_FALSE(definitive.success);
  EXPECT_EQ(definitive.kind, FailureKind::kDefinitive);
  EXPECT_EQ(definitive.code, "insufficient_funds");
  AttemptOutcome retryable = code_of(
      R"({"isError":true,"content":[{"type":"text","text":"{\"code\":\"rate_limited\"}"}]})");
  EXPECT_EQ(retryable.kind, FailureKind::kRetryable);
  EXPECT_EQ(retryable.code, "rate_limited");
  AttemptOutcome unknown = code_of(R"({"isError":true,"structuredContent":{"code":"internal_error"}})");
  EXPECT_EQ(unknown.kind, FailureKind::kUnknown);
  AttemptOutcome unlisted = code_of(R"({"isError":true,"structuredContent":{"code":"odd"}})");
  EXPECT_EQ(unlisted.kind, FailureKind::kUnknown);
  AttemptOutcome no_code = code_of(R"({"isError":true,"content":[{"type":"text","text":"boom"}]})");
  EXPECT_EQ(no_code.kind, FailureKind::kUnknown);
  EXPECT_EQ(no_code.code, "mcp_tool_error");
  EXPECT_NE(no_code.message.find("boom"), std::string::npos);
}

TEST_F(McpOutcomeTest, JsonRpcErrorsRefusedBeforeRunningAreDefinitiveOthersUnknown) {
  for (std::int64_t code : {-32700, -32600, -32601, -32602}) {
    EXPECT_EQ(Map(JsonRpcError(code)).kind, FailureKind::kDefinitive) << code;
  }
  EXPECT_EQ(Map(JsonRpcError(-32603)).kind, FailureKind::kUnknown);
  EXPECT_EQ(Map(JsonRpcError(-32603)).code, "mcp_internal_error");
  EXPECT_EQ(Map(JsonRpcError(-32001)).kind, FailureKind::kUnknown);
  contract_.retry.retryable_codes.push_back("mcp_error_-32001");  // the contract's word first
  EXPECT_EQ(Map(JsonRpcError(-32001)).kind, FailureKind::kRetryable);
}

TEST_F(McpOutcomeTest, TransportFailuresBeforeSendingAreRetryableAfterUnknown) {
  AttemptOutcome not_sent = Map(ReplyNotSent("connection_refused", "refused"));
  EXPECT_EQ(not_sent.kind, FailureKind::kRetryable);
  EXPECT_EQ(not_sent.code, "mcp_not_sent");
  for (const char* reason : {"deadline", "cancelled", "connection_lost", "bad_reply", "http_500"}) {
    AttemptOutcome unknown = Map(ReplyUnknown(reason, "x"));
    EXPECT_EQ(unknown.kind, FailureKind::kUnknown) << reason;
    EXPECT_EQ(unknown.code, std::string("mcp_") + reason);
  }
  contract_.retry.retryable_codes.push_back("mcp_deadline");  // never loosens an unknown
  EXPECT_EQ(Map(ReplyUnknown("deadline", "x")).kind, FailureKind::kUnknown);
  McpReply refused;
  refused.status = McpReply::Status::kRefused;
  refused.reason = "http_403";
  EXPECT_EQ(Map(refused).kind, FailureKind::kDefinitive);
  EXPECT_EQ(Map(refused).code, "mcp_http_403");
  EXPECT_EQ(Map(Result("[1,2]")).kind, FailureKind::kUnknown);
  EXPECT_EQ(Map(Result("[1,2]")).code, "mcp_bad_reply");
}

TEST(McpLookupOutcomeTest, MapsTheStatusFieldAndCodes) {
  McpLookupBinding lookup;
  lookup.tool = "find_refund";
  lookup.status_field = "status";
  lookup.committed = {"committed"};
  lookup.not_found = {"not_found"};
  lookup.not_found_codes = {"no_such_refund"};
  lookup.output_field = "refund";
  lookup.provider_ref_field = "refund.refund_id";
  ReconcileOutcome committed = McpLookupOutcome(
      lookup, Result(R"({"structuredContent":{"status":"committed","refund":{"refund_id":"re-1"}}})"));
  EXPECT_EQ(committed.verdict, ReconcileVerdict::kCommitted);
  EXPECT_EQ(committed.output, json::parse(R"({"refund_id":"re-1"})"));
  EXPECT_EQ(committed.provider_ref, "re-1");
  EXPECT_EQ(McpLookupOutcome(lookup, Result(R"({"structuredContent":{"status":"not_found"}})")).verdict,
            ReconcileVerdict::kNotFound);
  EXPECT_EQ(McpLookupOutcome(lookup, Result(R"({"isError":true,"structuredContent":{"code":"no_such_refund"}})")).verdict,
            ReconcileVerdict::kNotFound);
  EXPECT_EQ(McpLookupOutcome(lookup, Result(R"({"isError":true,"structuredContent":{"code":"other"}})")).verdict,
            ReconcileVerdict::kStillUnknown);
  EXPECT_EQ(McpLookupOutcome(lookup, Result(R"({"structuredContent":{"status":"pending"}})")).verdict,
            ReconcileVerdict::kStillUnknown);
  EXPECT_EQ(McpLookupOutcome(lookup, Result(R"({"structuredContent":{}})")).verdict,
            ReconcileVerdict::kStillUnknown);
  EXPECT_EQ(McpLookupOutcome(lookup, ReplyUnknown("deadline", "x")).verdict,
            ReconcileVerdict::kStillUnknown);
  EXPECT_EQ(McpLookupOutcome(lookup, ReplyNotSent("connection_refused", "x")).verdict,
            ReconcileVerdict::kStillUnknown);
}

}  // namespace
}  // namespace reckon::tools
