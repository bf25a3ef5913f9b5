// OtlpSpan: one finished span as the OTLP exporter sends it, in OpenTelemetry's data model
// (trace and span ids as lowercase hex, times in Unix nanoseconds, typed attributes, timed
// events). A plain value: the trace sink (telemetry/otlp_trace_sink.h) builds it on the engine
// loop and hands it to the exporter's thread (telemetry/otlp_exporter.h), which encodes it
// (telemetry/otlp_json.h). It holds only what the trace lines may hold (telemetry/trace_lines.h):
// never an input, a result or a secret field.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace reckon {

// An attribute value: OTLP's stringValue, intValue or boolValue. (A struct, not a variant:
// GCC 12 warns falsely on moving such variants.)
struct OtlpValue {
  enum class Kind { kString, kInt, kBool };
  OtlpValue(std::string value) : kind(Kind::kString), text(std::move(value)) {}
  OtlpValue(const char* value) : kind(Kind::kString), text(value) {}
  OtlpValue(std::int64_t value) : kind(Kind::kInt), number(value) {}
  OtlpValue(bool value) : kind(Kind::kBool), flag(value) {}

  Kind kind;
  std::string text;
  std::int64_t number = 0;
  bool flag = false;
};
using OtlpAttributes = std::vector<std::pair<std::string, OtlpValue>>;

struct OtlpEvent {
  std::int64_t time_unix_ns = 0;
  std::string name;  // the trace line's name: "operation.attempted", "approval.granted"
  OtlpAttributes attributes;
};

struct OtlpSpan {
  std::string trace_id;        // 32 hex characters (16 bytes)
  std::string span_id;         // 16 hex characters (8 bytes)
  std::string parent_span_id;  // 16 hex characters, or empty for a root span
  std::string name;
  std::int64_t start_unix_ns = 0;
  std::int64_t end_unix_ns = 0;  // >= start_unix_ns
  OtlpAttributes attributes;
  std::vector<OtlpEvent> events;  // in journal order, so in time order
  bool error = false;             // OTLP status code ERROR (else UNSET)
  std::string status_message;     // with error: the failure code, never a message body
};

}  // namespace reckon
