// A tool's report is redacted whole (engine/tool_report.h): every field a tool or its provider
// fills, for an attempt, a lookup and a completion, and a person's reference and note; the
// decider journals a provider reference that embeds the call's secret (as it is, JSON-escaped
// or percent-encoded) with "[secret]" in its place, on every path that commits.
#include "reckon/engine/tool_report.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "reckon/engine/decider.h"

namespace reckon {
namespace {

using namespace std::chrono_literals;
using namespace storage;
namespace json = boost::json;

const TimePoint kT0 = FromMicros(1'700'000'000'000'000);

// A card token with characters a URL and a JSON text escape.
constexpr char kToken[] = "tok/secret+canary=\"42\"";
constexpr char kTokenInUrl[] = "tok%2Fsecret%2Bcanary%3D%2242%22";
constexpr char kTokenInJson[] = R"(tok/secret+canary=\"42\")";

ToolContract Contract(std::string name, bool lookup) {
  ToolContract c;
  c.name = std::move(name);
  c.description = "Pays out to a card.";
  c.side_effect = SideEffect::kNonRepeatableWrite;
  c.attempt_timeout = 2s;
  c.retry = {.max_attempts = 3, .backoff = {200ms, 2.0, 5s}, .retryable_codes = {},
             .reconcile_on_unknown = true};
  c.reconcile = lookup ? ReconcilePolicy{.mode = ReconcileMode::kLookup, .max_attempts = 3,
                                         .backoff = {1s, 2.0, 30s}, .grace = 500ms}
                       : ReconcilePolicy{.mode = ReconcileMode::kNeedsHuman};
  c.evidence = "The payout id.";
  c.completion.deadline = 10s;
  c.secret_fields = {"card_token"};
  c.input_schema = json::parse(
      R"({"type": "object", "properties": {"card_token": {"type": "string"}}})");
  return c;
}

TEST(ToolReportTest, EveryFieldOfAnAttemptsReportIsRedacted) {
  const ToolContract contract = Contract("payout", true);
  const json::value input = json::object{{"card_token", kToken}, {"amount", 5}};
  const SecretRedactor redact = CallRedactor(contract, &input, {"vault-secret-0042"});
  AttemptOutcome report;
  report.success = true;
  report.output = json::object{{"card_token", kToken},
                               {"id", std::string("re_") + kToken},
                               {"vault", "vault-secret-0042"}};
  report.provider_ref = std::string("re_") + kToken + "_1";
  report.code = std::string("code_") + kTokenInUrl;
  report.message = std::string(R"(refused {"card_token":")") + kTokenInJson + "\"}";
  report.heartbeat_details_json =
      json::serialize(json::object{{"card_token", kToken}, {"at", "vault-secret-0042"}});
  const AttemptOutcome redacted = RedactReport(redact, report);
  EXPECT_EQ(redacted.output,
            json::parse(R"({"id": "re_[secret]", "vault": "[secret]"})"));
  EXPECT_EQ(redacted.provider_ref, "re_[secret]_1");
  EXPECT_EQ(redacted.code, "code_[secret]");
  EXPECT_EQ(redacted.message, R"(refused {"card_token":"[secret]"})");
  EXPECT_EQ(redacted.heartbeat_details_json, R"({"at":"[secret]"})");
  EXPECT_TRUE(redacted.success);
}

TEST(ToolReportTest, EveryFieldOfALookupsReportIsRedacted) {
  const ToolContract contract = Contract("payout", true);
  // After a restart the input may not be in memory: the values the tool named still count.
  const SecretRedactor redact = CallRedactor(contract, nullptr, {kToken});
  ReconcileOutcome report;
  report.verdict = ReconcileVerdict::kCommitted;
  report.output = json::object{{"refund_id", std::string("re_") + kToken}};
  report.provider_ref = std::string("re_") + kToken;
  report.message = std::string("GET /refunds?card=") + kTokenInUrl;
  const ReconcileOutcome redacted = RedactReport(redact, report);
  EXPECT_EQ(redacted.verdict, ReconcileVerdict::kCommitted);
  EXPECT_EQ(redacted.output, json::parse(R"({"refund_id": "re_[secret]"})"));
  EXPECT_EQ(redacted.provider_ref, "re_[secret]");
  EXPECT_EQ(redacted.message, "GET /refunds?card=[secret]");
}

// The engine's own pass, with the input in memory: what reaches the journal on each path.
class DeciderRedactionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const bool lookup : {true, false}) {
      auto registered = contracts_.Register(Contract(lookup ? "payout" : "manual_payout", lookup));
      ASSERT_TRUE(registered) << registered.error().ToString();
    }
    Decider d(state_, contracts_, kT0);
    ASSERT_TRUE(d.Start("wf", json::object{}));
    std::vector<Command> commands;
    for (const char* tool : {"payout", "manual_payout"}) {
      commands.push_back(ScheduleCall{std::string("s-") + tool, tool,
                                      json::object{{"card_token", kToken}, {"amount", 5}}});
    }
    ASSERT_TRUE(d.ApplyCommands(std::move(commands)));
  }
  OperationRecord& Op(const std::string& tool) { return *state_.FindOperationByStep("s-" + tool); }

