// Reading a Request out of a frame, as the server does before any handler sees it: the root is
// read and every pointer of the message walked once, within the frame limits' traversal and
// nesting limits, so that a malformed message is refused here rather than half-way through a
// handler. Request id 0 is refused too: it is the server's close reason (close_reason.h).
//
// The framing itself (segment table, sizes, limits) is checked before, by FrameStream or
// ParseFrame (protocol/frame.h). The fields are checked after, by ValidateRequestFields
// (request_fields.h), which the Service calls before any handler runs.
//
// Pure; thread-safe as long as each thread has its own reader.
#pragma once

#include <capnp/serialize.h>

#include "reckon/protocol/reckon.capnp.h"
#include "reckon/base/error.h"

namespace reckon::api {

// The request `reader` holds. Errc::kInvalidArgument ("malformed request: ..." with Cap'n
// Proto's description, or the reserved id) when it cannot be served; the connection is then
// closed. The Reader points into `reader`'s frame: both must outlive it.
Result<wire::Request::Reader> DecodeRequest(capnp::FlatArrayMessageReader& reader);

}  // namespace reckon::api
