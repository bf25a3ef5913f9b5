// McpTransport: one way to reach an MCP server (stdio_transport.h, http_transport.h). A
// transport owns the connection or process, runs the initialize handshake itself (once per
// server process or session, again after the server was restarted or the session was lost),
// and turns every request into an McpReply that says whether the request can have reached the
// server (mcp_protocol.h).
//
// Thread-safety: a transport belongs to the executor it was made with; call it only from
// coroutines on that executor. Calls may overlap (their JSON-RPC ids differ). The transport
// must outlive every call in flight.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <string>

#include "reckon/tools/mcp/mcp_protocol.h"

namespace reckon::tools {

class McpTransport {
 public:
  using Deadline = std::chrono::steady_clock::time_point;

  virtual ~McpTransport() = default;

  // Sends one request in an initialized session and waits for its response until `deadline`
  // or a terminal cancellation of the awaiting coroutine. Never throws for a failure of the
  // server or the connection: that is the McpReply's status. A request that provably was not
  // sent because the server was found dead is sent again once, after a restart or a new
  // session; nothing else is ever sent twice.
  virtual boost::asio::awaitable<McpReply> Request(std::string method,
                                                   boost::json::object params,
                                                   Deadline deadline) = 0;

  // For messages and logs: "stdio 'python3 server.py'", "http://127.0.0.1:8080/mcp".
  virtual const std::string& name() const = 0;
};

}  // namespace reckon::tools