  // The events a batch at `at` emits for `input`.
  template <class Apply>
  std::vector<Event> Batch(TimePoint at, Apply apply) {
    Decider d(state_, contracts_, at);
    Result<void> applied = apply(d);
    EXPECT_TRUE(applied) << applied.error().ToString();
    return d.events();
  }

  // A lost reply: the outcome is unknown, and the operation waits for its next step.
  void Lose(const std::string& tool) {
    AttemptOutcome lost;
    lost.kind = FailureKind::kUnknown;
    lost.code = "reply_lost";
    Batch(kT0, [&](Decider& d) { return d.AttemptFinished(Op(tool).operation_id, 1, lost); });
  }

  template <class E>
  static const E& Only(const std::vector<Event>& events) {
    const E* found = nullptr;
    for (const Event& event : events) {
      if (const E* e = std::get_if<E>(&event.body)) found = e;
    }
    EXPECT_NE(found, nullptr);
    static const E kNone{};
    return found != nullptr ? *found : kNone;
  }

  ContractRegistry contracts_;
  RunState state_{RunRef{"wf-1", "r1"}};
};

TEST_F(DeciderRedactionTest, AnAttemptsReferenceIsJournaledRedacted) {
  AttemptOutcome done;
  done.success = true;
  done.output = json::object{{"id", std::string("re_") + kTokenInUrl}};
  done.provider_ref = std::string("re_") + kTokenInUrl;
  const auto events = Batch(kT0, [&](Decider& d) {
    return d.AttemptFinished(Op("payout").operation_id, 1, done);
  });
  const auto& committed = Only<OperationCommitted>(events);
  EXPECT_EQ(committed.provider_ref, "re_[secret]");
  EXPECT_EQ(committed.result_json, R"({"id":"re_[secret]"})");
}

TEST_F(DeciderRedactionTest, AReconciliationsReferenceIsJournaledRedacted) {
  Lose("payout");
  const OperationRecord& op = Op("payout");
  ASSERT_EQ(op.state, OperationState::kOutcomeUnknown);
  Batch(FromMicros(op.due_at_us), [&](Decider& d) { return d.Due(op.operation_id); });
  ASSERT_EQ(Op("payout").state, OperationState::kReconciling);
  ReconcileOutcome found;
  found.verdict = ReconcileVerdict::kCommitted;
  found.provider_ref = std::string("re_") + kTokenInJson;
  found.output = json::object{{"refund_id", std::string("re_") + kToken}};
  const auto events = Batch(FromMicros(op.due_at_us), [&](Decider& d) {
    return d.ReconcileFinished(Op("payout").operation_id, Op("payout").reconcile_rounds, found);
  });
  EXPECT_EQ(Only<ReconciliationResult>(events).provider_ref, "re_[secret]");
  EXPECT_EQ(Only<OperationCommitted>(events).provider_ref, "re_[secret]");
  EXPECT_EQ(Only<OperationCommitted>(events).result_json, R"({"refund_id":"re_[secret]"})");
}

TEST_F(DeciderRedactionTest, ACompletionsReportIsJournaledRedacted) {
  AttemptOutcome accepted;
  accepted.accepted = true;
  accepted.provider_ref = std::string("req_") + kToken;
  auto events = Batch(kT0, [&](Decider& d) {
    return d.AttemptFinished(Op("payout").operation_id, 1, accepted);
  });
  EXPECT_EQ(Only<AttemptAccepted>(events).provider_ref, "req_[secret]");
  Completion completion;
  completion.operation_id = Op("payout").operation_id;
  completion.delivery_id = "d-1";
  completion.outcome.kind = FailureKind::kDefinitive;
  completion.outcome.code = std::string("declined_") + kTokenInUrl;
  completion.outcome.message = std::string("card ") + kToken + " declined";
  events = Batch(kT0, [&](Decider& d) { return d.CompletionArrived(completion); });
  EXPECT_EQ(Only<CompletionReceived>(events).code, "declined_[secret]");
  EXPECT_EQ(Only<OperationRejected>(events).message, "card [secret] declined");
}

TEST_F(DeciderRedactionTest, APersonsReferenceAndNoteAreJournaledRedacted) {
  Lose("manual_payout");
  const OperationRecord& op = Op("manual_payout");
  if (op.state == OperationState::kOutcomeUnknown) {  // no lookup: a person decides
    Batch(FromMicros(op.due_at_us), [&](Decider& d) { return d.Due(op.operation_id); });
  }
  ASSERT_EQ(Op("manual_payout").state, OperationState::kNeedsHuman);
  HumanResolution resolution;
  resolution.operation_id = Op("manual_payout").operation_id;
  resolution.committed = true;
  resolution.provider_ref = std::string("re_") + kToken;
  resolution.resolved_by = "alice";
  resolution.note = std::string("found re_") + kToken + " in the dashboard";
  const auto events = Batch(kT0 + 1min, [&](Decider& d) { return d.Resolve(resolution); });
  EXPECT_EQ(Only<HumanResolved>(events).provider_ref, "re_[secret]");
  EXPECT_EQ(Only<HumanResolved>(events).note, "found re_[secret] in the dashboard");
  EXPECT_EQ(Only<OperationCommitted>(events).provider_ref, "re_[secret]");
  EXPECT_EQ(json::parse(Only<OperationCommitted>(events).result_json).at("provider_ref"),
            "re_[secret]");
}

}  // namespace
}  // namespace reckon
