#include "reckon/tools/mcp/mcp_outcome.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>

#include "reckon/contract/field_path.h"
#include "reckon/worker/tool.h"

namespace reckon::tools {
namespace json = boost::json;

namespace {

bool Listed(const std::vector<std::string>& codes, const std::string& code) {
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

// The contract's lists first; `fallback` for a code none of them names.
FailureKind Classify(const ToolContract& contract, const std::string& code, FailureKind fallback) {
  if (Listed(contract.unknown_codes, code)) return FailureKind::kUnknown;
  if (Listed(contract.definitive_codes, code)) return FailureKind::kDefinitive;
  if (Listed(contract.retry.retryable_codes, code)) return FailureKind::kRetryable;
  return fallback;
}

// The text items of a result's content, joined; nullopt when there are none.
std::optional<std::string> TextContent(const json::object& result) {
  const json::value* content = result.if_contains("content");
  if (content == nullptr || !content->is_array()) return std::nullopt;
  std::optional<std::string> text;
  for (const json::value& item : content->as_array()) {
    const json::object* object = item.if_object();
    if (object == nullptr) continue;
    const json::value* type = object->if_contains("type");
    const json::value* value = object->if_contains("text");
    if (type == nullptr || !type->is_string() || type->as_string() != "text" || value == nullptr ||
        !value->is_string()) {
      continue;
    }
    if (!text) text.emplace();
    *text += value->as_string();
  }
  return text;
}

std::string ScalarText(const json::value* value) {
  if (value == nullptr) return "";
  if (value->is_string()) return std::string(value->as_string());
  if (value->is_int64() || value->is_uint64()) return json::serialize(*value);
  return "";
}

}  // namespace

json::value McpCallOutput(const json::object& result) {
  if (const json::value* structured = result.if_contains("structuredContent");
      structured != nullptr && !structured->is_null()) {
    return *structured;
  }
  std::optional<std::string> text = TextContent(result);
  if (!text) return json::object{};
  boost::system::error_code ec;
  json::value parsed = json::parse(*text, ec);
  if (!ec) return parsed;
  return json::object{{"text", *text}};
}

std::string McpErrorCode(const json::object& result) {
  if (const json::value* structured = result.if_contains("structuredContent");
      structured != nullptr && structured->is_object()) {
    if (std::string code = ScalarText(structured->as_object().if_contains("code")); !code.empty()) {
      return code;
    }
  }
  if (std::optional<std::string> text = TextContent(result)) {
    boost::system::error_code ec;
    json::value parsed = json::parse(*text, ec);
    if (!ec && parsed.is_object()) {
      if (std::string code = ScalarText(parsed.as_object().if_contains("code")); !code.empty()) {
        return code;
      }
    }
  }
  return "mcp_tool_error";
}

AttemptOutcome McpAttemptOutcome(const ToolContract& contract, const McpToolBinding& binding,
                                 const McpReply& reply) {
  switch (reply.status) {
    case McpReply::Status::kResult: {
      const json::object* result = reply.result.if_object();
      if (result == nullptr) {
        return ToolFailed(FailureKind::kUnknown, "mcp_bad_reply",
                          "the tools/call result is not an object: " +
                              json::serialize(reply.result).substr(0, 200));
      }
      const json::value* is_error = result->if_contains("isError");
      if (is_error != nullptr && is_error->is_bool() && is_error->as_bool()) {
        const std::string code = McpErrorCode(*result);
        std::string message = "the tool answered isError with code '" + code + "'";
        if (std::optional<std::string> text = TextContent(*result)) {
          message += ": " + text->substr(0, 300);
        }
        return ToolFailed(Classify(contract, code, FailureKind::kUnknown), code, std::move(message));
      }
      json::value output = McpCallOutput(*result);
      std::string provider_ref;
      if (!binding.provider_ref_field.empty()) {
        provider_ref = ScalarText(FindField(output, binding.provider_ref_field));
      }
      return ToolSucceeded(std::move(output), std::move(provider_ref));
    }
    case McpReply::Status::kError: {
      const std::string code = JsonRpcErrorCodeName(reply.error_code);
      const bool refused = reply.error_code == -32700 || reply.error_code == -32600 ||
                           reply.error_code == -32601 || reply.error_code == -32602;
      return ToolFailed(
          Classify(contract, code, refused ? FailureKind::kDefinitive : FailureKind::kUnknown),
          code, reply.message);
    }
    case McpReply::Status::kNotSent:
      return ToolFailed(Classify(contract, "mcp_not_sent", FailureKind::kRetryable), "mcp_not_sent",
                        reply.message + " (" + reply.reason + ")");
    case McpReply::Status::kRefused: {
      const std::string code = "mcp_" + reply.reason;
      return ToolFailed(Classify(contract, code, FailureKind::kDefinitive), code, reply.message);
    }
    case McpReply::Status::kUnknown:
      break;
  }
  return ToolFailed(FailureKind::kUnknown, "mcp_" + reply.reason, reply.message);
}

ReconcileOutcome McpLookupOutcome(const McpLookupBinding& lookup, const McpReply& reply) {
  ReconcileOutcome out;
  out.verdict = ReconcileVerdict::kStillUnknown;
  const std::string who = "lookup '" + lookup.tool + "'";
  if (reply.status != McpReply::Status::kResult) {
    out.message = who + ": no answer: " + reply.message;
    return out;
  }
  const json::object* result = reply.result.if_object();
  if (result == nullptr) {
    out.message = who + ": the result is not an object";
    return out;
  }
  const json::value* is_error = result->if_contains("isError");
  if (is_error != nullptr && is_error->is_bool() && is_error->as_bool()) {
    const std::string code = McpErrorCode(*result);
    if (Listed(lookup.not_found_codes, code)) {
      out.verdict = ReconcileVerdict::kNotFound;
      out.message = who + ": error code '" + code + "' (listed in not_found_codes)";
    } else {
      out.message = who + ": error code '" + code + "', not in not_found_codes";
    }
    return out;
  }
  json::value output = McpCallOutput(*result);
  const std::string status = ScalarText(FindField(output, lookup.status_field));
  if (Listed(lookup.committed, status)) {
    out.verdict = ReconcileVerdict::kCommitted;
    if (!lookup.provider_ref_field.empty()) {
      out.provider_ref = ScalarText(FindField(output, lookup.provider_ref_field));
    }
    if (!lookup.output_field.empty()) {
      const json::value* part = FindField(output, lookup.output_field);
      out.output = part != nullptr ? *part : json::value(json::object{});
    } else {
      out.output = std::move(output);
    }
    out.message = who + ": " + lookup.status_field + " is '" + status + "'";
  } else if (Listed(lookup.not_found, status)) {
    out.verdict = ReconcileVerdict::kNotFound;
    out.message = who + ": " + lookup.status_field + " is '" + status + "'";
  } else {
    out.message = who + ": " + lookup.status_field + " is '" + status +
                  "', neither a committed nor a not_found value";
  }
  return out;
}

}  // namespace reckon::tools
