// Bad input at the embedded engine's entrances (Engine::Start, Signal, Cancel, DecideApproval,
// Resolve), on a real journal: a 100 KB id, a newline, bytes that are not UTF-8, a NUL and the
// empty string are refused in every identifier, with a message naming the field, and nothing
// is journaled (not an event, not a byte of the refused value). A workflow input or a signal
// payload that carries a secret field is refused the same way. What a tool reports (an output
// that echoes its input, a failure message that quotes it) and what a person writes about an
// operation reach the journal, and the code, without the call's secrets.
#include <gtest/gtest.h>

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "reckon/base/identifier.h"
#include "reckon/storage/testing/test_backend.h"
#include "reckon/host/testing/engine_harness.h"
#include "reckon/testkit/gtest.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/journal_view.h"
#include "reckon/host/testing/test_workflows.h"

namespace reckon {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using namespace reckon::testing;
using namespace reckon::storage;

// Every refused value below contains this, so a byte search of the journal finds any of them.
constexpr char kCanary[] = "zzcanary";
constexpr char kSecret[] = "tok_SECRET_canary_9Qx7";

// The refused forms of an identifier, each holding the canary.
std::vector<std::pair<std::string, std::string>> BadIds() {
  const std::string c = kCanary;
  return {{c + std::string(100 * 1024, 'x'), "is 102408 bytes long"},
          {c + "\nforged log line", "contains a newline (0x0a) at byte 8"},
          {c + "\xff\xfe", "is not valid UTF-8 (byte 0xff at byte 8)"},
          {c + std::string("\0tail", 5), "contains a NUL byte at byte 8"},
          {"", "is empty"}};
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Where the journal holds `needle`: its runs and events read back through the Journal
// interface (any backend) and, on SQLite, every byte of its files (database, WAL, shared
// memory). Only while no engine is booted.
std::vector<std::string> JournalHolding(EngineHarness& h, const std::string& needle) {
  std::vector<std::string> holding = JournalEntriesHolding(h.journal(), needle);
  if (storage::TestOnPostgres()) return holding;  // the server's files are shared and compressed
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(h.dir().path())) {
    if (entry.path().filename().string().rfind("journal.db", 0) != 0) continue;
    ++files;
    if (ReadFile(entry.path()).find(needle) != std::string::npos) {
      holding.push_back(entry.path().string());
    }
  }
  EXPECT_GE(files, 1);
  return holding;
}

std::optional<Result<void>> Refusal(const Result<RunRef>& started) {
  if (started) return Result<void>(Ok());
  return Result<void>(started.error());
}

void ExpectRefused(const std::optional<Result<void>>& result, const std::string& field,
                   const std::string& problem) {
  ASSERT_TRUE(result) << "did not complete";
  ASSERT_FALSE(*result) << field << " was accepted";
  EXPECT_EQ(result->error().code(), Errc::kInvalidArgument) << result->error().ToString();
  EXPECT_EQ(result->error().message().rfind(field, 0), 0u) << result->error().message();
  EXPECT_NE(result->error().message().find(problem), std::string::npos)
      << result->error().message();
  EXPECT_EQ(result->error().message().find('\n'), std::string::npos);
}

class EngineInputTest : public ::testing::Test {
 protected:
  // Runs until `id` waits for a signal.
  bool UntilWaitingForASignal(const std::string& id) {
    return h_.RunUntil([&] {
      auto run = h_.Describe(id);
      return run && run->wait.kind == WaitKind::kSignal;
    });
  }

  void SetUp() override {
    ToolContract pay = FastContract("send_payout", SideEffect::kNonRepeatableWrite);
    pay.approval = {.kind = ApprovalKind::kWhen,
                    .when = {{"amount_cents", CompareOp::kGreater, 10000}},
                    .grant_ttl = 3600s};
    RECKON_ASSERT_OK(h_.tools().Register(testkit::ProviderTool(pay, provider_)));
  }

