// Reading required fields of a request: what both API handlers (client_api.h, worker_api.h)
// share. Pure functions.
#pragma once

#include <string>
#include <string_view>

#include "reckon/api/protocol/wire_convert.h"
#include "reckon/base/error.h"

namespace reckon::api {

// `text` as a string; Errc::kInvalidArgument naming `field` when it is empty.
inline Result<std::string> RequiredText(capnp::Text::Reader text, std::string_view field) {
  if (text.size() == 0) {
    return Err(Errc::kInvalidArgument, std::string(field) + " is required and was empty");
  }
  return Str(text);
}

}  // namespace reckon::api
