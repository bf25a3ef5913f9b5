// /metrics of the real `reckon server --http` with a real worker: a workflow runs, the
// endpoint is scraped over HTTP on 127.0.0.1, and the text is parsed by the reference parser
// (Debian's python3-prometheus-client, through tests/metrics/parse_metrics.py). The families
// docs/OPERATIONS.md lists are there with the values the run implies; the endpoint needs a
// token; --no-metrics turns it off.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <fstream>
#include <sstream>

#include "tests/support/reckon_server.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/metrics/reference_parser.h"

namespace reckon::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;

struct Reply {
  unsigned status = 0;
  std::string content_type;
  std::string body;
};

Reply Get(int port, const std::string& target, const std::string& token) {
  asio::io_context io;
  beast::tcp_stream stream(io);
  stream.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"),
                                         static_cast<unsigned short>(port)));
  http::request<http::string_body> request{http::verb::get, target, 11};
  request.set(http::field::host, "127.0.0.1");
  if (!token.empty()) request.set(http::field::authorization, "Bearer " + token);
  http::write(stream, request);
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  beast::error_code ec;
  http::read(stream, buffer, response, ec);
  return {response.result_int(), std::string(response[http::field::content_type]),
          response.body()};
}

using Parsed = ParsedMetrics;

class MetricsHttpTest : public ::testing::Test {
 protected:
  void StartServer(std::vector<std::string> extra = {}) {
    ReckonServerOptions options;
    options.extra_args = {"--http", "127.0.0.1:0", "--http-port-file", files_.File("http-port")};
    options.extra_args.insert(options.extra_args.end(), extra.begin(), extra.end());
    auto server = ReckonServer::Start(RECKON_CLI_PATH, options);
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(server).value();
    std::ifstream port_file(files_.File("http-port"));
    ASSERT_TRUE(port_file >> port_) << "the server did not write --http-port-file";
  }

  std::string Token(const std::string& role) {
    std::ifstream in(server_->TokenFile(role));
    std::string token;
    in >> token;
    return token;
  }

  Parsed Parse(const std::string& text) {
    return ParseWithReferenceParser(text, files_.File("metrics-" + std::to_string(++scrapes_)));
  }

  TempDir files_;
  std::unique_ptr<ReckonServer> server_;
  int port_ = 0;
  int scrapes_ = 0;
};

