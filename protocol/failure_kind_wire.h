// Failure kinds at the boundary: on the wire (wire::FailureKind) and by name, as the HTTP API
// and the CLI take them ("definitive", "retryable", "unknown": FailureKindName,
// contract/failure_policy.h). A wire value this release does not know reads as unknown, the
// safe kind. Pure functions; thread-safe.
#pragma once

#include <string_view>

#include "reckon/protocol/reckon.capnp.h"
#include "reckon/base/error.h"
#include "reckon/contract/failure_policy.h"

namespace reckon::api {

wire::FailureKind FailureKindToWire(FailureKind kind);
FailureKind FailureKindFromWire(wire::FailureKind kind);
// Errc::kInvalidArgument naming the three kinds for any other name.
Result<FailureKind> ParseFailureKind(std::string_view name);

}  // namespace reckon::api
