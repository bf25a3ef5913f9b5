#include "reckon/telemetry/testing/otlp_check.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <charconv>

namespace reckon::testing {

namespace json = boost::json;

namespace {

Error Bad(const std::string& where, const std::string& what) {
  return Err(Errc::kInvalidArgument, "not OTLP JSON: " + where + ": " + what);
}

bool IsHex(const json::value* value, std::size_t length) {
  if (value == nullptr || !value->is_string()) return false;
  const json::string& text = value->get_string();
  if (text.size() != length) return false;
  bool nonzero = false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    nonzero = nonzero || c != '0';
  }
  return nonzero;
}

Result<std::int64_t> Nanos(const json::object& object, const char* key, const std::string& where) {
  const json::value* value = object.if_contains(key);
  if (value == nullptr || !value->is_string()) {
    return Bad(where, std::string(key) + " must be a decimal string");
  }
  const json::string& text = value->get_string();
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n <= 0) {
    return Bad(where, std::string(key) + " is not a positive decimal: " + std::string(text));
  }
  return n;
}

const json::array* ArrayAt(const json::object& object, const char* key) {
  const json::value* value = object.if_contains(key);
  return value != nullptr && value->is_array() ? &value->get_array() : nullptr;
}

Result<std::map<std::string, std::string>> Attributes(const json::object& owner,
                                                      const std::string& where) {
  std::map<std::string, std::string> out;
  const json::value* value = owner.if_contains("attributes");
  if (value == nullptr) return out;
  if (!value->is_array()) return Bad(where, "attributes must be an array");
  for (const json::value& item : value->get_array()) {
    const json::object* kv = item.if_object();
    if (kv == nullptr || !kv->contains("key") || !kv->at("key").is_string()) {
      return Bad(where, "an attribute without a string key");
    }
    const std::string key(kv->at("key").get_string());
    const json::value* typed = kv->if_contains("value");
    if (typed == nullptr || !typed->is_object() || typed->get_object().size() != 1) {
      return Bad(where, "attribute " + key + ": value must hold exactly one typed field");
    }
    const auto& [kind, v] = *typed->get_object().begin();
    if (kind == "stringValue" && v.is_string()) {
      out[key] = std::string(v.get_string());
    } else if (kind == "intValue" && v.is_string()) {
      out[key] = std::string(v.get_string());
    } else if (kind == "boolValue" && v.is_bool()) {
      out[key] = v.get_bool() ? "true" : "false";
    } else if (kind == "doubleValue" && v.is_number()) {
      out[key] = json::serialize(v);
    } else {
      return Bad(where, "attribute " + key + ": unsupported value " + std::string(kind));
    }
  }
  return out;
}

Result<ParsedOtlpSpan> Span(const json::value& value, const std::string& service) {
  const json::object* span = value.if_object();
  if (span == nullptr) return Bad("span", "not an object");
  ParsedOtlpSpan out;
  out.service_name = service;
  if (!IsHex(span->if_contains("traceId"), 32)) return Bad("span", "traceId is not 32 hex");
  if (!IsHex(span->if_contains("spanId"), 16)) return Bad("span", "spanId is not 16 hex");
  out.trace_id = span->at("traceId").get_string();
  out.span_id = span->at("spanId").get_string();
  const std::string where = "span " + out.span_id;
  if (span->contains("parentSpanId")) {
    if (!IsHex(span->if_contains("parentSpanId"), 16)) return Bad(where, "bad parentSpanId");
    out.parent_span_id = span->at("parentSpanId").get_string();
  }
  const json::value* name = span->if_contains("name");
  if (name == nullptr || !name->is_string() || name->get_string().empty()) {
    return Bad(where, "no name");
  }
  out.name = name->get_string();
  const json::value* kind = span->if_contains("kind");
  if (kind == nullptr || !kind->is_int64() || kind->get_int64() < 0 || kind->get_int64() > 5) {
    return Bad(where, "kind must be a SpanKind number");
  }
  RECKON_TRY(out.start_unix_ns, Nanos(*span, "startTimeUnixNano", where));
  RECKON_TRY(out.end_unix_ns, Nanos(*span, "endTimeUnixNano", where));
  if (out.start_unix_ns > out.end_unix_ns) return Bad(where, "starts after it ends");
  RECKON_TRY(out.attributes, Attributes(*span, where));
  if (const json::value* status = span->if_contains("status")) {
    if (!status->is_object()) return Bad(where, "status must be an object");
    if (const json::value* code = status->get_object().if_contains("code")) {
      out.status_code = static_cast<int>(code->to_number<std::int64_t>());
    }
  }
  if (const json::value* events = span->if_contains("events")) {
    if (!events->is_array()) return Bad(where, "events must be an array");
    std::int64_t previous = out.start_unix_ns;
    for (const json::value& item : events->get_array()) {
      const json::object* event = item.if_object();
      if (event == nullptr) return Bad(where, "an event is not an object");
      ParsedOtlpEvent parsed;
      RECKON_TRY(parsed.time_unix_ns, Nanos(*event, "timeUnixNano", where + " event"));
      const json::value* event_name = event->if_contains("name");
      if (event_name == nullptr || !event_name->is_string()) return Bad(where, "unnamed event");
      parsed.name = event_name->get_string();
      if (parsed.time_unix_ns < previous || parsed.time_unix_ns > out.end_unix_ns) {
        return Bad(where, "event " + parsed.name + " out of order or outside the span");
      }
      previous = parsed.time_unix_ns;
      RECKON_TRY(parsed.attributes, Attributes(*event, where + " event " + parsed.name));
      out.events.push_back(std::move(parsed));
    }
  }
  return out;
}

}  // namespace

Result<std::vector<ParsedOtlpSpan>> ParseOtlpTraces(std::string_view body) {
  boost::system::error_code ec;
  json::value root = json::parse(body, ec);
  if (ec || !root.is_object()) return Bad("body", "not a JSON object");
  const json::array* resources = ArrayAt(root.get_object(), "resourceSpans");
  if (resources == nullptr || resources->empty()) return Bad("body", "no resourceSpans");
  std::vector<ParsedOtlpSpan> spans;
  for (const json::value& resource_spans : *resources) {
    const json::object* rs = resource_spans.if_object();
    if (rs == nullptr) return Bad("resourceSpans", "not an object");
    const json::value* resource = rs->if_contains("resource");
    if (resource == nullptr || !resource->is_object()) return Bad("resourceSpans", "no resource");
    RECKON_TRY(auto attributes, Attributes(resource->get_object(), "resource"));
    if (!attributes.contains("service.name")) return Bad("resource", "no service.name");
    const json::array* scopes = ArrayAt(*rs, "scopeSpans");
    if (scopes == nullptr || scopes->empty()) return Bad("resourceSpans", "no scopeSpans");
    for (const json::value& scope_spans : *scopes) {
      const json::object* ss = scope_spans.if_object();
      if (ss == nullptr) return Bad("scopeSpans", "not an object");
      const json::value* scope = ss->if_contains("scope");
      if (scope == nullptr || !scope->is_object() || !scope->get_object().contains("name")) {
        return Bad("scopeSpans", "no scope name");
      }
      const json::array* list = ArrayAt(*ss, "spans");
      if (list == nullptr) return Bad("scopeSpans", "no spans array");
      for (const json::value& span : *list) {
        RECKON_TRY(ParsedOtlpSpan parsed, Span(span, attributes.at("service.name")));
        spans.push_back(std::move(parsed));
      }
    }
  }
  return spans;
}

}  // namespace reckon::testing
