#include "reckon/protocol/failure_kind_wire.h"

#include <string>

namespace reckon::api {

wire::FailureKind FailureKindToWire(FailureKind kind) {
  switch (kind) {
    case FailureKind::kDefinitive: return wire::FailureKind::DEFINITIVE;
    case FailureKind::kRetryable: return wire::FailureKind::RETRYABLE;
    case FailureKind::kUnknown: return wire::FailureKind::UNKNOWN;
  }
  return wire::FailureKind::UNKNOWN;
}

FailureKind FailureKindFromWire(wire::FailureKind kind) {
  switch (kind) {
    case wire::FailureKind::DEFINITIVE: return FailureKind::kDefinitive;
    case wire::FailureKind::RETRYABLE: return FailureKind::kRetryable;
    default: return FailureKind::kUnknown;  // unknown values stay safe
  }
}

Result<FailureKind> ParseFailureKind(std::string_view name) {
  for (FailureKind kind :
       {FailureKind::kDefinitive, FailureKind::kRetryable, FailureKind::kUnknown}) {
    if (name == FailureKindName(kind)) return kind;
  }
  return Err(Errc::kInvalidArgument,
             "failure kind '" + std::string(name) + "' is not definitive, retryable or unknown");
}

}  // namespace reckon::api
