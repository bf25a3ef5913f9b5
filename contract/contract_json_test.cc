#include "reckon/contract/contract_json.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reckon/contract/testing/test_contracts.h"

namespace reckon {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using testing_contracts::Lookup;
using testing_contracts::Payout;

std::string FromJsonError(const char* text) {
  auto result = ContractFromJson(boost::json::parse(text));
  if (result) return "";
  EXPECT_EQ(result.error().code(), Errc::kInvalidArgument);
  return result.error().message();
}

TEST(ContractJsonTest, RoundTripsEveryField) {
  ToolContract c = Payout();
  c.side_effect = SideEffect::kDeduplicatedWrite;
  c.dedup_window = 24h;
  c.approval.wait_deadline = 86400s;
  c.approval.when.push_back({"memo", CompareOp::kNotEqual, nullptr});
  c.completion.deadline = 90s;
  for (const ToolContract& original : {c, Payout(), Lookup()}) {
    auto back = ContractFromJson(ContractToJson(original));
    ASSERT_TRUE(back) << back.error().ToString();
    EXPECT_EQ(back.value(), original) << boost::json::serialize(ContractToJson(original));
  }
}

TEST(ContractJsonTest, WritesReadableNames) {
  boost::json::value json = ContractToJson(Payout());
  EXPECT_EQ(json.at("side_effect"), "non_repeatable_write");
  EXPECT_EQ(json.at("attempt_timeout_ms"), 2000);
  EXPECT_EQ(json.at("reconcile").at("mode"), "lookup");
  EXPECT_EQ(json.at("reconcile").at("grace_ms"), 500);
  EXPECT_EQ(json.at("approval").at("when").at(0).at("op"), ">");
  EXPECT_EQ(json.at("approval").at("grant_ttl_s"), 3600);
  EXPECT_FALSE(json.as_object().contains("dedup_window_s"));
  // Absent unless declared, so contracts written before it keep their hash.
  EXPECT_FALSE(json.as_object().contains("completion"));
  ToolContract async = Payout();
  async.completion.deadline = 90s;
  EXPECT_EQ(ContractToJson(async).at("completion").at("deadline_ms"), 90000);
}

TEST(ContractJsonTest, AbsentOptionalFieldsTakeDefaults) {
  auto c = ContractFromJson(boost::json::parse(
      R"({"name":"t","side_effect":"read_only","input_schema":{"type":"object"}})"));
  ASSERT_TRUE(c) << c.error().ToString();
  EXPECT_EQ(c.value().retry, RetryPolicy{});
  EXPECT_EQ(c.value().approval.kind, ApprovalKind::kNone);
  EXPECT_FALSE(c.value().dedup_window);
}

TEST(ContractJsonTest, ErrorsNameTheField) {
  EXPECT_EQ(FromJsonError("[]"), "contract JSON: (root): must be an object");
  EXPECT_EQ(FromJsonError(R"({"side_effect":"read_only","input_schema":{}})"),
            "contract JSON: name: missing required field");
  EXPECT_EQ(FromJsonError(R"({"name":"t","input_schema":{}})"),
            "contract JSON: side_effect: missing required field");
  EXPECT_EQ(FromJsonError(R"({"name":"t","side_effect":"read_only"})"),
            "contract JSON: input_schema: missing required field");
  EXPECT_THAT(FromJsonError(R"({"name":"t","side_effect":"write","input_schema":{}})"),
              HasSubstr("contract JSON: side_effect: unknown side effect 'write'"));
  EXPECT_EQ(FromJsonError(R"({"name":"t","side_effect":"read_only","input_schema":{},
                              "retry":{"backoff":{"multiplier":"2"}}})"),
            "contract JSON: retry.backoff.multiplier: must be a number");
  EXPECT_EQ(FromJsonError(R"({"name":"t","side_effect":"read_only","input_schema":{},
                              "retry":{"max_attempts":1.5}})"),
            "contract JSON: retry.max_attempts: must be an integer");
  EXPECT_EQ(FromJsonError(R"({"name":"t","side_effect":"read_only","input_schema":{},
                              "approval":{"kind":"when",
                                          "when":[{"field":"a","op":"~","value":1}]}})"),
            "contract JSON: approval.when[0].op: unknown comparison '~' (use >, >=, <, <=, == "
            "or !=)");
  EXPECT_EQ(FromJsonError(R"({"name":"t","side_effect":"read_only","input_schema":{},
                              "approval":{"kind":"when","when":[{"field":"a","op":">"}]}})"),
            "contract JSON: approval.when[0].value: missing required field");
  EXPECT_EQ(FromJsonError(R"({"name":"t","side_effect":"read_only","input_schema":{},
                              "secret_fields":["a",1]})"),
            "contract JSON: secret_fields: must be an array of strings");
  EXPECT_EQ(FromJsonError(R"({"name":"t","side_effect":"read_only","input_schema":{},
                              "reconcile":{"mode":"ask_model"}})"),
            "contract JSON: reconcile.mode: unknown reconcile mode 'ask_model' (use unset, "
            "lookup or needs_human)");
}

TEST(ContractJsonTest, UnknownFieldsAreRefusedNotIgnored) {
  EXPECT_EQ(FromJsonError(R"({"name":"t","side_effect":"read_only","input_schema":{},
                              "aproval":{"kind":"always"}})"),
            "contract JSON: aproval: unknown field");
  EXPECT_EQ(FromJsonError(R"({"name":"t","side_effect":"read_only","input_schema":{},
                              "retry":{"max_attempt":3}})"),
            "contract JSON: retry.max_attempt: unknown field");
}

TEST(ContractHashTest, IsStableAndSensitiveToEveryDecision) {
  auto base = ContractHash(Payout());
  ASSERT_TRUE(base) << base.error().ToString();
  EXPECT_EQ(base.value().size(), 64u);
  EXPECT_EQ(ContractHash(Payout()).value(), base.value());

  ToolContract c = Payout();
  c.side_effect = SideEffect::kIdempotentWrite;
  EXPECT_NE(ContractHash(c).value(), base.value());
  c = Payout();
  c.approval.when[0].value = 20000;
  EXPECT_NE(ContractHash(c).value(), base.value());
  c = Payout();
  c.reconcile.grace = 501ms;
  EXPECT_NE(ContractHash(c).value(), base.value());
}

TEST(ContractHashTest, IgnoresSchemaMemberOrder) {
  ToolContract a = Lookup();
  ToolContract b = Lookup();
  b.input_schema = boost::json::parse(
      R"({"properties":{"payee":{"type":"string"}},"required":["payee"],"type":"object"})");
  EXPECT_EQ(ContractHash(a).value(), ContractHash(b).value());
}

}  // namespace
}  // namespace reckon
