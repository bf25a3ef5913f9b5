#include "reckon/contract/approval_rule.h"

#include <boost/json/parse.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace reckon {
namespace {

using ::testing::HasSubstr;

boost::json::value J(const char* text) { return boost::json::parse(text); }

ApprovalRule When(std::vector<ApprovalCondition> conditions) {
  return {.kind = ApprovalKind::kWhen,
          .when = std::move(conditions),
          .grant_ttl = std::chrono::seconds(60)};
}

bool Required(const ApprovalRule& rule, const char* input) {
  auto result = ApprovalRequired(rule, J(input));
  EXPECT_TRUE(result) << result.error().ToString();
  return result.value();
}

TEST(ApprovalRuleTest, NoneAndAlwaysIgnoreTheInput) {
  EXPECT_FALSE(Required({.kind = ApprovalKind::kNone}, "{}"));
  EXPECT_TRUE(Required({.kind = ApprovalKind::kAlways}, "{}"));
}

TEST(ApprovalRuleTest, EveryComparisonOperator) {
  auto check = [](CompareOp op, const char* value, const char* input) {
    return Required(When({{"n", op, J(value)}}), input);
  };
  EXPECT_TRUE(check(CompareOp::kGreater, "10", R"({"n":11})"));
  EXPECT_FALSE(check(CompareOp::kGreater, "10", R"({"n":10})"));
  EXPECT_TRUE(check(CompareOp::kGreaterEqual, "10", R"({"n":10})"));
  EXPECT_FALSE(check(CompareOp::kGreaterEqual, "10", R"({"n":9.5})"));
  EXPECT_TRUE(check(CompareOp::kLess, "10", R"({"n":9.5})"));
  EXPECT_FALSE(check(CompareOp::kLess, "10", R"({"n":10})"));
  EXPECT_TRUE(check(CompareOp::kLessEqual, "10", R"({"n":10.0})"));
  EXPECT_FALSE(check(CompareOp::kLessEqual, "10", R"({"n":11})"));
  EXPECT_TRUE(check(CompareOp::kEqual, "10", R"({"n":10.0})"));
  EXPECT_TRUE(check(CompareOp::kEqual, R"("gbp")", R"({"n":"gbp"})"));
  EXPECT_FALSE(check(CompareOp::kEqual, R"("gbp")", R"({"n":"eur"})"));
  EXPECT_TRUE(check(CompareOp::kNotEqual, R"("gbp")", R"({"n":"eur"})"));
  EXPECT_FALSE(check(CompareOp::kNotEqual, "true", R"({"n":true})"));
}

TEST(ApprovalRuleTest, AnyConditionSufficesAndNestedFieldsWork) {
  ApprovalRule rule = When({{"amount.cents", CompareOp::kGreater, 10000},
                            {"reason", CompareOp::kEqual, "fraud"}});
  EXPECT_FALSE(Required(rule, R"({"amount":{"cents":5},"reason":"damaged"})"));
  EXPECT_TRUE(Required(rule, R"({"amount":{"cents":50000},"reason":"damaged"})"));
  EXPECT_TRUE(Required(rule, R"({"amount":{"cents":5},"reason":"fraud"})"));
}

TEST(ApprovalRuleTest, AMissingOrMistypedFieldIsAnErrorNotANo) {
  ApprovalRule rule = When({{"amount_cents", CompareOp::kGreater, 10000}});
  auto missing = ApprovalRequired(rule, J(R"({"reason":"x"})"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), Errc::kInvalidArgument);
  EXPECT_THAT(missing.error().message(), HasSubstr("field 'amount_cents' is missing"));
  auto mistyped = ApprovalRequired(rule, J(R"({"amount_cents":"20000"})"));
  ASSERT_FALSE(mistyped);
  EXPECT_THAT(mistyped.error().message(), HasSubstr("is string, not a number"));
}

TEST(ApprovalRuleTest, DescribesItself) {
  EXPECT_EQ(DescribeApprovalRule({.kind = ApprovalKind::kNone}), "never");
  EXPECT_EQ(DescribeApprovalRule({.kind = ApprovalKind::kAlways}), "always");
  EXPECT_EQ(DescribeApprovalRule(When({{"amount_cents", CompareOp::kGreater, 10000},
                                       {"reason", CompareOp::kEqual, "fraud"}})),
            R"(when amount_cents > 10000 or reason == "fraud")");
}

TEST(ApprovalRuleTest, NamesAndSymbolsRoundTrip) {
  for (CompareOp op : {CompareOp::kGreater, CompareOp::kGreaterEqual, CompareOp::kLess,
                       CompareOp::kLessEqual, CompareOp::kEqual, CompareOp::kNotEqual}) {
    EXPECT_EQ(ParseCompareOp(CompareOpSymbol(op)).value(), op);
  }
  for (ApprovalKind kind : {ApprovalKind::kNone, ApprovalKind::kAlways, ApprovalKind::kWhen}) {
    EXPECT_EQ(ParseApprovalKind(ApprovalKindName(kind)).value(), kind);
  }
  EXPECT_THAT(ParseCompareOp("=>").error().message(), HasSubstr("unknown comparison '=>'"));
  EXPECT_FALSE(ParseApprovalKind("sometimes"));
}

}  // namespace
}  // namespace reckon
