// The refund sample's tools file (samples/refund/tools.json) against the real payments-provider
// binary on 127.0.0.1 and its faults: each attempt and lookup is run as a worker runs it
// (LocalWorker: the registered Tool's execute / reconcile, its report redacted), and the
// provider's ledger is the ground truth.
//   reply lost after the commit -> unknown -> lookup -> committed, one refund in the ledger
//   429 and 503 -> retryable with the codes the contract retries; the retry then succeeds
//   4xx -> definitive; the provider down before sending -> retryable not_sent
// How the engine acts on those reports (retries, reconciles) is shown end to end by
// tests/plan_run_test.cc and the crash loop (tests/http_tools_crash_test.cc).
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <optional>

#include "reckon/tools/http/http_tool.h"
#include "reckon/tools/http/http_tools_file.h"
#include "reckon/host/local_worker.h"
#include "tests/refund_crash_audit.h"
#include "tests/support/crash_support.h"
#include "tests/support/temp_dir.h"

namespace reckon::testing {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;

constexpr char kToken[] = "tok_canary_http_tools_5551212";

class HttpToolsTest : public ::testing::Test {
 protected:
  // Starts the provider with `flags` and loads the sample's tools file against it.
  void Start(std::vector<std::string> flags) {
    SubprocessOptions o;
    o.args = {"--port", "0", "--ledger", dir_.File("ledger.db"), "--seed", "1"};
    o.args.insert(o.args.end(), flags.begin(), flags.end());
    o.stderr_path = dir_.File("provider.log");
    auto provider = StartListening(RECKON_PAYMENTS_PROVIDER, std::move(o));
    ASSERT_TRUE(provider) << provider.error().ToString();
    provider_.emplace(std::move(provider).value());
    Load(provider_->port);
  }

  void Load(std::uint16_t port) {
    const std::string url = "http://127.0.0.1:" + std::to_string(port);
    auto env = [url](const std::string& name) -> std::optional<std::string> {
      if (name == "PAYMENTS_URL") return url;
      if (name == "REFUND_CARD_TOKEN") return std::string(kToken);
      return std::nullopt;
    };
    auto file = tools::LoadHttpToolsFile(std::string(RECKON_SOURCE_DIR) + "/samples/refund/tools.json",
                                         env);
    ASSERT_TRUE(file) << file.error().ToString();
    registry_ = std::make_unique<ToolRegistry>();
    ASSERT_TRUE(tools::RegisterHttpTools(*registry_, file.value()));
  }

  // One attempt of `tool` as a worker runs it (LocalWorker, which redacts its report).
  AttemptOutcome Execute(const std::string& tool, const std::string& input,
                         const std::string& operation_id) {
    AttemptRequest request;
    request.run = storage::RunRef{"wf-http", "r1"};
    request.step_id = "step";
    request.operation_id = operation_id;
    request.tool = tool;
    request.input = json::parse(input);
    request.attempt = 1;
    request.deadline_us = DeadlineUs();
    std::optional<AttemptOutcome> out;
    auto run = [](LocalWorker* worker, AttemptRequest req,
                  std::optional<AttemptOutcome>* result) -> asio::awaitable<void> {
      result->emplace(co_await worker->RunAttempt(std::move(req)));
    };
    asio::io_context io;
    LocalWorker worker(workflows_, *registry_);
    asio::co_spawn(io, run(&worker, std::move(request), &out), [](std::exception_ptr e) {
      if (e) std::rethrow_exception(e);
    });
    io.run();
    EXPECT_TRUE(out.has_value());
    EXPECT_EQ(out->message.find(kToken), std::string::npos) << out->message;
    return out.value_or(AttemptOutcome{});
  }

  // A lookup of send_refund as a worker runs it, with the input the engine has in memory.
  ReconcileOutcome Reconcile(const std::string& operation_id,
                             const std::string& input = "null") {
    ReconcileRequest request;
    request.run = storage::RunRef{"wf-http", "r1"};
    request.operation_id = operation_id;
    request.tool = "send_refund";
    request.input = json::parse(input);
    request.round = 1;
    request.deadline_us = DeadlineUs();
    std::optional<ReconcileOutcome> out;
    auto run = [](LocalWorker* worker, ReconcileRequest req,
                  std::optional<ReconcileOutcome>* result) -> asio::awaitable<void> {
      result->emplace(co_await worker->Reconcile(std::move(req)));
    };
    asio::io_context io;
    LocalWorker worker(workflows_, *registry_);
    asio::co_spawn(io, run(&worker, std::move(request), &out), [](std::exception_ptr e) {
      if (e) std::rethrow_exception(e);
    });
    io.run();
    EXPECT_TRUE(out.has_value());
    return out.value_or(ReconcileOutcome{});
  }

