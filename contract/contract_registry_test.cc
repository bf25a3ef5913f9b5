#include "reckon/contract/contract_registry.h"

#include <boost/json/parse.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reckon/contract/contract_json.h"
#include "reckon/contract/testing/test_contracts.h"

namespace reckon {
namespace {

using ::testing::HasSubstr;
using testing_contracts::Lookup;
using testing_contracts::Payout;

boost::json::value J(const char* text) { return boost::json::parse(text); }

TEST(ContractRegistryTest, RegistersFindsAndListsByName) {
  ContractRegistry registry;
  ASSERT_TRUE(registry.Register(Payout()));
  ASSERT_TRUE(registry.Register(Lookup()));
  EXPECT_EQ(registry.size(), 2u);
  ASSERT_NE(registry.Find("send_payout"), nullptr);
  EXPECT_EQ(registry.Find("send_payout")->side_effect, SideEffect::kNonRepeatableWrite);
  EXPECT_EQ(registry.Find("nope"), nullptr);
  auto all = registry.All();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]->name, "get_payee");
  EXPECT_EQ(all[1]->name, "send_payout");
}

TEST(ContractRegistryTest, RefusesDuplicatesAndInvalidContractsUnchanged) {
  ContractRegistry registry;
  ASSERT_TRUE(registry.Register(Payout()));
  auto duplicate = registry.Register(Payout());
  ASSERT_FALSE(duplicate);
  EXPECT_EQ(duplicate.error().code(), Errc::kAlreadyExists);
  EXPECT_EQ(duplicate.error().message(), "contract 'send_payout' is already registered");

  ToolContract broken = Lookup();
  broken.attempt_timeout = {};
  auto invalid = registry.Register(broken);
  ASSERT_FALSE(invalid);
  EXPECT_EQ(invalid.error().code(), Errc::kInvalidArgument);
  EXPECT_THAT(invalid.error().message(), HasSubstr("contract 'get_payee': attempt_timeout"));
  EXPECT_EQ(registry.size(), 1u);
  EXPECT_EQ(registry.Find("get_payee"), nullptr);
}

TEST(ContractRegistryTest, ValidatesToolInputWithTheCompiledSchema) {
  ContractRegistry registry;
  ASSERT_TRUE(registry.Register(Payout()));
  EXPECT_TRUE(registry.ValidateToolInput("send_payout", J(R"({"payee":"p","amount_cents":5})")));
  auto bad = registry.ValidateToolInput("send_payout", J(R"({"payee":"p","amount_cents":"5"})"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), Errc::kInvalidArgument);
  EXPECT_EQ(bad.error().message(),
            "tool 'send_payout' input: amount_cents: must be an integer, got string");
  auto unknown = registry.ValidateToolInput("send_money", J("{}"));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), Errc::kNotFound);
}

TEST(RegisteredContractTest, KeepsTheHashAndEvaluatesValidInputsOnly) {
  auto registered = RegisteredContract::Create(Payout());
  ASSERT_TRUE(registered) << registered.error().ToString();
  const RegisteredContract& r = registered.value();
  EXPECT_EQ(r.hash(), ContractHash(Payout()).value());
  EXPECT_TRUE(r.ApprovalRequiredFor(J(R"({"payee":"p","amount_cents":20000})")).value());
  EXPECT_FALSE(r.ApprovalRequiredFor(J(R"({"payee":"p","amount_cents":200})")).value());
  EXPECT_FALSE(r.ApprovalRequiredFor(J(R"({"payee":"p"})")));
  EXPECT_FALSE(r.IntentHashOf(J(R"({"payee":"p","amount_cents":0})")));
}

TEST(RegisteredContractTest, IntentHashLeavesSecretsOut) {
  auto r = RegisteredContract::Create(Payout()).value();
  auto a = r.IntentHashOf(J(R"({"payee":"p","amount_cents":5,"card_token":"tok_a"})"));
  auto b = r.IntentHashOf(J(R"({"card_token":"tok_b","amount_cents":5,"payee":"p"})"));
  auto c = r.IntentHashOf(J(R"({"payee":"p","amount_cents":6,"card_token":"tok_a"})"));
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a.value(), b.value());
  EXPECT_NE(a.value(), c.value());
}

}  // namespace
}  // namespace reckon