TEST_F(MetricsHttpTest, AWorkflowShowsInTheMetricsAndTheReferenceParserReadsThem) {
  StartServer();
  ASSERT_TRUE(server_->StartWorker(RECKON_TEST_WORKER, "worker"));
  const std::string input =
      R"({"tool":"charge","input":{"account":"acct-1","amount_cents":250}})";
  const CliRun started = server_->StartWorkflow("m-1", "call_once", input);
  ASSERT_EQ(started.code(), 0) << started.Describe();
  ASSERT_TRUE(Eventually([&] {
    const Reply run = Get(port_, "/api/v1/runs/m-1", Token("reader"));
    return run.body.find("\"completed\"") != std::string::npos;
  })) << Get(port_, "/api/v1/runs/m-1", Token("reader")).body;

  const Reply scraped = Get(port_, "/metrics", Token("reader"));
  ASSERT_EQ(scraped.status, 200u) << scraped.body;
  EXPECT_EQ(scraped.content_type, "text/plain; version=0.0.4; charset=utf-8");
  const Parsed parsed = Parse(scraped.body);
  // Families and their types (the parser strips _total from counter names).
  const std::map<std::string, std::string> expected = {
      {"reckon_operation_transitions", "counter"}, {"reckon_outcome_unknown", "counter"},
      {"reckon_reconciliations", "counter"},       {"reckon_runs_started", "counter"},
      {"reckon_runs_finished", "counter"},         {"reckon_runs_stopped", "counter"},
      {"reckon_commit_seconds", "histogram"},      {"reckon_commit_group_size", "histogram"},
      {"reckon_operations", "gauge"},              {"reckon_approvals_waiting", "gauge"},
      {"reckon_needs_person", "gauge"},            {"reckon_task_queue_depth", "gauge"},
      {"reckon_task_lease_losses", "counter"},     {"reckon_connected_workers", "gauge"},
      {"reckon_outbox_pending", "gauge"},          {"reckon_outbox_oldest_age_seconds", "gauge"},
      {"reckon_outbox_attempts", "counter"}};
  for (const auto& [name, type] : expected) {
    const json::value* got = parsed.families.if_contains(name);
    ASSERT_NE(got, nullptr) << "no family " << name << " in:\n" << scraped.body;
    EXPECT_EQ(got->as_string(), type) << name;
  }
  // The charge was prepared, attempted once and committed.
  for (const char* kind : {"OperationPrepared", "AttemptStarted", "OperationCommitted"}) {
    EXPECT_EQ(parsed.Value("reckon_operation_transitions_total",
                           {{"tool", "charge"}, {"kind", kind}}),
              1)
        << kind << " in:\n" << scraped.body;
  }
  EXPECT_EQ(parsed.Value("reckon_runs_started_total", {{"workflow_type", "call_once"}}), 1);
  EXPECT_EQ(parsed.Value("reckon_runs_finished_total",
                         {{"workflow_type", "call_once"}, {"status", "completed"}}),
            1);
  EXPECT_EQ(parsed.Value("reckon_connected_workers"), 1);
  EXPECT_EQ(parsed.Value("reckon_needs_person"), 0);
  EXPECT_EQ(parsed.Value("reckon_operations", {{"state", "in_flight"}}), 0);
  // At least the start and the commit of the charge were group commits.
  EXPECT_GE(parsed.Value("reckon_commit_seconds_count"), 2);
  EXPECT_EQ(parsed.Value("reckon_commit_seconds_count"),
            parsed.Value("reckon_commit_group_size_count"));
  EXPECT_EQ(parsed.Value("reckon_commit_seconds_bucket", {{"le", "+Inf"}}),
            parsed.Value("reckon_commit_seconds_count"));
  EXPECT_GE(parsed.Value("reckon_commit_group_size_sum"),
            parsed.Value("reckon_commit_group_size_count"));
  EXPECT_EQ(parsed.Value("reckon_task_queue_depth", {{"kind", "tool"}, {"queue", "charge"}}), 0);
  EXPECT_EQ(parsed.Value("reckon_task_lease_losses_total", {{"kind", "tool"}, {"queue", "charge"}}),
            0);
  // Nothing was published (and no --nats-url): no backlog, no attempts.
  EXPECT_EQ(parsed.Value("reckon_outbox_pending"), 0);
  EXPECT_EQ(parsed.Value("reckon_outbox_oldest_age_seconds"), 0);
  for (const char* result : {"acked", "duplicate", "failed"}) {
    EXPECT_EQ(parsed.Value("reckon_outbox_attempts_total", {{"result", result}}), 0) << result;
  }
  // The metrics carry no payloads: the input's account is nowhere.
  EXPECT_EQ(scraped.body.find("acct-1"), std::string::npos);
}

TEST_F(MetricsHttpTest, TheEndpointNeedsAValidTokenOfAnyRole) {
  StartServer();
  const Reply none = Get(port_, "/metrics", "");
  EXPECT_EQ(none.status, 401u) << none.body;
  const Reply bad = Get(port_, "/metrics", "rk1_00");
  EXPECT_EQ(bad.status, 401u) << bad.body;
  for (const char* role : {"reader", "worker", "operator"}) {
    const Reply reply = Get(port_, "/metrics", Token(role));
    EXPECT_EQ(reply.status, 200u) << role << ": " << reply.body;
  }
}

TEST_F(MetricsHttpTest, NoMetricsTurnsTheEndpointOff) {
  StartServer({"--no-metrics"});
  EXPECT_EQ(Get(port_, "/metrics", Token("reader")).status, 404u);
}

}  // namespace
}  // namespace reckon::testing
