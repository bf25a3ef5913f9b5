// McpClient: the MCP requests Reckon makes of a server, over one transport it owns
// (stdio_transport.h, http_transport.h): the tool catalog (tools/list, every page) and tool
// calls (tools/call, the operation id in _meta). The lifecycle (initialize,
// notifications/initialized, restarts, new sessions) is the transport's.
//
// Thread-safety as McpTransport: one executor; calls may overlap. The client must outlive
// every call in flight.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <memory>
#include <string>
#include <string_view>

#include "reckon/base/error.h"
#include "reckon/tools/mcp/mcp_transport.h"

namespace reckon::tools {

// Where the server is: a command line to spawn (stdio) or a URL (Streamable HTTP).
struct McpServerAddress {
  std::string command;  // 'COMMAND ARGS' (stdio_transport.h, SplitCommandLine)
  std::string url;      // http://HOST:PORT/PATH

  std::string Describe() const { return url.empty() ? "stdio '" + command + "'" : url; }
};

class McpClient {
 public:
  using Deadline = McpTransport::Deadline;

  explicit McpClient(std::unique_ptr<McpTransport> transport);

  // A client over the transport `address` names (exactly one of command and url set).
  // Errc::kInvalidArgument for a bad command line or URL, or none or both given. Connects
  // nothing: the first request does.
  static Result<std::unique_ptr<McpClient>> Open(boost::asio::any_io_executor executor,
                                                 const McpServerAddress& address);

  // The whole catalog, {"tools": [...]}: tools/list, following nextCursor (at most 1000
  // pages). A page whose request was not sent or whose answer was lost (a server that died,
  // say) is asked for again, up to four times in all: listing has no effect. Errc::kUnavailable when the server cannot be reached or answers an error (the
  // message names the server and says what happened), Errc::kInvalidArgument when a page is
  // not a tools/list result.
  boost::asio::awaitable<Result<boost::json::value>> ListTools(Deadline deadline);

  // tools/call {"name", "arguments", "_meta": {"dev.reckon/operation-id": operation_id}}.
  boost::asio::awaitable<McpReply> CallTool(std::string name, boost::json::object arguments,
                                            std::string operation_id, Deadline deadline);

  McpTransport& transport() { return *transport_; }
  const std::string& name() const { return transport_->name(); }

 private:
  std::unique_ptr<McpTransport> transport_;
};

}  // namespace reckon::tools