  static std::int64_t DeadlineUs() {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               (std::chrono::system_clock::now() + 5s).time_since_epoch())
        .count();
  }

  std::vector<LedgerRefund> Ledger() {
    auto refunds = FetchRefunds(provider_->port);
    EXPECT_TRUE(refunds) << refunds.error().ToString();
    return refunds ? refunds.value() : std::vector<LedgerRefund>{};
  }

  TempDir dir_;
  std::optional<ListeningProcess> provider_;
  WorkflowRegistry workflows_;
  std::unique_ptr<ToolRegistry> registry_;
};

constexpr char kRefund[] = R"({"payment_id": "pay-1", "amount_cents": 100, "reason": "duplicate charge"})";

TEST_F(HttpToolsTest, AReplyLostAfterTheCommitIsUnknownAndTheLookupFindsTheOneRefund) {
  Start({"--drop-reply-rate", "1"});
  // Nothing yet under this operation id: the lookup says so.
  EXPECT_EQ(Reconcile("op_lost_1").verdict, ReconcileVerdict::kNotFound);
  AttemptOutcome attempt = Execute("send_refund", kRefund, "op_lost_1");
  EXPECT_FALSE(attempt.success);
  EXPECT_EQ(attempt.kind, FailureKind::kUnknown);
  EXPECT_EQ(attempt.code, "reply_lost") << attempt.message;
  ReconcileOutcome found = Reconcile("op_lost_1");
  EXPECT_EQ(found.verdict, ReconcileVerdict::kCommitted) << found.message;
  std::vector<LedgerRefund> ledger = Ledger();
  ASSERT_EQ(ledger.size(), 1u);
  EXPECT_EQ(ledger[0].idempotency_key, "op_lost_1");
  EXPECT_EQ(found.provider_ref, ledger[0].refund_id);
  EXPECT_EQ(found.output.as_object().at("refund_id").as_string(), ledger[0].refund_id);
}

TEST_F(HttpToolsTest, RateLimitedAndUnavailableBeforeCommitAreRetryableWithTheContractsCodes) {
  Start({"--rate-limit-first", "1"});
  AttemptOutcome limited = Execute("send_refund", kRefund, "op_retry_1");
  EXPECT_EQ(limited.kind, FailureKind::kRetryable);
  EXPECT_EQ(limited.code, "rate_limited");
  EXPECT_TRUE(Ledger().empty());
  // The retry, same operation id, goes through.
  AttemptOutcome retried = Execute("send_refund", kRefund, "op_retry_1");
  ASSERT_TRUE(retried.success) << retried.code << " " << retried.message;
  std::vector<LedgerRefund> ledger = Ledger();
  ASSERT_EQ(ledger.size(), 1u);
  EXPECT_EQ(retried.provider_ref, ledger[0].refund_id);
  EXPECT_EQ(retried.output.as_object().at("payment_id").as_string(), "pay-1");

  provider_.reset();
  Start({"--fail-before-commit-rate", "1"});
  AttemptOutcome unavailable = Execute("send_refund", kRefund, "op_retry_2");
  EXPECT_EQ(unavailable.kind, FailureKind::kRetryable);
  EXPECT_EQ(unavailable.code, "provider_unavailable_before_commit");
}

TEST_F(HttpToolsTest, RefusalsAreDefinitive) {
  Start({});
  AttemptOutcome no_payment = Execute(
      "send_refund", R"({"payment_id": "pay-nope", "amount_cents": 1, "reason": "x"})", "op_d_1");
  EXPECT_EQ(no_payment.kind, FailureKind::kDefinitive);
  EXPECT_EQ(no_payment.code, "payment_not_found");
  AttemptOutcome too_much = Execute(
      "send_refund", R"({"payment_id": "pay-1", "amount_cents": 999999999, "reason": "x"})",
      "op_d_2");
  EXPECT_EQ(too_much.kind, FailureKind::kDefinitive);
  EXPECT_EQ(too_much.code, "invalid_amount");
  AttemptOutcome lookup = Execute("lookup_payment", R"({"payment_id": "pay-nope"})", "op_d_3");
  EXPECT_EQ(lookup.kind, FailureKind::kDefinitive);
  EXPECT_EQ(lookup.code, "payment_not_found");
  AttemptOutcome found = Execute("lookup_payment", R"({"payment_id": "pay-1"})", "op_d_4");
  ASSERT_TRUE(found.success) << found.message;
  EXPECT_TRUE(found.output.as_object().at("amount_cents").is_int64());
  EXPECT_TRUE(Ledger().empty());
}

