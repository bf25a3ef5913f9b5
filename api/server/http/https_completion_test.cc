// A provider's completion relayed over the console's HTTPS port of the real `reckon server`
// started with --client-ca, for an operation of a real worker waiting for it: the port asks for
// a client certificate without requiring one (a reader without one is served), a worker token
// without a certificate is refused as on the protocol port, and with the worker's certificate
// the completion is applied and the run completes.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <fstream>

#include "tests/support/http_probe.h"
#include "tests/support/reckon_server.h"

namespace reckon::testing {
namespace {

namespace json = boost::json;
namespace http = boost::beast::http;
using namespace std::chrono_literals;

class HttpsCompletionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ReckonServerOptions options;
    options.mtls = true;
    options.extra_args = {"--http", "127.0.0.1:0", "--http-port-file", ports_.File("http-port")};
    auto server = ReckonServer::Start(RECKON_CLI_PATH, options);
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(server).value();
    ASSERT_TRUE(server_->StartWorker(RECKON_TEST_WORKER, "worker"));
    std::ifstream port_file(ports_.File("http-port"));
    int port = 0;
    ASSERT_TRUE(port_file >> port) << "the server did not write --http-port-file";
    port_ = static_cast<std::uint16_t>(port);
  }

  std::string Token(const std::string& role) const {
    std::ifstream in(server_->TokenFile(role));
    std::string token;
    in >> token;
    return token;
  }

  // `call` as `role`, over HTTPS, with the worker's client certificate or without one.
  HttpResult As(const std::string& role, HttpCall call, bool client_certificate) {
    const TestCertificates& certs = *server_->certificates();
    call.tls = HttpTlsFiles{.ca = certs.ca};
    if (client_certificate) {
      call.tls->cert = certs.client_cert;
      call.tls->key = certs.client_key;
    }
    call.headers.emplace_back("Authorization", "Bearer " + Token(role));
    return HttpOnce(port_, call);
  }

  // The run as the reader sees it (no client certificate).
  json::value Describe(const std::string& id) {
    HttpCall call;
    call.target = "/api/v1/runs/" + id;
    const HttpResult reply = As("reader", call, false);
    EXPECT_EQ(reply.status, 200u) << reply.body << reply.error;
    boost::system::error_code ec;
    json::value parsed = json::parse(reply.body, ec);
    return ec ? json::value() : parsed;
  }

  // The operation of `step` in run `id` once it is in `state` (waiting up to 30 s); null if not.
  json::value OperationIn(const std::string& id, const std::string& step,
                          const std::string& state) {
    json::value found;
    Eventually([&] {
      const json::value run = Describe(id);
      if (!run.is_object()) return false;
      for (const json::value& op : run.at("operations").as_array()) {
        if (op.at("step_id") == step.c_str() && op.at("state") == state.c_str()) {
          found = op;
          return true;
        }
      }
      return false;
    });
    return found;
  }

  TempDir ports_;
  std::unique_ptr<ReckonServer> server_;
  std::uint16_t port_ = 0;
};

TEST_F(HttpsCompletionTest, ACompletionNeedsTheWorkersClientCertificateAndIsAppliedWithIt) {
  const CliRun started = server_->StartWorkflow(
      "c-1", "call_once",
      R"({"tool": "webhook_payout", "input": {"account": "acct-1", "amount_cents": 5}})");
  ASSERT_EQ(started.code(), 0) << started.Describe();
  const json::value op = OperationIn("c-1", "webhook_payout#1", "awaiting_completion");
  ASSERT_TRUE(op.is_object()) << json::serialize(Describe("c-1"));
  HttpCall completion;
  completion.verb = http::verb::post;
  completion.target = "/api/v1/operations/" + std::string(op.at("operation_id").as_string()) +
                      "/completion";
  completion.body = R"({"delivery_id": "evt-1", "status": "succeeded", "output": {"paid": true}})";

  // Without a certificate: refused as a worker without one is on the protocol port.
  const HttpResult bare = As("worker", completion, false);
  EXPECT_EQ(bare.status, 401u) << bare.body << bare.error;
  EXPECT_NE(bare.body.find("client certificate"), std::string::npos) << bare.body;
  EXPECT_TRUE(OperationIn("c-1", "webhook_payout#1", "awaiting_completion").is_object());

  // With the worker's certificate: applied, and the run completes.
  const HttpResult certified = As("worker", completion, true);
  EXPECT_EQ(certified.status, 200u) << certified.body << certified.error;
  EXPECT_TRUE(Eventually([&] {
    const json::value run = Describe("c-1");
    return run.is_object() && run.at("summary").at("status") == "completed";
  })) << json::serialize(Describe("c-1"));
}

}  // namespace
}  // namespace reckon::testing
