// What an MCP tool call came to, in the engine's terms: a tools/call reply (McpReply,
// mcp_protocol.h) becomes an AttemptOutcome under the tool's contract, and a lookup's reply a
// reconciliation verdict under its binding (mcp_contracts.h). docs/TOOLS.md, section 3 has the table.
//
// Attempt outcomes, by reply:
//   result, isError absent or false    success. Output: structuredContent if present; else the
//                                      text content (the text items joined) parsed as JSON if
//                                      it is JSON; else {"text": <the text>}. provider_ref: the
//                                      binding's provider_ref_field of the output, if a string
//                                      or a number.
//   result, isError true               failure with code C, read from structuredContent.code;
//                                      else from the text content parsed as a JSON object's
//                                      "code"; else "mcp_tool_error". C in the contract's
//                                      definitive_codes -> definitive, in retry.retryable_codes
//                                      -> retryable, in unknown_codes -> unknown; any other
//                                      code -> unknown (the tool ran and failed in a way its
//                                      contract does not explain: for a write it may have
//                                      acted).
//   JSON-RPC error                     code mcp_parse_error (-32700), mcp_invalid_request
//                                      (-32600), mcp_method_not_found (-32601),
//                                      mcp_invalid_params (-32602, MCP's "unknown tool" and
//                                      "invalid arguments"): definitive, the server refused the
//                                      request before running any tool. mcp_internal_error
//                                      (-32603) and every other code (mcp_error_<n>): unknown.
//                                      The contract's lists apply first, as for isError codes.
//   not sent (dead server, refused     retryable, code mcp_not_sent (the message says why).
//   connection, failed start, HTTP     A non_repeatable_write retries it only if its contract
//   429)                               lists mcp_not_sent in retry.retryable_codes (contract/
//                                      failure_policy.h): list it.
//   refused (HTTP 4xx)                 definitive, code mcp_http_<status> (lists apply first)
//   unknown                            unknown, code mcp_<reason>: mcp_deadline,
//                                      mcp_cancelled, mcp_connection_lost, mcp_bad_reply (a
//                                      reply that is not JSON-RPC, or a result that is not an
//                                      object), mcp_http_<status> (5xx). Never reclassified.
//
// Lookup verdicts: a result with isError false whose status_field holds one of `committed` ->
// committed (output: output_field of the lookup's output, or all of it; provider_ref:
// provider_ref_field); one of `not_found` -> not_found; an isError result whose code is one of
// not_found_codes -> not_found; anything else (another value, a missing field, another error,
// no answer) -> still_unknown, which never allows a retry.
//
// Pure; thread-safe.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string>

#include "reckon/contract/contract.h"
#include "reckon/engine/tool_dispatcher.h"
#include "reckon/tools/mcp/mcp_contracts.h"
#include "reckon/tools/mcp/mcp_protocol.h"

namespace reckon::tools {

// A CallToolResult's output as a JSON value (see above).
boost::json::value McpCallOutput(const boost::json::object& result);

// The code of an isError result (see above).
std::string McpErrorCode(const boost::json::object& result);

AttemptOutcome McpAttemptOutcome(const ToolContract& contract, const McpToolBinding& binding,
                                 const McpReply& reply);

ReconcileOutcome McpLookupOutcome(const McpLookupBinding& lookup, const McpReply& reply);

}  // namespace reckon::tools
