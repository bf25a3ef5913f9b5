#include "reckon/tools/mcp/mcp_client.h"

#include "reckon/tools/mcp/http_transport.h"
#include "reckon/tools/mcp/stdio_transport.h"

namespace reckon::tools {
namespace asio = boost::asio;
namespace json = boost::json;

McpClient::McpClient(std::unique_ptr<McpTransport> transport) : transport_(std::move(transport)) {}

Result<std::unique_ptr<McpClient>> McpClient::Open(asio::any_io_executor executor,
                                                   const McpServerAddress& address) {
  if (address.command.empty() == address.url.empty()) {
    return Err(Errc::kInvalidArgument,
               "name one MCP server: a command line (--mcp 'COMMAND ARGS') or a URL (--mcp-url)");
  }
  if (!address.url.empty()) {
    RECKON_TRY(McpUrl url, ParseMcpUrl(address.url));
    return std::make_unique<McpClient>(std::make_unique<HttpTransport>(url, address.url));
  }
  RECKON_TRY(std::vector<std::string> argv, SplitCommandLine(address.command));
  return std::make_unique<McpClient>(std::make_unique<StdioTransport>(executor, std::move(argv)));
}

asio::awaitable<Result<json::value>> McpClient::ListTools(Deadline deadline) {
  json::array tools;
  std::string cursor;
  for (int page = 0; page < 1000; ++page) {
    json::object params;
    if (!cursor.empty()) params["cursor"] = cursor;
    McpReply reply;
    // tools/list reads: a page whose answer was lost is asked for again (a server that died
    // is started again by the transport), a few times.
    for (int tries = 0; tries < 4; ++tries) {
      reply = co_await transport_->Request("tools/list", params, deadline);
      const bool lost = reply.status == McpReply::Status::kNotSent ||
                        reply.status == McpReply::Status::kUnknown;
      if (!lost || reply.reason == "deadline" || reply.reason == "cancelled") break;
    }
    if (reply.status != McpReply::Status::kResult) {
      co_return Err(Errc::kUnavailable, "tools/list: " + reply.message);
    }
    const json::object* result = reply.result.if_object();
    const json::value* listed = result != nullptr ? result->if_contains("tools") : nullptr;
    if (listed == nullptr || !listed->is_array()) {
      co_return Err(Errc::kInvalidArgument, "MCP server " + name() +
                                                ": tools/list: the result has no \"tools\" array");
    }
    for (const json::value& tool : listed->as_array()) tools.push_back(tool);
    const json::value* next = result->if_contains("nextCursor");
    if (next == nullptr || next->is_null()) co_return json::value(json::object{{"tools", std::move(tools)}});
    if (!next->is_string()) {
      co_return Err(Errc::kInvalidArgument, "MCP server " + name() +
                                                ": tools/list: nextCursor must be a string");
    }
    cursor = std::string(next->as_string());
  }
  co_return Err(Errc::kResourceExhausted,
                "MCP server " + name() + ": tools/list: more than 1000 pages; refusing to go on");
}

asio::awaitable<McpReply> McpClient::CallTool(std::string name, json::object arguments,
                                              std::string operation_id, Deadline deadline) {
  json::object params{{"name", std::move(name)},
                      {"arguments", std::move(arguments)},
                      {"_meta", json::object{{kOperationIdMetaKey, std::move(operation_id)}}}};
  co_return co_await transport_->Request("tools/call", std::move(params), deadline);
}

}  // namespace reckon::tools
