// Agent plans: every kind of bad plan gets an error naming the step and the field; a fuzz of
// random malformed plans never crashes the parser or the validator.
#include "reckon/plan/plan.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <cstdlib>
#include <random>

#include "reckon/contract/testing/test_contracts.h"

namespace reckon {
namespace {

namespace json = boost::json;

// get_payee (read_only, input {payee}) returns {payment_id, amount_cents, status} here;
// send_payout takes {payee, amount_cents, memo?, card_token?}: see contract/testing/test_contracts.h.
ContractRegistry Contracts() {
  ContractRegistry registry;
  ToolContract lookup = testing_contracts::Lookup();
  lookup.output_schema = json::parse(R"({"type": "object", "properties": {
      "payment_id": {"type": "string"}, "amount_cents": {"type": "integer"},
      "status": {"type": "string"}}})");
  EXPECT_TRUE(registry.Register(lookup));
  EXPECT_TRUE(registry.Register(testing_contracts::Payout()));
  return registry;
}

std::string LookupName() { return testing_contracts::Lookup().name; }
std::string PayName() { return testing_contracts::Payout().name; }

json::value GoodPlan() {
  return json::parse(R"({
    "plan_id": "plan-1",
    "steps": [
      {"id": "lookup", "tool": ")" + LookupName() + R"(", "input": {"payee": "acct-1"}},
      {"id": "pay", "tool": ")" + PayName() + R"(", "depends_on": ["lookup"],
       "input": {"payee": "acct-1", "amount_cents": {"$ref": "steps.lookup.output.amount_cents"}},
       "condition": {"$ref": "steps.lookup.output.status", "op": "==", "value": "captured"},
       "overrides": {"max_attempts": 1, "require_approval": true}}
    ]})");
}

// The error for `plan`, after parsing and validating; empty when it is valid.
std::string ErrorOf(const json::value& plan) {
  auto parsed = ParsePlanJson(plan);
  if (!parsed) return parsed.error().message();
  auto valid = ValidatePlan(parsed.value(), Contracts());
  return valid ? std::string() : valid.error().message();
}

json::value Mutated(std::function<void(json::object&)> change) {
  json::value plan = GoodPlan();
  change(plan.as_object());
  return plan;
}

json::object& Step(json::object& plan, std::size_t i) {
  return plan["steps"].as_array()[i].as_object();
}

TEST(PlanTest, AGoodPlanPasses) {
  EXPECT_EQ(ErrorOf(GoodPlan()), "");
  auto plan = ParsePlanJson(GoodPlan()).value();
  EXPECT_EQ(plan.steps[1].overrides.max_attempts, 1u);
  EXPECT_TRUE(plan.steps[1].overrides.require_approval);
  // The normal form parses back to the same plan, and the hash is stable.
  auto again = ParsePlanJson(PlanToJson(plan)).value();
  EXPECT_EQ(PlanHash(again), PlanHash(plan));
  EXPECT_EQ(PlanHash(plan).size(), 64u);
}

struct BadCase {
  const char* name;
  std::function<void(json::object&)> change;
  const char* expected;  // a piece of the message
};