TEST_F(HttpToolsTest, AProviderThatIsDownIsRetryableNotSentAndTheLookupStillUnknown) {
  Start({});
  const std::uint16_t port = provider_->port;
  ASSERT_TRUE(provider_->process.Terminate(5s));
  provider_.reset();
  Load(port);  // the tools still point at the closed port
  AttemptOutcome attempt = Execute("send_refund", kRefund, "op_down_1");
  EXPECT_EQ(attempt.kind, FailureKind::kRetryable);
  EXPECT_EQ(attempt.code, "not_sent");
  EXPECT_NE(attempt.message.find("connection_refused"), std::string::npos) << attempt.message;
  EXPECT_EQ(Reconcile("op_down_1").verdict, ReconcileVerdict::kStillUnknown);
}

// A provider that builds its refund ids from the card token (a secret of the tools file): the
// reference, the output and the lookup's reference leave the worker with "[secret]" in its
// place, on the normal path and after a lost reply; the provider's own ids hold the token.
TEST_F(HttpToolsTest, AReferenceThatEmbedsTheFilesSecretLeavesTheWorkerRedacted) {
  Start({"--refund-id-from-card"});
  AttemptOutcome done = Execute("send_refund", kRefund, "op_echo_1");
  ASSERT_TRUE(done.success) << done.code << " " << done.message;
  EXPECT_EQ(done.provider_ref, "re_[secret]_000001");
  EXPECT_EQ(done.output.as_object().at("refund_id").as_string(), "re_[secret]_000001");
  provider_.reset();
  Start({"--refund-id-from-card", "--drop-reply-rate", "1"});
  AttemptOutcome lost = Execute("send_refund", kRefund, "op_echo_2");
  EXPECT_EQ(lost.code, "reply_lost") << lost.message;
  ReconcileOutcome found = Reconcile("op_echo_2", kRefund);
  ASSERT_EQ(found.verdict, ReconcileVerdict::kCommitted) << found.message;
  EXPECT_EQ(found.provider_ref, "re_[secret]_000002");
  EXPECT_EQ(json::serialize(found.output).find(kToken), std::string::npos);
  std::vector<LedgerRefund> ledger = Ledger();
  ASSERT_EQ(ledger.size(), 2u);
  EXPECT_EQ(ledger[1].refund_id, std::string("re_") + kToken + "_000002");
}

// A secret put into a URL never reaches what the tool reports, as it is or percent-encoded,
// even in a transport error that quotes the request line.
TEST_F(HttpToolsTest, SecretsInTheUrlAreScrubbedFromFailures) {
  Start({});
  const std::uint16_t port = provider_->port;
  ASSERT_TRUE(provider_->process.Terminate(5s));
  provider_.reset();
  json::value doc = json::parse(R"({"secrets": {"key": {"env": "PROBE_KEY"}}, "tools": [{
      "contract": {"name": "probe", "description": "Reads a payment.", "side_effect": "read_only",
                   "attempt_timeout_ms": 1000, "input_schema": {"type": "object"}},
      "request": {"method": "GET", "url": "{env.BASE}/payments/pay-1?key={secret.key}"},
      "outcomes": [{"status": [200], "means": "success"}]}]})");
  const std::string secret = "s3cret key/with spaces 777";
  auto env = [&](const std::string& name) -> std::optional<std::string> {
    if (name == "BASE") return "http://127.0.0.1:" + std::to_string(port);
    if (name == "PROBE_KEY") return secret;
    return std::nullopt;
  };
  auto file = tools::ParseHttpToolsFile(doc, ".", "probe.json", env);
  ASSERT_TRUE(file) << file.error().ToString();
  registry_ = std::make_unique<ToolRegistry>();
  ASSERT_TRUE(tools::RegisterHttpTools(*registry_, file.value()));
  AttemptOutcome attempt = Execute("probe", "{}", "op_probe_1");
  EXPECT_EQ(attempt.code, "not_sent");
  EXPECT_EQ(attempt.message.find("s3cret"), std::string::npos) << attempt.message;
  EXPECT_NE(attempt.message.find("[secret]"), std::string::npos) << attempt.message;
}

}  // namespace
}  // namespace reckon::testing
