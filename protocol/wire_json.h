// JSON views of wire replies, shared by `reckon ... --json` and the HTTP API
// (docs/HTTP_API.md): the wire's field names in snake_case, times in microseconds.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <capnp/common.h>

#include <string>
#include <string_view>

#include "reckon/protocol/reckon.capnp.h"
#include "reckon/base/error.h"

namespace reckon::api {

boost::json::object SummaryJson(wire::WorkflowSummary::Reader summary);

// One operation of a run's detail; "input" is the redacted input, parsed.
boost::json::object OperationJson(wire::OperationInfo::Reader operation);

// A journaled event's payload (one EventPayload of storage/events.capnp, flat-array encoded)
// as JSON text, {"<eventType>": {...}}. Errc::kCorruption if it is not a whole message.
Result<std::string> EventPayloadJson(capnp::Data::Reader payload);

// The same, as the inner object (the event's fields); an empty object for an empty payload.
Result<boost::json::value> EventFieldsJson(capnp::Data::Reader payload);

// JSON text carried in a wire field, parsed: null when empty, the text itself as a string
// when it is not JSON (it always is when the server wrote it).
boost::json::value ParsedJsonField(std::string_view text);

}  // namespace reckon::api