TEST(PlanTest, EveryKindOfBadPlanNamesTheStepAndTheField) {
  const std::vector<BadCase> cases = {
      {"unknown tool", [](json::object& p) { Step(p, 1)["tool"] = "send_moneyy"; },
       "step 'pay': tool: no contract for tool 'send_moneyy'"},
      {"input fails the schema", [](json::object& p) {
         Step(p, 1)["input"].as_object()["payee"] = 42; },
       "step 'pay': input.payee: must be a string"},
      {"missing required input", [](json::object& p) {
         Step(p, 1)["input"].as_object().erase("payee"); },
       "step 'pay': input.payee: missing required property"},
      {"reference to a missing step", [](json::object& p) {
         Step(p, 1)["input"].as_object()["amount_cents"] =
             json::object{{"$ref", "steps.lokup.output.amount_cents"}}; },
       "step 'pay': input.amount_cents: reference 'steps.lokup.output.amount_cents' names no step"},
      {"reference to a missing field", [](json::object& p) {
         Step(p, 1)["input"].as_object()["amount_cents"] =
             json::object{{"$ref", "steps.lookup.output.amount"}}; },
       "returns no field 'amount'"},
      {"reference to a step it does not depend on", [](json::object& p) {
         Step(p, 1).erase("depends_on"); },
       "which this step does not depend on; add it to depends_on"},
      {"reference of the wrong type", [](json::object& p) {
         Step(p, 1)["input"].as_object()["amount_cents"] =
             json::object{{"$ref", "steps.lookup.output.status"}}; },
       "step 'pay': input.amount_cents: tool 'send_payout' expects integer, but the reference gives string"},
      {"a cycle", [](json::object& p) {
         Step(p, 0)["depends_on"] = json::array{"pay"}; },
       "depends_on forms a cycle"},
      {"a duplicate step id", [](json::object& p) {
         Step(p, 1)["id"] = "lookup"; },
       "step 'lookup': id: used by more than one step"},
      {"an override that loosens attempts", [](json::object& p) {
         Step(p, 1)["overrides"].as_object()["max_attempts"] = 9; },
       "step 'pay': overrides.max_attempts: 9 would loosen the contract of 'send_payout'"},
      {"an override that drops approval", [](json::object& p) {
         Step(p, 1)["overrides"].as_object()["require_approval"] = false; },
       "step 'pay': overrides.require_approval: false would loosen the contract"},
      {"an unknown field", [](json::object& p) { Step(p, 1)["retries"] = 3; },
       "step 'pay': unknown field 'retries'"},
      {"a malformed reference", [](json::object& p) {
         Step(p, 1)["input"].as_object()["memo"] = json::object{{"$ref", "lookup.amount"}}; },
       "step 'pay': input.memo: reference 'lookup.amount' must read steps.<step id>.output"},
      {"a bad condition", [](json::object& p) {
         Step(p, 1)["condition"].as_object()["op"] = "~="; },
       "step 'pay': condition.op: required, one of"},
      {"a dependency on an unknown step", [](json::object& p) {
         Step(p, 1)["depends_on"] = json::array{"lookup", "ghost"}; },
       "step 'pay': depends_on: no step 'ghost'"},
      {"no plan id", [](json::object& p) { p.erase("plan_id"); }, "plan_id: required"},
      {"no steps", [](json::object& p) { p["steps"] = json::array(); },
       "steps: required, a non-empty array"},
  };
  for (const BadCase& c : cases) {
    const std::string error = ErrorOf(Mutated(c.change));
    EXPECT_NE(error.find(c.expected), std::string::npos)
        << c.name << ": expected to find\n  " << c.expected << "\nin\n  " << error;
  }
}

// GoodPlan with a third step that publishes what the payout did.
json::value WithPublish(std::function<void(json::object&)> change = nullptr) {
  json::value plan = GoodPlan();
  plan.as_object()["steps"].as_array().push_back(json::parse(R"({
      "id": "notify", "depends_on": ["pay"],
      "publish": {"subject": "payouts.sent",
                  "payload": {"payee": "acct-1", "lookup": {"$ref": "steps.lookup.output"}}}})"));
  if (change) change(plan.as_object());
  return plan;
}

TEST(PlanTest, APublishStepParsesValidatesAndKeepsItsNormalForm) {
  EXPECT_EQ(ErrorOf(WithPublish()), "");
  auto plan = ParsePlanJson(WithPublish()).value();
  const PlanStep& notify = plan.steps[2];
  ASSERT_TRUE(notify.publish.has_value());
  EXPECT_EQ(notify.publish->subject, "payouts.sent");
  EXPECT_TRUE(notify.tool.empty());
  EXPECT_EQ(PlanStepAction(notify), "publish payouts.sent");
  EXPECT_EQ(PlanStepAction(plan.steps[1]), PayName());
  auto again = ParsePlanJson(PlanToJson(plan)).value();
  EXPECT_EQ(PlanHash(again), PlanHash(plan));
  EXPECT_TRUE(again.steps[2].publish.has_value());
  // A publish step is part of what the hash binds.
  auto other = ParsePlanJson(WithPublish([](json::object& p) {
                 Step(p, 2)["publish"].as_object()["subject"] = "payouts.done";
               })).value();
  EXPECT_NE(PlanHash(other), PlanHash(plan));
  // A payload is optional.
  EXPECT_EQ(ErrorOf(WithPublish([](json::object& p) {
              Step(p, 2)["publish"].as_object().erase("payload");
            })),
            "");
}

