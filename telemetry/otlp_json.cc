#include "reckon/telemetry/otlp_json.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>


namespace reckon {
namespace {

namespace json = boost::json;

json::object Value(const OtlpValue& value) {
  switch (value.kind) {
    case OtlpValue::Kind::kString:
      return {{"stringValue", value.text}};
    case OtlpValue::Kind::kBool:
      return {{"boolValue", value.flag}};
    case OtlpValue::Kind::kInt:
      break;
  }
  return {{"intValue", std::to_string(value.number)}};
}

json::array Attributes(const OtlpAttributes& attributes) {
  json::array out;
  out.reserve(attributes.size());
  for (const auto& [key, value] : attributes) {
    out.push_back(json::object{{"key", key}, {"value", Value(value)}});
  }
  return out;
}

json::object Span(const OtlpSpan& span) {
  json::object out;
  out["traceId"] = span.trace_id;
  out["spanId"] = span.span_id;
  if (!span.parent_span_id.empty()) out["parentSpanId"] = span.parent_span_id;
  out["name"] = span.name;
  out["kind"] = 1;  // SPAN_KIND_INTERNAL: the engine's own work (GenAI execute_tool spans)
  out["startTimeUnixNano"] = std::to_string(span.start_unix_ns);
  out["endTimeUnixNano"] = std::to_string(span.end_unix_ns);
  out["attributes"] = Attributes(span.attributes);
  json::array events;
  events.reserve(span.events.size());
  for (const OtlpEvent& event : span.events) {
    events.push_back(json::object{{"timeUnixNano", std::to_string(event.time_unix_ns)},
                                  {"name", event.name},
                                  {"attributes", Attributes(event.attributes)}});
  }
  out["events"] = std::move(events);
  json::object status{{"code", span.error ? 2 : 0}};
  if (!span.status_message.empty()) status["message"] = span.status_message;
  out["status"] = std::move(status);
  return out;
}

}  // namespace

std::string OtlpTracesJson(const OtlpResource& resource, std::span<const OtlpSpan> spans) {
  json::array encoded;
  encoded.reserve(spans.size());
  for (const OtlpSpan& span : spans) encoded.push_back(Span(span));
  json::object scope{{"name", "reckon"}};
  if (!resource.scope_version.empty()) scope["version"] = resource.scope_version;
  json::object scope_spans{{"scope", std::move(scope)}, {"spans", std::move(encoded)}};
  json::object attributes{
      {"attributes", Attributes({{"service.name", OtlpValue(resource.service_name)}})}};
  json::object resource_spans{{"resource", std::move(attributes)},
                              {"scopeSpans", json::array{std::move(scope_spans)}}};
  return json::serialize(json::object{{"resourceSpans", json::array{std::move(resource_spans)}}});
}

}  // namespace reckon
