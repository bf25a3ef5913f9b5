// ParseOtlpTraces: reads an OTLP/HTTP JSON traces body the way a collector would, checking its
// structure on the way, for tests: resourceSpans[] each with resource.attributes (holding
// service.name) and scopeSpans[] each with scope.name and spans[]; every span with a 32-hex
// (16-byte) non-zero traceId, a 16-hex (8-byte) spanId, a 16-hex parentSpanId or none, a name,
// a kind, start and end times as decimal strings with start <= end, typed attributes
// ({key, value:{stringValue|intValue|boolValue|doubleValue}}) and events whose times are in
// order and within the span. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "reckon/base/error.h"

namespace reckon::testing {

struct ParsedOtlpEvent {
  std::int64_t time_unix_ns = 0;
  std::string name;
  std::map<std::string, std::string> attributes;  // every value as text
};

struct ParsedOtlpSpan {
  std::string service_name;
  std::string trace_id;
  std::string span_id;
  std::string parent_span_id;  // empty for a root
  std::string name;
  std::int64_t start_unix_ns = 0;
  std::int64_t end_unix_ns = 0;
  int status_code = 0;
  std::map<std::string, std::string> attributes;  // every value as text
  std::vector<ParsedOtlpEvent> events;
};

// The spans of `body`, or kInvalidArgument naming the first thing that is not OTLP JSON.
Result<std::vector<ParsedOtlpSpan>> ParseOtlpTraces(std::string_view body);

}  // namespace reckon::testing
