// The MCP wire vocabulary the client needs, as pure functions: JSON-RPC 2.0 messages, the
// initialize handshake, Server-Sent Events bodies, and McpReply, the one value every transport
// returns for a request, which says whether the request can have reached the server.
//
// MCP messages are JSON-RPC 2.0 (https://modelcontextprotocol.io, revision 2025-06-18): a
// request {"jsonrpc": "2.0", "id", "method", "params"?}, its response {"jsonrpc": "2.0", "id",
// "result"} or {"jsonrpc": "2.0", "id", "error": {"code", "message", "data"?}}, and
// notifications (a request without an id, never answered).
//
// Stateless and thread-safe.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/contract/operation_id_facts.h"

namespace reckon::tools {

// The protocol revision the client asks for in `initialize`. A server that answers with
// another revision is accepted (the messages Reckon uses are the same in 2024-11-05,
// 2025-03-26 and 2025-06-18); the revision it answered is sent back in MCP-Protocol-Version.
inline constexpr std::string_view kMcpProtocolVersion = "2025-06-18";

// The `_meta` key under which every tools/call carries the operation id: the one the contract
// card names (contract/operation_id_facts.h).
inline constexpr std::string_view kOperationIdMetaKey = kMcpOperationIdMetaKey;

// What became of one JSON-RPC request. Transports (stdio_transport.h, http_transport.h) never
// fail in another way.
struct McpReply {
  enum class Status {
    kResult,   // the server answered with a result
    kError,    // the server answered with a JSON-RPC error
    kNotSent,  // the request provably never reached the server whole: nothing happened
    kRefused,  // the server refused it without processing it (Streamable HTTP: a 4xx)
    kUnknown,  // it was handed over and no usable answer came back: it may have run
  };
  Status status = Status::kUnknown;
  boost::json::value result;     // kResult
  std::int64_t error_code = 0;   // kError: the JSON-RPC error code
  // kNotSent / kRefused / kUnknown: a short token ("connection_refused", "not_started",
  // "deadline", "cancelled", "connection_lost", "bad_reply", "http_404"); kError: empty.
  std::string reason;
  std::string message;  // for people: what happened, naming the server
};

McpReply ReplyNotSent(std::string reason, std::string message);
McpReply ReplyUnknown(std::string reason, std::string message);

// {"jsonrpc": "2.0", "id": id, "method": method, "params": params}; params left out if empty.
boost::json::object JsonRpcRequest(std::int64_t id, std::string_view method,
                                   boost::json::object params);
boost::json::object JsonRpcNotification(std::string_view method, boost::json::object params);

// A message read from the server, by kind.
struct JsonRpcMessage {
  enum class Kind { kResponse, kRequest, kNotification };
  Kind kind = Kind::kNotification;
  std::optional<std::int64_t> id;  // kResponse/kRequest with an integer id; nullopt otherwise
  boost::json::value raw_id;       // the id as sent (a server request may use a string)
  std::string method;              // kRequest/kNotification
};

// Errc::kInvalidArgument if `message` is not a JSON-RPC 2.0 message (not an object, no
// "jsonrpc": "2.0", a response with neither or both of result and error, ...).
Result<JsonRpcMessage> ClassifyMessage(const boost::json::value& message);

// The McpReply a response carries: kResult, or kError with its code and message; a response
// that is not well formed is kUnknown with reason "bad_reply".
McpReply ReplyFromResponse(const boost::json::value& response, std::string_view server);

// The answer to a request the server sent the client: an empty result to "ping", else
// -32601 (method not found: Reckon offers no sampling, roots or elicitation).
boost::json::object AnswerServerRequest(const JsonRpcMessage& request);

// The `initialize` params: protocol version, no client capabilities, client info.
boost::json::object InitializeParams();
// Checks an initialize result: an object whose "capabilities" declares "tools". Returns the
// protocol version the server chose. Errc::kFailedPrecondition naming what is wrong.
Result<std::string> CheckInitializeResult(const boost::json::value& result);

// The data of each event in a text/event-stream body, in order (multi-line data joined by
// '\n'; comments, ids, retry fields and events without data left out).
std::vector<std::string> SseEventData(std::string_view body);

// The name a JSON-RPC error code is reported under in AttemptOutcome::code:
// -32700 mcp_parse_error, -32600 mcp_invalid_request, -32601 mcp_method_not_found,
// -32602 mcp_invalid_params, -32603 mcp_internal_error, any other mcp_error_<code>
// ("mcp_error_-32001").
std::string JsonRpcErrorCodeName(std::int64_t code);

}  // namespace reckon::tools
