#include "reckon/tools/mcp/mcp_protocol.h"

#include <boost/json/serialize.hpp>

namespace reckon::tools {
namespace json = boost::json;

McpReply ReplyNotSent(std::string reason, std::string message) {
  McpReply reply;
  reply.status = McpReply::Status::kNotSent;
  reply.reason = std::move(reason);
  reply.message = std::move(message);
  return reply;
}

McpReply ReplyUnknown(std::string reason, std::string message) {
  McpReply reply;
  reply.status = McpReply::Status::kUnknown;
  reply.reason = std::move(reason);
  reply.message = std::move(message);
  return reply;
}

json::object JsonRpcRequest(std::int64_t id, std::string_view method, json::object params) {
  json::object request{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.empty()) request["params"] = std::move(params);
  return request;
}

json::object JsonRpcNotification(std::string_view method, json::object params) {
  json::object notification{{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.empty()) notification["params"] = std::move(params);
  return notification;
}

Result<JsonRpcMessage> ClassifyMessage(const json::value& message) {
  const json::object* object = message.if_object();
  if (object == nullptr) return Err(Errc::kInvalidArgument, "a JSON-RPC message must be an object");
  const json::value* version = object->if_contains("jsonrpc");
  if (version == nullptr || !version->is_string() || version->as_string() != "2.0") {
    return Err(Errc::kInvalidArgument, "a JSON-RPC message needs \"jsonrpc\": \"2.0\"");
  }
  JsonRpcMessage out;
  const json::value* id = object->if_contains("id");
  if (id != nullptr) {
    out.raw_id = *id;
    if (id->is_int64()) out.id = id->as_int64();
    if (id->is_uint64() && id->as_uint64() <= INT64_MAX) out.id = static_cast<std::int64_t>(id->as_uint64());
  }
  const json::value* method = object->if_contains("method");
  if (method != nullptr) {
    if (!method->is_string()) return Err(Errc::kInvalidArgument, "\"method\" must be a string");
    out.method = std::string(method->as_string());
    out.kind = id != nullptr ? JsonRpcMessage::Kind::kRequest : JsonRpcMessage::Kind::kNotification;
    return out;
  }
  const bool has_result = object->contains("result");
  const bool has_error = object->contains("error");
  if (id == nullptr || has_result == has_error) {
    return Err(Errc::kInvalidArgument,
               "a JSON-RPC response needs an id and exactly one of \"result\" and \"error\"");
  }
  out.kind = JsonRpcMessage::Kind::kResponse;
  return out;
}

McpReply ReplyFromResponse(const json::value& response, std::string_view server) {
  const std::string where = "MCP server " + std::string(server);
  const json::object& object = response.as_object();
  if (const json::value* result = object.if_contains("result")) {
    McpReply reply;
    reply.status = McpReply::Status::kResult;
    reply.result = *result;
    return reply;
  }
  const json::value& error = object.at("error");
  const json::value* code = error.is_object() ? error.as_object().if_contains("code") : nullptr;
  if (code == nullptr || !code->is_int64()) {
    return ReplyUnknown("bad_reply", where + " answered an error without an integer code: " +
                                         json::serialize(error));
  }
  McpReply reply;
  reply.status = McpReply::Status::kError;
  reply.error_code = code->as_int64();
  const json::value* message = error.as_object().if_contains("message");
  reply.message = where + ": JSON-RPC error " + std::to_string(reply.error_code) +
                  (message != nullptr && message->is_string()
                       ? ": " + std::string(message->as_string())
                       : std::string());
  return reply;
}

json::object AnswerServerRequest(const JsonRpcMessage& request) {
  if (request.method == "ping") {
    return json::object{{"jsonrpc", "2.0"}, {"id", request.raw_id}, {"result", json::object{}}};
  }
  return json::object{
      {"jsonrpc", "2.0"},
      {"id", request.raw_id},
      {"error", json::object{{"code", -32601},
                             {"message", "the Reckon MCP client offers no '" + request.method +
                                             "' (no sampling, roots or elicitation)"}}}};
}

json::object InitializeParams() {
  return json::object{{"protocolVersion", kMcpProtocolVersion},
                      {"capabilities", json::object{}},
                      {"clientInfo", json::object{{"name", "reckon"}, {"version", "0.1"}}}};
}

Result<std::string> CheckInitializeResult(const json::value& result) {
  const json::object* object = result.if_object();
  if (object == nullptr) return Err(Errc::kFailedPrecondition, "initialize: the result is not an object");
  const json::value* capabilities = object->if_contains("capabilities");
  if (capabilities == nullptr || !capabilities->is_object() ||
      !capabilities->as_object().contains("tools")) {
    return Err(Errc::kFailedPrecondition,
               "initialize: the server does not declare the \"tools\" capability; it offers no "
               "tools Reckon could host");
  }
  const json::value* version = object->if_contains("protocolVersion");
  if (version == nullptr || !version->is_string()) {
    return Err(Errc::kFailedPrecondition, "initialize: no protocolVersion in the result");
  }
  return std::string(version->as_string());
}

std::vector<std::string> SseEventData(std::string_view body) {
  std::vector<std::string> events;
  std::string data;
  bool has_data = false;
  auto dispatch = [&] {
    if (has_data) events.push_back(data);
    data.clear();
    has_data = false;
  };
  std::size_t pos = 0;
  while (pos <= body.size()) {
    std::size_t end = body.find('\n', pos);
    const bool last = end == std::string_view::npos;
    std::string_view line = body.substr(pos, last ? std::string_view::npos : end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) {
      dispatch();
    } else if (line.substr(0, 5) == "data:") {
      std::string_view value = line.substr(5);
      if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      if (has_data) data += '\n';
      data += value;
      has_data = true;
    }
    if (last) break;
    pos = end + 1;
  }
  dispatch();
  return events;
}

std::string JsonRpcErrorCodeName(std::int64_t code) {
  switch (code) {
    case -32700: return "mcp_parse_error";
    case -32600: return "mcp_invalid_request";
    case -32601: return "mcp_method_not_found";
    case -32602: return "mcp_invalid_params";
    case -32603: return "mcp_internal_error";
    default: return "mcp_error_" + std::to_string(code);
  }
}

}  // namespace reckon::tools