  testkit::FakeProvider provider_;
  EngineHarness h_;
};

TEST_F(EngineInputTest, BadIdentifiersAreRefusedAtEveryEntranceAndNothingIsJournaled) {
  h_.Boot();
  // A run to signal, cancel and decide on: it waits for the signal "go".
  RECKON_ASSERT_OK(h_.Start("waiting-1", kSignalThenCall,
                            SignalThenCallInput("go", "send_payout", FastInput("acct-1", 100))));
  ASSERT_TRUE(UntilWaitingForASignal("waiting-1"));
  Engine& engine = h_.engine();
  const json::value input = CallOnceInput("send_payout", FastInput("acct-1", 100));
  for (const auto& [bad, problem] : BadIds()) {
    SCOPED_TRACE(QuoteForMessage(bad));
    ExpectRefused(Refusal(h_.Start(bad, kCallOnce, input)), "workflow id", problem);
    ExpectRefused(Refusal(h_.Start("typed-1", bad, input)), "workflow type", problem);
    ExpectRefused(h_.Await(engine.Signal(bad, "go", "null")), "workflow id", problem);
    ExpectRefused(h_.Await(engine.Signal("waiting-1", bad, "null")), "signal name", problem);
    ExpectRefused(h_.Await(engine.Cancel(bad, "")), "workflow id", problem);
    ExpectRefused(h_.Await(engine.DecideApproval("waiting-1",
                                                 ApprovalDecision{"", "op_1", "", true, bad, ""})),
                  "decided by", problem);
    ExpectRefused(h_.Await(engine.Resolve("waiting-1", HumanResolution{bad, false, "", "bob", ""})),
                  "operation id", problem);
    if (!bad.empty()) {
      ExpectRefused(h_.Await(engine.DecideApproval(
                        "waiting-1", ApprovalDecision{bad, "", "", true, "alice", ""})),
                    "approval id", problem);
      ExpectRefused(
          h_.Await(engine.Resolve("waiting-1", HumanResolution{"op_1", true, "ref", bad, ""})),
          "resolved by", problem);
    }
  }
  // Texts: one line, bounded.
  ExpectRefused(h_.Await(engine.Cancel("waiting-1", std::string(kCanary) + "\nline two")), "reason",
                "contains a newline");
  ExpectRefused(h_.Await(engine.Resolve(
                    "waiting-1", HumanResolution{"op_1", false, "", "bob",
                                                 std::string(kCanary) + std::string(2000, 'n')})),
                "note", "is 2008 bytes long");
  EXPECT_EQ(h_.Describe("waiting-1")->status, RunStatus::kRunning);
  h_.Shutdown();

  auto runs = h_.journal().ListRuns();
  RECKON_ASSERT_OK(runs);
  ASSERT_EQ(runs.value().size(), 1u) << "only the good run was journaled";
  EXPECT_EQ(runs.value()[0].ref.workflow_id, "waiting-1");
  const std::vector<Event> events = h_.Events("waiting-1");
  EXPECT_TRUE(BodiesOf<SignalReceived>(events).empty()) << EventNames(events);
  EXPECT_TRUE(BodiesOf<WorkflowCancelRequested>(events).empty()) << EventNames(events);
  EXPECT_EQ(JournalHolding(h_, kCanary), std::vector<std::string>());
}

TEST_F(EngineInputTest, AWorkflowInputOrSignalPayloadWithASecretFieldIsRefused) {
  h_.Boot();
  auto start =
      h_.Start("pay-1", kCallOnce, CallOnceInput("send_payout", FastInput("acct-1", 100, kSecret)));
  ASSERT_FALSE(start);
  EXPECT_EQ(start.error().code(), Errc::kInvalidArgument);
  EXPECT_EQ(start.error().message(),
            "the input of workflow 'pay-1' carries a value for 'card_token', a secret field of "
            "tool 'send_payout' (at input.card_token); secrets come from the worker's side: the "
            "tool fetches them (e.g. from a vault) when it runs, so they are never journaled. "
            "Remove 'input.card_token'");

  RECKON_ASSERT_OK(h_.Start("waiting-2", kSignalThenCall,
                            SignalThenCallInput("go", "send_payout", FastInput("acct-1", 100))));
  ASSERT_TRUE(UntilWaitingForASignal("waiting-2"));
  const std::string payload = json::serialize(json::object{{"card_token", kSecret}});
  auto signalled = h_.Await(h_.engine().Signal("waiting-2", "go", payload));
  ASSERT_TRUE(signalled);
  ASSERT_FALSE(*signalled);
  EXPECT_EQ(signalled->error().message().rfind(
                "the payload of signal 'go' carries a value for 'card_token'", 0),
            0u)
      << signalled->error().message();
  EXPECT_EQ(signalled->error().message().find(kSecret), std::string::npos);
  h_.Shutdown();

  auto pay = h_.journal().FindLatestRun("pay-1");
  RECKON_ASSERT_OK(pay);
  EXPECT_FALSE(pay.value()) << "the refused start was journaled";
  EXPECT_TRUE(BodiesOf<SignalReceived>(h_.Events("waiting-2")).empty());
  EXPECT_EQ(JournalHolding(h_, kSecret), std::vector<std::string>());
}

// The card token comes from the worker's vault (here: the test), as in the refund sample.
Task<WorkflowOutcome> PayWithCard(WorkflowContext& ctx, json::value input,
                                  const std::string* vault) {
  const std::int64_t amount = input.as_object().at("amount_cents").as_int64();
  auto pay = ctx.Call("send_payout", FastInput("acct-9", amount, *vault));
  CallResult paid = co_await pay;
  if (!paid) co_return paid.error();
  co_return json::object{{"output", paid.value().output}, {"ref", paid.value().provider_ref}};
}

// A careless tool: its output echoes the input it got, secrets included, and a rejection quotes
// the card token.
Tool EchoingTool(const ToolContract& contract) {
  Tool tool{contract,
            [](json::value input, ToolCallContext) -> boost::asio::awaitable<AttemptOutcome> {
              const std::string token(input.as_object().at("card_token").as_string());
              if (input.as_object().at("amount_cents").as_int64() == 13) {
                co_return ToolFailed(FailureKind::kDefinitive, "card_declined",
                                     "card " + token + " was declined");
              }
              json::object output{{"echo", input}, {"note", "charged " + token}};
              co_return ToolSucceeded(output, "ref-for-" + token);
            },
            [](json::value, ToolCallContext) -> boost::asio::awaitable<ReconcileOutcome> {
              co_return ReconcileOutcome{};
            }};
  return tool;
}

TEST(EngineSecretTest, WhatAToolOrAPersonReportsLosesTheCallsSecrets) {
  EngineHarness h;
  ToolContract contract = FastContract("send_payout", SideEffect::kNonRepeatableWrite);
  contract.approval = {.kind = ApprovalKind::kWhen,
                       .when = {{"amount_cents", CompareOp::kGreater, 10000}},
                       .grant_ttl = 3600s};
  RECKON_ASSERT_OK(h.tools().Register(EchoingTool(contract)));
  const std::string vault = kSecret;
  const std::string* token = &vault;
  RECKON_ASSERT_OK(h.workflows().Register("pay", [token](WorkflowContext& ctx, json::value in) {
    return PayWithCard(ctx, std::move(in), token);
  }));
  h.Boot();
  RECKON_ASSERT_OK(h.Start("echo-1", "pay", json::object{{"amount_cents", 100}}));
  RECKON_ASSERT_OK(h.Start("declined-1", "pay", json::object{{"amount_cents", 13}}));
  RECKON_ASSERT_OK(h.Start("denied-1", "pay", json::object{{"amount_cents", 25000}}));
  ASSERT_TRUE(h.RunUntilSettled("echo-1"));
  ASSERT_TRUE(h.RunUntilSettled("declined-1"));
  ASSERT_TRUE(h.RunUntilState("denied-1", "send_payout#1", OperationState::kAwaitingApproval));
  const OperationRecord waiting = *h.Operation("denied-1", "send_payout#1");
  RECKON_ASSERT_OK(h.Decide(
      "denied-1", ApprovalDecision{waiting.approval_id, "", waiting.intent_hash, false, "alice",
                                   std::string("card ") + kSecret + " is stolen"}));
  ASSERT_TRUE(h.RunUntilSettled("denied-1"));

  // The code saw what the journal holds: the token replaced wherever the tool put it.
  const RunSummary echo = *h.Describe("echo-1");
  ASSERT_EQ(echo.status, RunStatus::kCompleted) << echo.stuck_reason;
  const json::value result = json::parse(echo.result_json);
  EXPECT_EQ(result.at("output").at("echo"),
            json::parse(R"({"account":"acct-9","amount_cents":100,"card_token":"[secret]"})"));
  EXPECT_EQ(result.at("output").at("note"), "charged [secret]");
  EXPECT_EQ(result.at("ref"), "ref-for-[secret]");
  EXPECT_EQ(h.Describe("declined-1")->status, RunStatus::kFailed);
  EXPECT_EQ(h.Describe("denied-1")->status, RunStatus::kFailed);
  h.Shutdown();

  const auto rejected = BodiesOf<OperationRejected>(h.Events("declined-1"));
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].message, "card [secret] was declined");
  const auto denied = BodiesOf<ApprovalDenied>(h.Events("denied-1"));
  ASSERT_EQ(denied.size(), 1u);
  EXPECT_EQ(denied[0].reason, "card [secret] is stolen");
  EXPECT_EQ(JournalHolding(h, kSecret), std::vector<std::string>());
}

}  // namespace
}  // namespace reckon
