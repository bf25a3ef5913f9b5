// HttpTransport: an MCP server reached over Streamable HTTP (MCP 2025-06-18). Each JSON-RPC
// message is one POST to the server's URL, with Accept: application/json, text/event-stream;
// the server answers a request with a JSON body, or with an event stream whose events carry
// JSON-RPC messages, the response among them. The stream is read to its end (the server ends
// it after the response, as the spec says it should), then searched for the response.
//
// Session. The first request runs the handshake (initialize, then notifications/initialized);
// the Mcp-Session-Id header the server gives then goes on every later request, with
// MCP-Protocol-Version. A 404 to a request that carried a session id means the server ended
// the session (a restart, say) and did not process the request: the transport initializes a
// new session and sends the request once more.
//
// What each answer means (McpReply, mcp_protocol.h):
//   the request never reached the server whole (connection refused, failed before the last
//   byte, deadline or cancellation before sending)           kNotSent   (the HTTP client's
//                                                                        http_not_sent)
//   HTTP 429                                                 kNotSent   reason "http_429"
//   other 4xx                                                kRefused   the server refused it
//   sent, then the connection broke, the deadline passed, the call was cancelled, a 5xx or
//   another status, a body that is not a JSON-RPC response, or an event stream without the
//   response                                                 kUnknown
//   200 with the response                                    kResult / kError
//
// The connection itself is tools/http/http_client.h: one plain-HTTP TCP connection per message
// to the URL's host (a name, resolved on every call, or an IP address). Thread-safety as
// McpTransport. Two first requests that overlap may each initialize a session; the last one to
// finish is kept.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "reckon/base/error.h"
#include "reckon/tools/http/http_url.h"
#include "reckon/tools/mcp/mcp_transport.h"

namespace reckon::tools {

// An MCP endpoint: a URL as tools/http/http_url.h parses it.
using McpUrl = HttpUrl;

// "http://127.0.0.1:8080/mcp" -> {127.0.0.1, 8080, /mcp}: ParseHttpUrl, with the port required.
// Errc::kInvalidArgument for another scheme (https is not supported yet), a missing or bad
// port, or no host.
Result<McpUrl> ParseMcpUrl(std::string_view url);

class HttpTransport final : public McpTransport {
 public:
  explicit HttpTransport(McpUrl url, std::string name);

  boost::asio::awaitable<McpReply> Request(std::string method, boost::json::object params,
                                           Deadline deadline) override;
  const std::string& name() const override { return name_; }

  // How many sessions were initialized so far.
  int sessions() const { return sessions_; }

 private:
  struct Posted;
  boost::asio::awaitable<Posted> Post(boost::json::object message, bool expect_response,
                                      Deadline deadline);
  boost::asio::awaitable<McpReply> Initialize(Deadline deadline);

  McpUrl url_;
  std::string name_;
  bool initialized_ = false;
  std::string session_id_;        // empty: the server uses no sessions
  std::string protocol_version_;  // what the server answered in initialize
  std::int64_t next_id_ = 1;
  int sessions_ = 0;
};

}  // namespace reckon::tools
