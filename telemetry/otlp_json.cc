#include "reckon/telemetry/otlp_json.h"

#include <charconv>
#include <string_view>

namespace reckon {
namespace {

// Writes straight into one string, without a JSON document in between (the exporter encodes
// every span it sends; building a DOM per span cost more than the rest of the export). The
// bytes are what boost::json::serialize wrote for the same document: keys in the same order,
// the same escapes (\" \\ \b \f \n \r \t, other control characters as \u00xx), other bytes
// as they are.
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}

  void Raw(std::string_view text) { out_.append(text); }
  void String(std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    out_.push_back('"');
    std::size_t clean = 0;  // start of the run of bytes that need no escape
    for (std::size_t i = 0; i < text.size(); ++i) {
      const auto c = static_cast<unsigned char>(text[i]);
      if (c >= 0x20 && c != '"' && c != '\\') continue;
      out_.append(text.substr(clean, i - clean));
      clean = i + 1;
      out_.push_back('\\');
      switch (c) {
        case '"': out_.push_back('"'); break;
        case '\\': out_.push_back('\\'); break;
        case '\b': out_.push_back('b'); break;
        case '\f': out_.push_back('f'); break;
        case '\n': out_.push_back('n'); break;
        case '\r': out_.push_back('r'); break;
        case '\t': out_.push_back('t'); break;
        default:
          out_.append("u00");
          out_.push_back(kHex[c >> 4]);
          out_.push_back(kHex[c & 0xf]);
      }
    }
    out_.append(text.substr(clean));
    out_.push_back('"');
  }
  // A 64-bit integer as a JSON string, as the protobuf JSON mapping wants.
  void QuotedInt(std::int64_t value) {
    char digits[24];
    auto end = std::to_chars(digits, digits + sizeof(digits), value).ptr;
    out_.push_back('"');
    out_.append(digits, end);
    out_.push_back('"');
  }
  void Key(std::string_view key) {  // keys are constants without characters to escape
    out_.push_back('"');
    out_.append(key);
    out_.append("\":");
  }

  void Value(const OtlpValue& value) {
    switch (value.kind) {
      case OtlpValue::Kind::kString:
        Raw("{\"stringValue\":");
        String(value.text);
        break;
      case OtlpValue::Kind::kBool:
        Raw(value.flag ? "{\"boolValue\":true" : "{\"boolValue\":false");
        break;
      case OtlpValue::Kind::kInt:
        Raw("{\"intValue\":");
        QuotedInt(value.number);
        break;
    }
    out_.push_back('}');
  }

  void Attributes(const OtlpAttributes& attributes) {
    out_.push_back('[');
    bool first = true;
    for (const auto& [key, value] : attributes) {
      if (!first) out_.push_back(',');
      first = false;
      Raw("{\"key\":");
      String(key);
      Raw(",\"value\":");
      Value(value);
      out_.push_back('}');
    }
    out_.push_back(']');
  }

  void Span(const OtlpSpan& span) {
    Raw("{\"traceId\":");
    String(span.trace_id);
    Raw(",\"spanId\":");
    String(span.span_id);
    if (!span.parent_span_id.empty()) {
      Raw(",\"parentSpanId\":");
      String(span.parent_span_id);
    }
    Raw(",\"name\":");
    String(span.name);
    // kind 1, SPAN_KIND_INTERNAL: the engine's own work (GenAI execute_tool spans).
    Raw(",\"kind\":1,\"startTimeUnixNano\":");
    QuotedInt(span.start_unix_ns);
    Raw(",\"endTimeUnixNano\":");
    QuotedInt(span.end_unix_ns);
    Raw(",\"attributes\":");
    Attributes(span.attributes);
    Raw(",\"events\":[");
    bool first = true;
    for (const OtlpEvent& event : span.events) {
      if (!first) out_.push_back(',');
      first = false;
      Raw("{\"timeUnixNano\":");
      QuotedInt(event.time_unix_ns);
      Raw(",\"name\":");
      String(event.name);
      Raw(",\"attributes\":");
      Attributes(event.attributes);
      out_.push_back('}');
    }
    Raw(span.error ? "],\"status\":{\"code\":2" : "],\"status\":{\"code\":0");
    if (!span.status_message.empty()) {
      Raw(",\"message\":");
      String(span.status_message);
    }
    Raw("}}");
  }

 private:
  std::string& out_;
};

}  // namespace

std::string OtlpTracesJson(const OtlpResource& resource, std::span<const OtlpSpan> spans) {
  std::string out;
  out.reserve(256 + spans.size() * 1536);  // a ten_calls operation span is ~1.4 KB
  Writer w(out);
  w.Raw("{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
        "\"value\":{\"stringValue\":");
  w.String(resource.service_name);
  w.Raw("}}]},\"scopeSpans\":[{\"scope\":{\"name\":\"reckon\"");
  if (!resource.scope_version.empty()) {
    w.Raw(",\"version\":");
    w.String(resource.scope_version);
  }
  w.Raw("},\"spans\":[");
  bool first = true;
  for (const OtlpSpan& span : spans) {
    if (!first) w.Raw(",");
    first = false;
    w.Span(span);
  }
  w.Raw("]}]}]}");
  return out;
}

}  // namespace reckon
