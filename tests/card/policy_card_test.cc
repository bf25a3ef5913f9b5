// The contract card's answers 4 and 6 against the behaviour.
//   4: every code the card lists as definitive, retryable or unknown is treated so by the
//      failure policy the engine acts on (DecideAfterFailure, whatever the worker reported
//      short of unknown), and every code the contract lists is on the card.
//   6: in real embedded runs, changing a field the card lists as an intent field changes the
//      intent hash the engine journals in OperationPrepared (which an approval is bound to);
//      changing a secret field does not; and every declared field is one or the other.
#include <boost/asio/awaitable.hpp>
#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "reckon/contract/contract_json.h"
#include "reckon/contract/failure_policy.h"
#include "reckon/contract/field_path.h"
#include "reckon/testkit/gtest.h"
#include "tests/card/card_run.h"

namespace reckon::testing {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

ToolContract Transfer() {
  ToolContract c;
  c.name = "transfer";
  c.description = "Move money.";
  c.side_effect = SideEffect::kNonRepeatableWrite;
  c.attempt_timeout = 2s;
  c.retry.max_attempts = 3;
  c.retry.retryable_codes = {"rate_limited", "not_sent"};
  c.retry.reconcile_on_unknown = true;
  c.reconcile.mode = ReconcileMode::kLookup;
  c.definitive_codes = {"card_declined", "insufficient_funds"};
  c.unknown_codes = {"gateway_timeout"};
  c.secret_fields = {"card.number"};
  c.input_schema = json::parse(R"({"type": "object", "additionalProperties": false,
      "required": ["payment_id", "amount_cents", "card"],
      "properties": {"payment_id": {"type": "string"}, "amount_cents": {"type": "integer"},
                     "reason": {"type": "string"},
                     "card": {"type": "object", "additionalProperties": false,
                              "properties": {"number": {"type": "string"},
                                             "holder": {"type": "string"}}}}})");
  c.evidence = "The transfer id.";
  return c;
}

std::vector<ToolContract> ContractsOfFile(const std::string& path, const char* array_key) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  json::value file = json::parse(text.str());
  const json::array& entries =
      array_key == nullptr ? file.as_array() : file.at(array_key).as_array();
  std::vector<ToolContract> out;
  for (const json::value& entry : entries) {
    auto contract = ContractFromJson(entry.at("contract"));
    EXPECT_TRUE(contract) << contract.error().ToString();
    if (contract) out.push_back(std::move(contract).value());
  }
  return out;
}

// The test's contract, and the samples' tools files (HTTP and MCP).
std::vector<ToolContract> Contracts() {
  std::vector<ToolContract> out{Transfer()};
  for (ToolContract& c : ContractsOfFile(std::string(RECKON_SOURCE_DIR) +
                                             "/samples/refund/tools.json", "tools")) {
    out.push_back(std::move(c));
  }
  for (ToolContract& c : ContractsOfFile(std::string(RECKON_SOURCE_DIR) +
                                             "/samples/mcp/contracts.json", nullptr)) {
    out.push_back(std::move(c));
  }
  return out;
}

TEST(PolicyCardTest, EachCodeIsTreatedAsTheCardClassifiesIt) {
  const std::pair<const char*, FailureKind> classes[] = {
      {"definitive_codes", FailureKind::kDefinitive},
      {"retryable_codes", FailureKind::kRetryable},
      {"unknown_codes", FailureKind::kUnknown}};
  for (const ToolContract& c : Contracts()) {
    const json::object facts = CardFacts(c, "errors");
    std::set<std::string> on_card;
    for (const auto& [key, kind] : classes) {
      for (const json::value& code : facts.at(key).as_array()) {
        on_card.insert(std::string(code.as_string()));
        for (FailureKind reported : {FailureKind::kDefinitive, FailureKind::kRetryable}) {
          FailureReport report;
          report.reported = reported;
          report.code = code.as_string();
          const FailureDecision decision = DecideAfterFailure(c, report);
          EXPECT_EQ(FailureKindName(decision.kind), FailureKindName(kind))
              << c.name << ": the card lists " << code << " among " << key << "; reported "
              << FailureKindName(reported) << ", the engine " << decision.reason;
        }
      }
    }
    for (const auto* list : {&c.definitive_codes, &c.retry.retryable_codes, &c.unknown_codes}) {
      for (const std::string& code : *list) {
        EXPECT_TRUE(on_card.contains(code)) << c.name << ": " << code << " is not on the card";
      }
    }
  }
}

