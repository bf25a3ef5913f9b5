// `reckon server --otlp-endpoint`: a real server and worker (reckon-test-worker) exporting the
// trace of a run to a stand-in OTLP collector on 127.0.0.1; the run's trace arrives as OTLP
// JSON with the operation span under the run span.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "reckon/telemetry/testing/otlp_check.h"
#include "reckon/telemetry/testing/otlp_receiver.h"
#include "tests/support/reckon_server.h"

namespace reckon::testing {
namespace {

namespace json = boost::json;

// The spans the collector received for workflow `id`.
std::vector<ParsedOtlpSpan> SpansOf(const std::vector<OtlpRequest>& requests,
                                    const std::string& id) {
  std::vector<ParsedOtlpSpan> spans;
  for (const OtlpRequest& request : requests) {
    auto parsed = ParseOtlpTraces(request.body);
    if (!parsed) continue;
    for (auto& span : parsed.value()) {
      auto it = span.attributes.find("reckon.workflow.id");
      if (it != span.attributes.end() && it->second == id) spans.push_back(std::move(span));
    }
  }
  return spans;
}

TEST(ServerOtlpTest, ARunsTraceReachesTheCollector) {
  OtlpReceiver collector;
  auto server = ReckonServer::Start(RECKON_CLI_PATH, {"--otlp-endpoint", collector.endpoint()});
  ASSERT_TRUE(server) << server.error().ToString();
  auto worker = server.value()->StartWorker(RECKON_TEST_WORKER, "worker");
  ASSERT_TRUE(worker) << worker.error().ToString();
  const std::string input = json::serialize(json::object{
      {"tool", "charge"}, {"input", json::object{{"account", "acct-7"}, {"amount_cents", 300}}}});
  const CliRun started = server.value()->StartWorkflow("otlp-1", "call_once", input);
  ASSERT_EQ(started.code(), 0) << started.Describe();
  ASSERT_TRUE(collector.WaitFor(
      [](const auto& requests) { return SpansOf(requests, "otlp-1").size() >= 2; }));
  auto stopped = server.value()->Stop();
  ASSERT_TRUE(stopped) << stopped.error().ToString();

  for (const OtlpRequest& request : collector.requests()) {
    EXPECT_EQ(request.target, "/v1/traces");
    auto parsed = ParseOtlpTraces(request.body);
    EXPECT_TRUE(parsed) << parsed.error().ToString();
  }
  const auto spans = SpansOf(collector.requests(), "otlp-1");
  ASSERT_EQ(spans.size(), 2u);
  const ParsedOtlpSpan& op = spans[0].parent_span_id.empty() ? spans[1] : spans[0];
  const ParsedOtlpSpan& run = spans[0].parent_span_id.empty() ? spans[0] : spans[1];
  EXPECT_EQ(run.service_name, "reckon-server");
  EXPECT_EQ(run.name, "workflow call_once");
  EXPECT_EQ(run.attributes.at("reckon.run.status"), "completed");
  EXPECT_EQ(op.trace_id, run.trace_id);
  EXPECT_EQ(op.parent_span_id, run.span_id);
  EXPECT_EQ(op.name, "execute_tool charge");
  EXPECT_EQ(op.attributes.at("gen_ai.tool.name"), "charge");
  EXPECT_EQ(op.attributes.at("reckon.state"), "committed");
  ASSERT_FALSE(op.events.empty());
  EXPECT_EQ(op.events.front().name, "operation.prepared");
  EXPECT_EQ(op.events.back().name, "operation.committed");
}

}  // namespace
}  // namespace reckon::testing
