// The OTLP exporter against a stand-in collector on 127.0.0.1: the JSON it sends, batching,
// the bounded queue, and what a collector that fails or hangs costs (spans, counted; never the
// caller's time: Push never waits on the network).
#include <gtest/gtest.h>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <functional>
#include <thread>

#include "reckon/telemetry/otlp_endpoint.h"
#include "reckon/telemetry/otlp_exporter.h"
#include "reckon/telemetry/otlp_ids.h"
#include "reckon/telemetry/otlp_json.h"
#include "reckon/telemetry/testing/otlp_check.h"
#include "reckon/telemetry/testing/otlp_receiver.h"

namespace reckon {
namespace {

using namespace std::chrono_literals;
using testing::OtlpReceiver;
using testing::OtlpRequest;
using testing::ParseOtlpTraces;

// Polls `done` until it holds or a generous limit passes (a hung test, not a timing check).
bool Eventually(const std::function<bool()>& done) {
  for (int i = 0; i < 6000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return done();
}

OtlpSpan SampleSpan(const std::string& operation_id) {
  OtlpSpan span;
  span.trace_id = OtlpTraceId("wf-1", "run-1");
  span.span_id = OtlpOperationSpanId("wf-1", "run-1", operation_id);
  span.parent_span_id = OtlpRunSpanId("wf-1", "run-1");
  span.name = "execute_tool refund";
  span.start_unix_ns = 1'700'000'000'000'000'000;
  span.end_unix_ns = span.start_unix_ns + 5'000'000;
  span.attributes = {{"gen_ai.tool.call.id", OtlpValue(operation_id)},
                     {"reckon.attempt", OtlpValue(std::int64_t{2})},
                     {"reckon.partial", OtlpValue(false)}};
  span.events = {{span.start_unix_ns, "operation.prepared", {{"class", "non_repeatable_write"}}},
                 {span.end_unix_ns, "operation.committed", {}}};
  return span;
}

std::size_t SpansIn(const std::vector<OtlpRequest>& requests) {
  std::size_t n = 0;
  for (const OtlpRequest& request : requests) {
    auto spans = ParseOtlpTraces(request.body);
    if (spans) n += spans.value().size();
  }
  return n;
}

OtlpExporterOptions Fast(const OtlpReceiver& receiver) {
  OtlpExporterOptions options;
  options.endpoint = receiver.endpoint();
  options.flush_interval = 20ms;
  options.first_backoff = 5ms;
  options.request_timeout = 10s;
  options.shutdown_grace = 200ms;
  return options;
}

// The encoding as a boost::json document serializes it: the reference the direct writer
// (otlp_json.cc) must match byte for byte.
namespace reference {
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
  out["kind"] = 1;
  out["startTimeUnixNano"] = std::to_string(span.start_unix_ns);
  out["endTimeUnixNano"] = std::to_string(span.end_unix_ns);
  out["attributes"] = Attributes(span.attributes);
  json::array events;
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
std::string TracesJson(const OtlpResource& resource, const std::vector<OtlpSpan>& spans) {
  json::array encoded;
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
}  // namespace reference

TEST(OtlpJsonTest, IsByteForByteWhatAJsonDocumentSerializesTo) {
  OtlpResource resource;
  resource.service_name = "reckon-\"test\"";
  std::vector<OtlpSpan> spans;
  EXPECT_EQ(OtlpTracesJson(resource, spans), reference::TracesJson(resource, spans));
  spans.push_back(SampleSpan("op_1"));
  OtlpSpan odd = SampleSpan(std::string("op_\x01\x1f\x7f\"\\/\b\f\n\r\t", 14) + "é€😀");
  odd.parent_span_id.clear();
  odd.error = true;
  odd.status_message = "card_declined\n";
  odd.start_unix_ns = -5;
  odd.attributes.emplace_back("reckon.attempt", OtlpValue(std::int64_t{-9'223'372'036'854'775'807}));
  odd.attributes.emplace_back("k\"ey", OtlpValue(true));
  odd.attributes.emplace_back("", OtlpValue(std::string()));
  odd.attributes.emplace_back("nul", OtlpValue(std::string("a\0b", 3)));
  odd.events.push_back({0, "", {}});
  spans.push_back(odd);
  spans.push_back(OtlpSpan{});
  for (const char* version : {"", "0.3.0"}) {
    resource.scope_version = version;
    EXPECT_EQ(OtlpTracesJson(resource, spans), reference::TracesJson(resource, spans));
  }
}

TEST(OtlpIdsTest, AreDeterministicSizedAndDistinct) {
  EXPECT_EQ(OtlpTraceId("wf", "r1"), OtlpTraceId("wf", "r1"));
  EXPECT_EQ(OtlpTraceId("wf", "r1").size(), 32u);
  EXPECT_EQ(OtlpRunSpanId("wf", "r1").size(), 16u);
  EXPECT_EQ(OtlpOperationSpanId("wf", "r1", "op").size(), 16u);
  EXPECT_NE(OtlpTraceId("wf", "r1"), OtlpTraceId("wf", "r2"));
  EXPECT_NE(OtlpTraceId("wf", "r1"), OtlpTraceId("wf2", "r1"));
  // The separator keeps ("ab","c") and ("a","bc") apart.
  EXPECT_NE(OtlpTraceId("ab", "c"), OtlpTraceId("a", "bc"));
  EXPECT_NE(OtlpRunSpanId("wf", "r1"), OtlpOperationSpanId("wf", "r1", ""));
  EXPECT_NE(OtlpOperationSpanId("wf", "r1", "a"), OtlpOperationSpanId("wf", "r1", "b"));
}

TEST(OtlpEndpointTest, ParsesBaseUrlsAndRefusesOthers) {
  auto plain = ParseOtlpEndpoint("http://127.0.0.1:4318");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain.value().host, "127.0.0.1");
  EXPECT_EQ(plain.value().port, "4318");
  EXPECT_EQ(plain.value().target, "/v1/traces");
  auto prefixed = ParseOtlpEndpoint("http://collector/otlp/");
  ASSERT_TRUE(prefixed);
  EXPECT_EQ(prefixed.value().port, "80");
  EXPECT_EQ(prefixed.value().target, "/otlp/v1/traces");
  auto v6 = ParseOtlpEndpoint("http://[::1]:4318");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6.value().host, "::1");
  EXPECT_FALSE(ParseOtlpEndpoint("https://collector:4318"));
  EXPECT_FALSE(ParseOtlpEndpoint("collector:4318"));
  EXPECT_FALSE(ParseOtlpEndpoint("http://:4318"));
  EXPECT_FALSE(ParseOtlpEndpoint("http://collector:99999"));
}

TEST(OtlpJsonTest, EncodesTheOtlpJsonMapping) {
  std::vector<OtlpSpan> spans{SampleSpan("op-1")};
  spans.push_back(spans[0]);
  spans[1].span_id = OtlpRunSpanId("wf-1", "run-1");
  spans[1].parent_span_id.clear();
  spans[1].error = true;
  spans[1].status_message = "card_declined";
  const std::string body = OtlpTracesJson(OtlpResource{"reckon-test", "0.1"}, spans);
  auto parsed = ParseOtlpTraces(body);
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  ASSERT_EQ(parsed.value().size(), 2u);
  const auto& op = parsed.value()[0];
  EXPECT_EQ(op.service_name, "reckon-test");
  EXPECT_EQ(op.parent_span_id, parsed.value()[1].span_id);
  EXPECT_EQ(op.attributes.at("reckon.attempt"), "2");
  EXPECT_EQ(op.attributes.at("reckon.partial"), "false");
  ASSERT_EQ(op.events.size(), 2u);
  EXPECT_EQ(op.events[0].attributes.at("class"), "non_repeatable_write");
  EXPECT_EQ(parsed.value()[1].status_code, 2);
  EXPECT_NE(body.find("\"intValue\":\"2\""), std::string::npos);  // 64-bit ints as strings
  EXPECT_NE(body.find("\"startTimeUnixNano\":\"1700000000000000000\""), std::string::npos);
}

TEST(OtlpExporterTest, PostsBatchesOfJsonToV1Traces) {
  OtlpReceiver receiver;
  auto options = Fast(receiver);
  options.max_batch = 2;
  auto exporter = OtlpExporter::Start(options);
  ASSERT_TRUE(exporter);
  for (int i = 0; i < 5; ++i) exporter.value()->Push(SampleSpan("op-" + std::to_string(i)));
  ASSERT_TRUE(receiver.WaitFor([](const auto& requests) { return SpansIn(requests) == 5; }));
  ASSERT_TRUE(Eventually([&] { return exporter.value()->exported() == 5; }));
  EXPECT_EQ(exporter.value()->dropped(), 0u);
  const auto requests = receiver.requests();
  EXPECT_GE(requests.size(), 3u);
  for (const OtlpRequest& request : requests) {
    EXPECT_EQ(request.method, "POST");
    EXPECT_EQ(request.target, "/v1/traces");
    EXPECT_EQ(request.content_type, "application/json");
    auto spans = ParseOtlpTraces(request.body);
    ASSERT_TRUE(spans) << spans.error().ToString();
    EXPECT_LE(spans.value().size(), 2u);
  }
  // Batch after batch on one connection (HTTP/1.1 keep-alive).
  EXPECT_EQ(receiver.connections(), 1);
}

// A collector that closes a connection after answering, without saying so: the next batch
// finds the kept connection closed and goes out on a fresh one, without a retry (none is
// allowed here) and without a loss.
TEST(OtlpExporterTest, AKeptConnectionTheCollectorClosedCostsNothing) {
  OtlpReceiver receiver(OtlpReceiver::Mode::kAcceptThenClose);
  auto options = Fast(receiver);
  options.max_batch = 2;
  options.max_retries = 0;
  auto exporter = OtlpExporter::Start(options);
  ASSERT_TRUE(exporter);
  for (int round = 0; round < 3; ++round) {
    exporter.value()->Push(SampleSpan("op-a" + std::to_string(round)));
    exporter.value()->Push(SampleSpan("op-b" + std::to_string(round)));
    const std::uint64_t sent = 2 * (round + 1);
    ASSERT_TRUE(Eventually([&] {
      return exporter.value()->exported() + exporter.value()->dropped() >= sent;
    }));
  }
  EXPECT_EQ(exporter.value()->exported(), 6u);
  EXPECT_EQ(exporter.value()->dropped(), 0u);
  EXPECT_EQ(receiver.connections(), 3);
}

TEST(OtlpExporterTest, FlushesWhatIsQueuedWhenDestroyed) {
  OtlpReceiver receiver;
  auto options = Fast(receiver);
  options.flush_interval = 1h;
  auto exporter = OtlpExporter::Start(options);
  ASSERT_TRUE(exporter);
  exporter.value()->Push(SampleSpan("op-1"));
  exporter.value()->Push(SampleSpan("op-2"));
  exporter.value().reset();
  EXPECT_EQ(SpansIn(receiver.requests()), 2u);
}

TEST(OtlpExporterTest, RetriesA500ThenDropsAndCounts) {
  OtlpReceiver receiver(OtlpReceiver::Mode::kFail500);
  auto options = Fast(receiver);
  options.max_retries = 2;
  auto exporter = OtlpExporter::Start(options);
  ASSERT_TRUE(exporter);
  exporter.value()->Push(SampleSpan("op-1"));
  ASSERT_TRUE(Eventually([&] { return exporter.value()->dropped() == 1; }));
  EXPECT_EQ(exporter.value()->exported(), 0u);
  EXPECT_EQ(receiver.requests().size(), 3u);  // the first try and two retries
}

TEST(OtlpExporterTest, GivesUpOnACollectorThatHangs) {
  OtlpReceiver receiver(OtlpReceiver::Mode::kHang);
  auto options = Fast(receiver);
  options.request_timeout = 100ms;
  options.max_retries = 1;
  auto exporter = OtlpExporter::Start(options);
  ASSERT_TRUE(exporter);
  exporter.value()->Push(SampleSpan("op-1"));
  ASSERT_TRUE(Eventually([&] { return exporter.value()->dropped() == 1; }));
  EXPECT_EQ(exporter.value()->exported(), 0u);
  EXPECT_TRUE(receiver.WaitFor([](const auto& requests) { return requests.size() == 2; }));
}

TEST(OtlpExporterTest, TheQueueIsBoundedAndShutdownCutsAHungRequest) {
  OtlpReceiver receiver(OtlpReceiver::Mode::kHang);
  auto options = Fast(receiver);
  options.max_queue = 4;
  options.max_batch = 1;
  options.request_timeout = 1h;  // only the shutdown grace ends the hung request
  auto exporter = OtlpExporter::Start(options);
  ASSERT_TRUE(exporter);
  for (int i = 0; i < 10; ++i) exporter.value()->Push(SampleSpan("op-" + std::to_string(i)));
  // At most one span left the queue (the request that hangs): the rest beyond 4 were dropped.
  EXPECT_GE(exporter.value()->dropped(), 5u);
  exporter.value().reset();  // within the grace: the hung request is cancelled
  EXPECT_LE(receiver.requests().size(), 1u);
}

}  // namespace
}  // namespace reckon
