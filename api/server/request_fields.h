// Reading and checking the fields of a request: what both API handlers (client_api.h,
// worker_api.h) share. Pure functions.
#pragma once

#include <string>
#include <string_view>

#include "reckon/protocol/reckon.capnp.h"
#include "reckon/protocol/wire_convert.h"
#include "reckon/base/error.h"

namespace reckon::api {

// `text` as a string; Errc::kInvalidArgument naming `field` when it is empty.
inline Result<std::string> RequiredText(capnp::Text::Reader text, std::string_view field) {
  if (text.size() == 0) {
    return Err(Errc::kInvalidArgument, std::string(field) + " is required and was empty");
  }
  return Str(text);
}

// Checks every identifier and text the request carries against its rule (base/identifier.h;
// the table is in docs/PROTOCOL.md, "Identifiers and texts"): the identifiers a method
// requires (workflowId, workflowType, a signal's name, workerId, a resolution's operationId)
// even when empty, the optional ones (definitionHash, a decision's ids and hash, decidedBy,
// resolvedBy, the tool filter) when given, and texts (reasons, notes, providerRef) always.
// Errc::kInvalidArgument names the wire field ("workflowId 'a\x0ab' is not valid: ..."). The
// handlers call it first, so a refused request changes nothing and journals nothing. Payloads
// (JSON inputs, outputs, commands) are the engine's to check.
Result<void> ValidateRequestFields(wire::Request::Method::Reader method);

}  // namespace reckon::api