TEST(PlanTest, EveryKindOfBadPublishStepNamesTheStepAndTheField) {
  const std::vector<BadCase> cases = {
      {"publish and a tool", [](json::object& p) { Step(p, 2)["tool"] = "x"; },
       "step 'notify': tool: a publish step has no tool"},
      {"publish and input", [](json::object& p) { Step(p, 2)["input"] = json::object(); },
       "step 'notify': input: a publish step has no input"},
      {"publish and overrides",
       [](json::object& p) { Step(p, 2)["overrides"] = json::object{{"max_attempts", 1}}; },
       "step 'notify': overrides: a publish step has no overrides"},
      {"not an object", [](json::object& p) { Step(p, 2)["publish"] = "payouts.sent"; },
       "step 'notify': publish: must be an object"},
      {"no subject",
       [](json::object& p) { Step(p, 2)["publish"].as_object().erase("subject"); },
       "step 'notify': publish.subject: required"},
      {"a wildcard subject",
       [](json::object& p) { Step(p, 2)["publish"].as_object()["subject"] = "payouts.*"; },
       "step 'notify': publish.subject 'payouts.*' is not valid: wildcards are for subscribers"},
      {"an empty token",
       [](json::object& p) { Step(p, 2)["publish"].as_object()["subject"] = "payouts..sent"; },
       "is not valid: it has an empty token"},
      {"an unknown field",
       [](json::object& p) { Step(p, 2)["publish"].as_object()["headers"] = json::object(); },
       "step 'notify': publish: unknown field 'headers'"},
      {"a reference to a step it does not depend on",
       [](json::object& p) { Step(p, 2)["depends_on"] = json::array(); },
       "step 'notify': publish.payload.lookup: reference 'steps.lookup.output' reads step "
       "'lookup', which this step does not depend on"},
      {"a malformed reference",
       [](json::object& p) {
         Step(p, 2)["publish"].as_object()["payload"] = json::object{{"$ref", "lookup"}};
       },
       "step 'notify': publish.payload: reference 'lookup' must read steps.<step id>.output"},
  };
  for (const BadCase& c : cases) {
    const std::string error = ErrorOf(WithPublish(c.change));
    EXPECT_NE(error.find(c.expected), std::string::npos)
        << c.name << ": expected to find\n  " << c.expected << "\nin\n  " << error;
  }
}

// A plan is journaled whole (the input of WorkflowStarted) and shown by `reckon show`, so it
// may carry no value for a tool's secret field: not a literal, not a reference.
TEST(PlanTest, ASecretFieldIsRefusedWhetherLiteralOrReference) {
  const std::string literal = ErrorOf(Mutated([](json::object& p) {
    Step(p, 1)["input"].as_object()["card_token"] = "tok_canary_plan";
  }));
  EXPECT_NE(literal.find("step 'pay': input.card_token: 'card_token' is a secret field of tool "
                         "'send_payout', and a plan may not carry a value for it: secrets come "
                         "from the worker's side (the tool fetches them, e.g. from a vault, when "
                         "it runs), so they are never journaled; remove input.card_token from "
                         "the plan"),
            std::string::npos) << literal;
  EXPECT_EQ(literal.find("tok_canary_plan"), std::string::npos) << literal;
  const std::string reference = ErrorOf(Mutated([](json::object& p) {
    Step(p, 1)["input"].as_object()["card_token"] =
        json::object{{"$ref", "steps.lookup.output.status"}};
  }));
  EXPECT_NE(reference.find("step 'pay': input.card_token: 'card_token' is a secret field"),
            std::string::npos) << reference;
  // The same field name on a tool without secrets is an ordinary (here: unknown) field.
  const std::string other = ErrorOf(Mutated([](json::object& p) {
    Step(p, 0)["input"].as_object()["card_token"] = "x";
  }));
  EXPECT_EQ(other.find("secret"), std::string::npos) << other;
}

TEST(PlanTest, ANestedSecretFieldIsRefusedAtTheFieldOrAtAReferenceThatHoldsIt) {
  ContractRegistry contracts = Contracts();
  ToolContract card = testing_contracts::Lookup();
  card.name = "charge_card";
  card.secret_fields = {"card.number"};
  card.input_schema = json::parse(R"({"type":"object","properties":{"payee":{"type":"string"},
      "card":{"type":"object","properties":{"number":{"type":"string"},
                                            "brand":{"type":"string"}}}}})");
  ASSERT_TRUE(contracts.Register(card));
  auto error_of = [&](const char* input) {
    auto plan = ParsePlanJson(json::parse(std::string(R"({"plan_id":"p","steps":[
        {"id":"lookup","tool":"get_payee","input":{"payee":"a"}},
        {"id":"charge","tool":"charge_card","depends_on":["lookup"],"input":)") + input + "}]}"));
    EXPECT_TRUE(plan) << plan.error().ToString();
    auto valid = ValidatePlan(plan.value(), contracts);
    return valid ? std::string() : valid.error().message();
  };
  EXPECT_EQ(error_of(R"({"card":{"brand":"visa"}})"), "");
  EXPECT_NE(error_of(R"({"card":{"number":"4242"}})").find("input.card.number: 'card.number'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"card":{"$ref":"steps.lookup.output"}})")
                .find("input.card: 'card.number'"),
            std::string::npos);
}

