#include "reckon/tools/mcp/mcp_protocol.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "reckon/tools/mcp/http_transport.h"
#include "reckon/tools/mcp/stdio_transport.h"

namespace reckon::tools {
namespace {

namespace json = boost::json;

TEST(McpProtocolTest, SplitsCommandLinesWithQuotes) {
  auto words = SplitCommandLine(R"(python3  server.py --ledger "my file" 'a b' c\ d)");
  ASSERT_TRUE(words) << words.error().ToString();
  EXPECT_EQ(words.value(),
            (std::vector<std::string>{"python3", "server.py", "--ledger", "my file", "a b", "c d"}));
  EXPECT_FALSE(SplitCommandLine("   "));
  EXPECT_FALSE(SplitCommandLine("python3 'unterminated"));
}

TEST(McpProtocolTest, ParsesHttpUrls) {
  auto url = ParseMcpUrl("http://127.0.0.1:8080/mcp?x=1");
  ASSERT_TRUE(url) << url.error().ToString();
  EXPECT_EQ(url.value().host, "127.0.0.1");
  EXPECT_EQ(url.value().port, 8080);
  EXPECT_EQ(url.value().target, "/mcp?x=1");
  EXPECT_EQ(ParseMcpUrl("http://127.0.0.1:9").value().target, "/");
  EXPECT_FALSE(ParseMcpUrl("https://127.0.0.1:8080/mcp"));
  EXPECT_FALSE(ParseMcpUrl("http://127.0.0.1/mcp"));
  EXPECT_FALSE(ParseMcpUrl("http://127.0.0.1:0/mcp"));
  EXPECT_FALSE(ParseMcpUrl("http://127.0.0.1:70000/mcp"));
}

TEST(McpProtocolTest, ReadsTheDataOfEachEvent) {
  const std::string body =
      "event: message\ndata: {\"a\":1}\n\n: comment\n\nid: 7\ndata: line1\r\ndata: line2\r\n\r\n"
      "retry: 10\n\ndata:{\"last\":true}";
  EXPECT_EQ(SseEventData(body),
            (std::vector<std::string>{"{\"a\":1}", "line1\nline2", "{\"last\":true}"}));
  EXPECT_TRUE(SseEventData("").empty());
}

TEST(McpProtocolTest, ClassifiesMessages) {
  auto response = ClassifyMessage(json::parse(R"({"jsonrpc":"2.0","id":4,"result":{}})"));
  ASSERT_TRUE(response);
  EXPECT_EQ(response.value().kind, JsonRpcMessage::Kind::kResponse);
  EXPECT_EQ(response.value().id, 4);
  auto request = ClassifyMessage(json::parse(R"({"jsonrpc":"2.0","id":"s1","method":"ping"})"));
  ASSERT_TRUE(request);
  EXPECT_EQ(request.value().kind, JsonRpcMessage::Kind::kRequest);
  EXPECT_EQ(json::value(AnswerServerRequest(request.value())),
            json::parse(R"({"jsonrpc":"2.0","id":"s1","result":{}})"));
  auto note = ClassifyMessage(json::parse(R"({"jsonrpc":"2.0","method":"notifications/x"})"));
  ASSERT_TRUE(note);
  EXPECT_EQ(note.value().kind, JsonRpcMessage::Kind::kNotification);
  EXPECT_FALSE(ClassifyMessage(json::parse(R"({"jsonrpc":"2.0","id":1})")));
  EXPECT_FALSE(ClassifyMessage(json::parse(R"({"jsonrpc":"2.0","id":1,"result":1,"error":{}})")));
  EXPECT_FALSE(ClassifyMessage(json::parse(R"({"id":1,"result":{}})")));
  EXPECT_FALSE(ClassifyMessage(json::parse("[1]")));
}

TEST(McpProtocolTest, RepliesFromResponses) {
  McpReply ok = ReplyFromResponse(json::parse(R"({"jsonrpc":"2.0","id":1,"result":{"x":1}})"), "s");
  EXPECT_EQ(ok.status, McpReply::Status::kResult);
  EXPECT_EQ(ok.result, json::parse(R"({"x":1})"));
  McpReply error = ReplyFromResponse(
      json::parse(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool"}})"), "s");
  EXPECT_EQ(error.status, McpReply::Status::kError);
  EXPECT_EQ(error.error_code, -32602);
  EXPECT_NE(error.message.find("unknown tool"), std::string::npos);
  McpReply bad = ReplyFromResponse(json::parse(R"({"jsonrpc":"2.0","id":1,"error":"x"})"), "s");
  EXPECT_EQ(bad.status, McpReply::Status::kUnknown);
  EXPECT_EQ(bad.reason, "bad_reply");
  EXPECT_EQ(JsonRpcErrorCodeName(-32603), "mcp_internal_error");
  EXPECT_EQ(JsonRpcErrorCodeName(-32001), "mcp_error_-32001");
}

TEST(McpProtocolTest, ChecksTheInitializeResult) {
  EXPECT_EQ(CheckInitializeResult(json::parse(
                R"({"protocolVersion":"2025-03-26","capabilities":{"tools":{}}})")).value(),
            "2025-03-26");
  EXPECT_FALSE(CheckInitializeResult(json::parse(R"({"protocolVersion":"x","capabilities":{}})")));
  EXPECT_FALSE(CheckInitializeResult(json::parse(R"({"capabilities":{"tools":{}}})")));
}

}  // namespace
}  // namespace reckon::tools
