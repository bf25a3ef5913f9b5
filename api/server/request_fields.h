// Reading and checking the fields of a request: what the handlers (client_api.h,
// worker_api.h, auth_api.h) share. Pure functions.
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
// the table is in docs/PROTOCOL.md, "Identifiers and texts"): the checks of the method's row
// in the method table (methods.h), which says per method which identifiers are required (even
// when empty), which are checked when given, and which texts are checked always.
// Errc::kInvalidArgument names the wire field ("workflowId 'a\x0ab' is not valid: ..."). The
// Service calls it before the handler, so a refused request changes nothing and journals
// nothing. A method this build does not know has no fields to check (it is refused by the
// Service). Payloads (JSON inputs, outputs, commands) are the engine's to check.
Result<void> ValidateRequestFields(wire::Request::Method::Reader method);

}  // namespace reckon::api