TEST(PlanTest, EveryProblemIsReportedAtOnce) {
  const std::string error = ErrorOf(Mutated([](json::object& p) {
    Step(p, 0)["tool"] = "nope";
    Step(p, 1)["input"].as_object()["extra"] = 1;
  }));
  EXPECT_NE(error.find("(2 problems)"), std::string::npos) << error;
}

TEST(PlanTest, ReferencesResolveAndConditionsEvaluate) {
  std::map<std::string, json::value> outputs;
  outputs["lookup"] = json::parse(R"({"amount_cents": 1200, "status": "captured",
                                      "items": [{"sku": "a"}]})");
  auto resolved = ResolveRefs(json::parse(R"({"a": {"$ref": "steps.lookup.output.amount_cents"},
      "b": [1, {"$ref": "steps.lookup.output.items.0.sku"}], "c": "literal"})"), outputs);
  ASSERT_TRUE(resolved) << resolved.error().ToString();
  EXPECT_EQ(json::serialize(resolved.value()), R"({"a":1200,"b":[1,"a"],"c":"literal"})");
  auto missing = ResolveRefs(json::parse(R"({"a": {"$ref": "steps.lookup.output.nope"}})"),
                             outputs);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("has no field 'nope'"), std::string::npos);
  auto plan = ParsePlanJson(GoodPlan()).value();
  EXPECT_TRUE(EvaluateCondition(*plan.steps[1].condition, outputs).value());
  outputs["lookup"].as_object()["status"] = "refunded";
  EXPECT_FALSE(EvaluateCondition(*plan.steps[1].condition, outputs).value());
}

// Random damage to a good plan: deleted members, swapped types, garbage references, cycles.
// The parser and the validator must answer (valid, or an error that says something), never
// crash or hang.
TEST(PlanTest, RandomMalformedPlansNeverCrashTheValidator) {
  // RECKON_PLAN_FUZZ_SEED explores other plans; the default keeps the test reproducible.
  const char* seed_text = std::getenv("RECKON_PLAN_FUZZ_SEED");
  const std::uint64_t seed = seed_text != nullptr ? std::strtoull(seed_text, nullptr, 10) : 20261130;
  std::mt19937_64 random(seed);
  const std::vector<json::value> junk = {
      nullptr, 7, -1, 1e300, "x", "", json::array{}, json::object{},
      json::object{{"$ref", "steps.pay.output"}}, json::object{{"$ref", 3}},
      json::object{{"$ref", "steps..output"}}, json::array{"lookup", "pay", "pay"}};
  int invalid = 0, valid = 0;
  for (int i = 0; i < 3000; ++i) {
    json::value plan = GoodPlan();
    const int edits = 1 + static_cast<int>(random() % 4);
    for (int e = 0; e < edits; ++e) {
      // Pick a random object or array inside the plan and damage it.
      std::vector<json::value*> nodes;
      std::function<void(json::value&)> walk = [&](json::value& v) {
        nodes.push_back(&v);
        if (v.is_object()) for (auto& [k, m] : v.as_object()) walk(m);
        if (v.is_array()) for (auto& m : v.as_array()) walk(m);
      };
      walk(plan);
      json::value& node = *nodes[random() % nodes.size()];
      const json::value& replacement = junk[random() % junk.size()];
      if (node.is_object() && !node.as_object().empty() && random() % 2) {
        auto it = node.as_object().begin() + static_cast<long>(random() % node.as_object().size());
        if (random() % 2) node.as_object().erase(it); else it->value() = replacement;
      } else if (node.is_array() && !node.as_array().empty() && random() % 2) {
        node.as_array()[random() % node.as_array().size()] = replacement;
      } else {
        node = replacement;
      }
    }
    const std::string error = ErrorOf(plan);
    if (error.empty()) {
      ++valid;
    } else {
      ++invalid;
      EXPECT_NE(error.find("invalid"), std::string::npos) << error;
    }
  }
  EXPECT_GT(invalid, 2000);
  std::printf("random plans (seed %llu): %d invalid (each with a message), %d still valid\n",
              static_cast<unsigned long long>(seed), invalid, valid);
}

}  // namespace
}  // namespace reckon
