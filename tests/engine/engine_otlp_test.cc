// OTLP traces of real runs: the engine with an OtlpTraceSink exporting to a stand-in collector
// on 127.0.0.1 (telemetry/testing/otlp_receiver.h). A run's trace arrives as valid OTLP JSON
// with the run span as root and one child span per operation carrying the transitions
// (approval with its principal, outcome_unknown with its reason, the reconciliation's result,
// the commit); no input, result or secret reaches the collector; a restart exports the same
// ids; a collector that hangs or answers 500 costs spans (counted), never the runs' progress.
#include <gtest/gtest.h>

#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>

#include <functional>
#include <thread>

#include "reckon/engine/run_state.h"
#include "reckon/telemetry/otlp_ids.h"
#include "reckon/telemetry/otlp_trace_sink.h"
#include "reckon/telemetry/testing/otlp_check.h"
#include "reckon/telemetry/testing/otlp_receiver.h"
#include "reckon/host/embedded_host.h"
#include "reckon/host/testing/engine_harness.h"
#include "reckon/testkit/gtest.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/test_workflows.h"
#include "tests/support/temp_dir.h"

namespace reckon {
namespace {

using namespace std::chrono_literals;
using namespace reckon::testing;
using namespace reckon::storage;
namespace json = boost::json;

constexpr char kRun[] = "card-payout-otlp";
constexpr char kSecret[] = "tok_SECRET_OTLP_9931_zzq";   // a secret field of the tool input
constexpr char kMemo[] = "MEMO_CANARY_input_77";         // a plain input field
constexpr char kCustomer[] = "CUSTOMER_CANARY_wf_input";  // the workflow's input

Task<WorkflowOutcome> PayWithCard(WorkflowContext& ctx, json::value, const std::string* vault) {
  json::value input = FastInput("acct-3", 25000, *vault);
  input.as_object()["memo"] = kMemo;
  auto pay = ctx.Call("send_payout", std::move(input));
  CallResult paid = co_await pay;
  if (!paid) co_return paid.error();
  co_return json::object{{"payout", paid.value().provider_ref}};
}

bool Eventually(const std::function<bool()>& done) {
  for (int i = 0; i < 6000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return done();
}

OtlpExporterOptions FastExport(const OtlpReceiver& receiver) {
  OtlpExporterOptions options;
  options.endpoint = receiver.endpoint();
  options.flush_interval = 20ms;
  options.first_backoff = 5ms;
  options.shutdown_grace = 2s;
  return options;
}

// Every span the receiver got, each body checked as OTLP JSON.
std::vector<ParsedOtlpSpan> SpansOf(const OtlpReceiver& receiver) {
  std::vector<ParsedOtlpSpan> spans;
  for (const OtlpRequest& request : receiver.requests()) {
    auto parsed = ParseOtlpTraces(request.body);
    EXPECT_TRUE(parsed) << parsed.error().ToString();
    if (!parsed) continue;
    for (auto& span : parsed.value()) spans.push_back(std::move(span));
  }
  return spans;
}

std::vector<std::string> EventNames(const ParsedOtlpSpan& span) {
  std::vector<std::string> names;
  for (const auto& event : span.events) names.push_back(event.name);
  return names;
}

const ParsedOtlpEvent* FindEvent(const ParsedOtlpSpan& span, const std::string& name) {
  for (const auto& event : span.events) {
    if (event.name == name) return &event;
  }
  return nullptr;
}

class PayoutScenario {
 public:
  PayoutScenario() : provider_(/*dedup=*/false) {
    provider_.Script("send_payout", {testkit::Step{testkit::Behaviour::kCommitLoseReply}});
    ToolContract contract = FastContract("send_payout", SideEffect::kNonRepeatableWrite);
    contract.approval = {.kind = ApprovalKind::kWhen,
                         .when = {{"amount_cents", CompareOp::kGreater, 10000}},
                         .grant_ttl = 3600s};
    RECKON_EXPECT_OK(h_.tools().Register(testkit::ProviderTool(contract, provider_)));
    const std::string* token = &vault_;
    RECKON_EXPECT_OK(h_.workflows().Register("pay", [token](WorkflowContext& ctx, json::value in) {
      return PayWithCard(ctx, std::move(in), token);
    }));
  }
  EngineHarness& h() { return h_; }
  testkit::FakeProvider& provider() { return provider_; }

  void Approve() {
    const OperationRecord op = *h_.Operation(kRun, "send_payout#1");
    RECKON_EXPECT_OK(h_.Decide(kRun, ApprovalDecision{op.approval_id, "", op.intent_hash, true,
                                                      "alice@example.com", ""}));
  }

 private:
  testkit::FakeProvider provider_;
  EngineHarness h_;
  const std::string vault_ = kSecret;
};

TEST(OtlpTraceTest, ARunsTraceArrivesWithCorrectParentageAndNoSecrets) {
  OtlpReceiver receiver;
  PayoutScenario scenario;
  EngineHarness& h = scenario.h();
  auto sink = OtlpTraceSink::Start(FastExport(receiver));
  RECKON_ASSERT_OK(sink);
  h.set_trace(sink.value().get());
  h.Boot();
  auto ref = h.Start(kRun, "pay", json::object{{"customer", kCustomer}});
  RECKON_ASSERT_OK(ref);
  ASSERT_TRUE(h.RunUntilState(kRun, "send_payout#1", OperationState::kAwaitingApproval));
  scenario.Approve();
  ASSERT_TRUE(h.RunUntilSettled(kRun));
  ASSERT_EQ(h.Describe(kRun)->status, RunStatus::kCompleted);
  const std::string operation_id_seen = h.Operation(kRun, "send_payout#1")->operation_id;
  h.Shutdown();
  // The secret did reach the tool: the checks below are not vacuous.
  ASSERT_EQ(scenario.provider().calls().size(), 1u);

  ASSERT_TRUE(receiver.WaitFor([](const auto& requests) {
    std::size_t n = 0;
    for (const auto& r : requests) {
      auto spans = ParseOtlpTraces(r.body);
      if (spans) n += spans.value().size();
    }
    return n >= 2;
  }));
  EXPECT_EQ(sink.value()->dropped(), 0u);
  sink.value().reset();

  for (const OtlpRequest& request : receiver.requests()) {
    EXPECT_EQ(request.target, "/v1/traces");
    EXPECT_EQ(request.content_type, "application/json");
    for (const char* canary : {kSecret, kMemo, kCustomer}) {
      EXPECT_EQ(request.body.find(canary), std::string::npos) << canary;
    }
  }
  const std::vector<ParsedOtlpSpan> spans = SpansOf(receiver);
  ASSERT_EQ(spans.size(), 2u);
  const ParsedOtlpSpan* run = nullptr;
  const ParsedOtlpSpan* op = nullptr;
  for (const auto& span : spans) (span.parent_span_id.empty() ? run : op) = &span;
  ASSERT_NE(run, nullptr);
  ASSERT_NE(op, nullptr);

  // Ids: derived from the journal's ids; the operation is the run's child in the same trace.
  const std::string run_id = ref.value().run_id;
  EXPECT_EQ(run->trace_id, OtlpTraceId(kRun, run_id));
  EXPECT_EQ(run->span_id, OtlpRunSpanId(kRun, run_id));
  EXPECT_EQ(op->trace_id, run->trace_id);
  EXPECT_EQ(op->parent_span_id, run->span_id);
  const std::string& operation_id = operation_id_seen;
  EXPECT_EQ(op->span_id, OtlpOperationSpanId(kRun, run_id, operation_id));
  EXPECT_LE(run->start_unix_ns, op->start_unix_ns);
  EXPECT_LE(op->end_unix_ns, run->end_unix_ns);

  EXPECT_EQ(run->name, "workflow pay");
  EXPECT_EQ(run->attributes.at("reckon.workflow.id"), kRun);
  EXPECT_EQ(run->attributes.at("reckon.run.status"), "completed");
  EXPECT_EQ(EventNames(*run).front(), "workflow.started");
  EXPECT_EQ(EventNames(*run).back(), "workflow.completed");

  EXPECT_EQ(op->name, "execute_tool send_payout");
  EXPECT_EQ(op->attributes.at("gen_ai.operation.name"), "execute_tool");
  EXPECT_EQ(op->attributes.at("gen_ai.tool.name"), "send_payout");
  EXPECT_EQ(op->attributes.at("gen_ai.tool.call.id"), operation_id);
  EXPECT_EQ(op->attributes.at("reckon.step"), "send_payout#1");
  EXPECT_EQ(op->attributes.at("reckon.side_effect"), "non_repeatable_write");
  EXPECT_EQ(op->attributes.at("reckon.state"), "committed");
  EXPECT_EQ(op->attributes.at("reckon.attempt"), "1");
  EXPECT_FALSE(op->attributes.contains("reckon.partial"));
  EXPECT_EQ(op->status_code, 0);

  // The transitions, in journal order, with what each one carries.
  const auto names = EventNames(*op);
  ASSERT_GE(names.size(), 6u);
  EXPECT_EQ(names.front(), "operation.prepared");
  EXPECT_EQ(names.back(), "operation.committed");
  const auto* granted = FindEvent(*op, "approval.granted");
  ASSERT_NE(granted, nullptr);
  EXPECT_EQ(granted->attributes.at("by"), "alice@example.com");
  ASSERT_NE(FindEvent(*op, "operation.attempted"), nullptr);
  const auto* unknown = FindEvent(*op, "operation.outcome_unknown");
  ASSERT_NE(unknown, nullptr);
  EXPECT_FALSE(unknown->attributes.at("reason").empty());
  const auto* reconciled = FindEvent(*op, "operation.reconciled");
  ASSERT_NE(reconciled, nullptr);
  EXPECT_EQ(reconciled->attributes.at("result"), "committed");
}

TEST(OtlpTraceTest, ARestartExportsTheSameIdsAndMarksWhatItDidNotSee) {
  OtlpReceiver receiver;
  PayoutScenario scenario;
  EngineHarness& h = scenario.h();
  storage::RunRef ref;
  {
    auto before = OtlpTraceSink::Start(FastExport(receiver));
    RECKON_ASSERT_OK(before);
    h.set_trace(before.value().get());
    h.Boot();
    auto started = h.Start(kRun, "pay", json::object{{"customer", kCustomer}});
    RECKON_ASSERT_OK(started);
    ref = started.value();
    ASSERT_TRUE(h.RunUntilState(kRun, "send_payout#1", OperationState::kAwaitingApproval));
    h.Crash();
    h.Shutdown();
    h.set_trace(nullptr);
  }  // nothing ended before the crash: nothing was exported
  EXPECT_TRUE(receiver.requests().empty());

  auto after = OtlpTraceSink::Start(FastExport(receiver));
  RECKON_ASSERT_OK(after);
  h.set_trace(after.value().get());
  h.Boot();
  RECKON_ASSERT_OK(h.Recover());
  scenario.Approve();
  ASSERT_TRUE(h.RunUntilSettled(kRun));
  const std::string operation_id = h.Operation(kRun, "send_payout#1")->operation_id;
  h.Shutdown();
  after.value().reset();

  const auto spans = SpansOf(receiver);
  ASSERT_EQ(spans.size(), 2u);
  for (const auto& span : spans) {
    EXPECT_EQ(span.trace_id, OtlpTraceId(kRun, ref.run_id));
    EXPECT_EQ(span.attributes.at("reckon.partial"), "true") << span.name;
    if (span.parent_span_id.empty()) {
      EXPECT_EQ(span.span_id, OtlpRunSpanId(kRun, ref.run_id));
    } else {
      EXPECT_EQ(span.parent_span_id, OtlpRunSpanId(kRun, ref.run_id));
      EXPECT_EQ(span.span_id, OtlpOperationSpanId(kRun, ref.run_id, operation_id));
      EXPECT_EQ(EventNames(span).back(), "operation.committed");
    }
  }
}

class OtlpBadCollectorTest : public ::testing::TestWithParam<OtlpReceiver::Mode> {};

TEST_P(OtlpBadCollectorTest, CostsSpansNeverProgress) {
  OtlpReceiver receiver(GetParam());
  testkit::FakeProvider provider;
  EngineHarness h;
  RECKON_ASSERT_OK(h.tools().Register(
      testkit::ProviderTool(FastContract("reserve", SideEffect::kIdempotentWrite), provider)));
  OtlpExporterOptions options = FastExport(receiver);
  options.max_queue = 8;  // smaller than what the runs produce: the queue overflows too
  options.max_batch = 4;
  options.max_retries = 1;
  options.request_timeout = 200ms;
  options.shutdown_grace = 100ms;
  auto sink = OtlpTraceSink::Start(options);
  RECKON_ASSERT_OK(sink);
  h.set_trace(sink.value().get());
  h.Boot();
  constexpr int kRuns = 20;
  for (int i = 0; i < kRuns; ++i) {
    const std::string id = "w" + std::to_string(i);
    RECKON_ASSERT_OK(
        h.Start(id, kCallOnce, CallOnceInput("reserve", FastInput("acct-" + std::to_string(i), 100))));
  }
  // Every run completes within the harness's usual wait, the collector notwithstanding.
  for (int i = 0; i < kRuns; ++i) {
    const std::string id = "w" + std::to_string(i);
    ASSERT_TRUE(h.RunUntilSettled(id)) << id;
    EXPECT_EQ(h.Describe(id)->status, RunStatus::kCompleted) << id;
  }
  h.Shutdown();
  // Two spans per run (the run and its one operation), each dropped and counted.
  ASSERT_TRUE(Eventually([&] { return sink.value()->dropped() == 2 * kRuns; }))
      << sink.value()->dropped();
  EXPECT_EQ(sink.value()->exported(), 0u);
  EXPECT_FALSE(receiver.requests().empty());  // it was tried
}

INSTANTIATE_TEST_SUITE_P(HangsOrFails, OtlpBadCollectorTest,
                         ::testing::Values(OtlpReceiver::Mode::kHang,
                                           OtlpReceiver::Mode::kFail500),
                         [](const auto& info) {
                           return info.param == OtlpReceiver::Mode::kHang ? "Hangs" : "Fails500";
                         });

TEST(OtlpEmbeddedHostTest, ExportsWhenGivenAnEndpointAndRefusesABadOne) {
  TempDir dir;
  EXPECT_FALSE(EmbeddedHost::Open(dir.File("bad.db"), {.otlp_endpoint = "https://x:4318"}));

  OtlpReceiver receiver;
  testkit::FakeProvider provider;
  auto host = EmbeddedHost::Open(dir.File("journal.db"),
                                 {.otlp_endpoint = receiver.endpoint()});
  RECKON_ASSERT_OK(host);
  EmbeddedHost& h = *host.value();
  ASSERT_NE(h.otlp(), nullptr);
  RECKON_ASSERT_OK(h.tools().Register(
      testkit::ProviderTool(FastContract("reserve", SideEffect::kIdempotentWrite), provider)));
  RECKON_ASSERT_OK(RegisterTestWorkflows(h.workflows()));
  auto main = [&h]() -> boost::asio::awaitable<Result<void>> {
    RECKON_CO_TRY(co_await h.Recover());
    json::value input = CallOnceInput("reserve", FastInput("acct-1", 100));
    auto start = h.engine().Start("embedded-1", kCallOnce, std::move(input));
    RECKON_CO_TRY(co_await std::move(start));
    co_return co_await h.UntilIdle();
  };
  RECKON_ASSERT_OK(h.Run(main()));
  host.value().reset();  // flushes

  const auto spans = SpansOf(receiver);
  ASSERT_EQ(spans.size(), 2u);
  for (const auto& span : spans) {
    EXPECT_EQ(span.service_name, "reckon-embedded");
    EXPECT_EQ(span.attributes.at("reckon.workflow.id"), "embedded-1");
  }
}

}  // namespace
}  // namespace reckon