// Changes the value at `path` (a string or an integer) in place.
void Change(json::value& input, const std::string& path) {
  json::value* at = &input;
  for (const std::string& segment : SplitFieldPath(path)) at = &at->as_object().at(segment);
  if (at->is_string()) {
    *at = std::string(at->as_string()) + "-changed";
  } else {
    *at = at->to_number<std::int64_t>() + 1;
  }
}

// Transfer's input and secret fields on a tool the engine can call without a lookup.
ToolContract IntentTool() {
  ToolContract c = Transfer();
  c.name = "intent_tool";
  c.side_effect = SideEffect::kIdempotentWrite;
  c.retry = RetryPolicy{};
  c.retry.max_attempts = 1;
  c.reconcile = ReconcilePolicy{};
  c.attempt_timeout = 10s;
  return c;
}

boost::asio::awaitable<AttemptOutcome> Succeed() {
  co_return ToolSucceeded(json::object{{"ok", true}}, "t-1");
}

TEST(PolicyCardTest, IntentFieldsAreWhatTheJournaledIntentHashCovers) {
  const ToolContract contract = IntentTool();
  const json::object facts = CardFacts(contract, "approval");
  auto env = MakeCardEnv();
  RECKON_ASSERT_OK(env->tools().Register(
      Tool{contract, [](json::value, ToolCallContext) { return Succeed(); }, {}}));
  // The full input is `input` with the secret `card.number` set (by the workflow).
  const json::value input = json::parse(R"({"payment_id": "pay-1", "amount_cents": 500,
      "reason": "r", "card": {"holder": "Ada"}})");
  int runs = 0;
  auto hash_of = [&](json::value call_input, std::string card_number = "4242") {
    auto run = RunCallOne(*env, "intent-" + std::to_string(++runs), "intent_tool", "move",
                          std::move(call_input), {{"card.number", card_number}});
    EXPECT_TRUE(run) << run.error().ToString();
    return run ? run.value().prepared.intent_hash : std::string("(no run)");
  };
  const std::string base = hash_of(input);
  ASSERT_EQ(base.size(), 64u);

  std::set<std::string> covered;
  for (const json::value& field : facts.at("intent_fields").as_array()) {
    const std::string path(field.as_string());
    covered.insert(path);
    // card.number is not in `input`: the workflow sets it (a secret value).
    json::value changed = input;
    if (path != "card.number") Change(changed, path);
    EXPECT_NE(path != "card.number" ? hash_of(changed) : hash_of(input, "5555"), base)
        << "the card lists " << path << " as an intent field";
  }
  ASSERT_EQ(json::serialize(facts.at("secret_fields")), R"(["card.number"])");
  EXPECT_EQ(hash_of(input, "5555"), base) << "the card lists card.number as a secret field";
  // Every declared field is on the card as one or the other.
  for (const std::string& path : DeclaredFieldPaths(contract.input_schema)) {
    bool secret = false;
    for (const json::value& s : facts.at("secret_fields").as_array()) {
      const std::string name(s.as_string());
      secret = secret || path == name || path.starts_with(name + ".");
    }
    EXPECT_TRUE(covered.contains(path) != secret) << path;
  }
  EXPECT_TRUE(covered.contains("card.holder"));
  EXPECT_FALSE(covered.contains("card.number"));
}

}  // namespace
}  // namespace reckon::testing
