// The OTLP/HTTP JSON encoding of a batch of spans: the body of POST {endpoint}/v1/traces
// (Content-Type application/json), per OpenTelemetry's protobuf-JSON mapping:
//
//   {"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":..}}]},
//     "scopeSpans":[{"scope":{"name":"reckon","version":..},"spans":[{"traceId":hex32,
//       "spanId":hex16,"parentSpanId":hex16?,"name":..,"kind":1,"startTimeUnixNano":"..",
//       "endTimeUnixNano":"..","attributes":[..],"events":[{"timeUnixNano":"..","name":..,
//       "attributes":[..]}],"status":{"code":0|2,"message":..}}]}]}]}
//
// Ids stay hex strings (the mapping's exception to base64 for bytes); 64-bit integers (times,
// intValue) are decimal strings. Pure and thread-safe.
#pragma once

#include <span>
#include <string>

#include "reckon/telemetry/otlp_span.h"

namespace reckon {

struct OtlpResource {
  std::string service_name = "reckon";
  std::string scope_version;  // the instrumentation scope's version; empty: omitted
};

std::string OtlpTracesJson(const OtlpResource& resource, std::span<const OtlpSpan> spans);

}  // namespace reckon
