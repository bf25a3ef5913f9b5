// Secret fields stay out of what is journaled: a workflow input or signal payload that carries
// a value at a secret path of any known contract is refused with a message that names the tool
// and the field but never the value, and a tool's report loses its secret paths and every
// secret value of the call's input.
#include "reckon/contract/secret_fields.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "reckon/contract/testing/test_contracts.h"

namespace reckon {
namespace {

namespace json = boost::json;
using ::testing::HasSubstr;
using ::testing::Not;

// send_payout (secret card_token) and a card tool whose secret is nested: card.number.
ContractRegistry Registry() {
  ContractRegistry registry;
  EXPECT_TRUE(registry.Register(testing_contracts::Payout()));
  ToolContract card = testing_contracts::Lookup();
  card.name = "charge_card";
  card.secret_fields = {"card.number"};
  card.input_schema = json::parse(R"({"type":"object","properties":{
      "payee":{"type":"string"},
      "card":{"type":"object","properties":{"number":{"type":"string"},
                                            "brand":{"type":"string"}}}}})");
  auto registered = registry.Register(card);
  EXPECT_TRUE(registered) << registered.error().ToString();
  return registry;
}

TEST(SecretFieldsTest, AnInputWithoutSecretFieldsPasses) {
  const ContractRegistry registry = Registry();
  EXPECT_TRUE(RefuseSecretValues(json::parse(R"({"payment_id":"pay-1","card":{"brand":"visa"},
      "items":[{"card_token_hint":"x"}],"memo":"card_token"})"),
                                 registry, "the input"));
  EXPECT_TRUE(RefuseSecretValues(json::value(nullptr), registry, "the input"));
  EXPECT_TRUE(RefuseSecretValues(json::parse("[1, \"card_token\"]"), registry, "the input"));
}

TEST(SecretFieldsTest, ASecretFieldAnywhereIsRefusedNamingToolAndFieldNotTheValue) {
  const ContractRegistry registry = Registry();
  auto top = RefuseSecretValues(json::parse(R"({"card_token":"tok_canary_1"})"), registry,
                                "the input of workflow 'w-1'");
  ASSERT_FALSE(top);
  EXPECT_EQ(top.error().code(), Errc::kInvalidArgument);
  EXPECT_EQ(top.error().message(),
            "the input of workflow 'w-1' carries a value for 'card_token', a secret field of "
            "tool 'send_payout' (at card_token); secrets come from the worker's side: the tool "
            "fetches them (e.g. from a vault) when it runs, so they are never journaled. Remove "
            "'card_token'");

  auto deep = RefuseSecretValues(
      json::parse(R"({"orders":[{"id":1},{"pay":{"card_token":{"nested":"tok_canary_2"}}}]})"),
      registry, "the payload");
  ASSERT_FALSE(deep);
  EXPECT_THAT(deep.error().message(), HasSubstr("(at orders[1].pay.card_token)"));
  EXPECT_THAT(deep.error().message(), Not(HasSubstr("tok_canary")));

  auto nested = RefuseSecretValues(json::parse(R"({"customer":{"card":{"number":"4242"}}})"),
                                   registry, "the input");
  ASSERT_FALSE(nested);
  EXPECT_THAT(nested.error().message(),
              HasSubstr("'card.number', a secret field of tool 'charge_card' (at "
                        "customer.card.number)"));
  // Only the full path is secret: a card without a number is not.
  EXPECT_TRUE(RefuseSecretValues(json::parse(R"({"card":{"brand":"visa"}})"), registry, "x"));
  // A null value is a value too: the name is reserved.
  EXPECT_FALSE(RefuseSecretValues(json::parse(R"({"card_token":null})"), registry, "x"));
}

TEST(SecretFieldsTest, SecretValuesOfAnInput) {
  const std::vector<std::string> fields = {"card_token", "card.number", "pin"};
  auto values = SecretValuesOf(
      json::parse(R"({"card_token":"tok_abcdefgh","card":{"number":{"a":"4242424242424242",
          "b":["x", 7]}},"pin":1234,"memo":"m"})"),
      fields);
  EXPECT_THAT(values, ::testing::ElementsAre("tok_abcdefgh", "4242424242424242", "x", "7", "1234"));
  EXPECT_TRUE(SecretValuesOf(json::parse(R"({"memo":"m"})"), fields).empty());
}

TEST(SecretFieldsTest, AReportLosesSecretPathsAndValues) {
  const std::vector<std::string> fields = {"card_token"};
  SecretRedactor redactor{
      fields, SecretValuesOf(json::parse(R"({"card_token":"tok_canary_0123"})"), fields)};
  // A tool that echoes its input, and quotes the token inside other strings.
  json::value output = json::parse(R"({"refund_id":"re_1","card_token":"tok_canary_0123",
      "echo":{"note":"charged tok_canary_0123 twice: tok_canary_0123"},
      "list":["tok_canary_0123", 5]})");
  EXPECT_EQ(redactor.Output(output),
            json::parse(R"({"refund_id":"re_1","echo":{"note":"charged [secret] twice: [secret]"},
                            "list":["[secret]",5]})"));
  EXPECT_EQ(redactor.Text("card tok_canary_0123 declined"), "card [secret] declined");

  // Short values: only a whole string value, never inside text.
  SecretRedactor short_values{fields, {"123"}};
  EXPECT_EQ(json::serialize(short_values.Output(json::parse(R"({"cvv":"123","id":"order-1234"})"))),
            R"({"cvv":"[secret]","id":"order-1234"})");
  EXPECT_EQ(short_values.Text("order 123"), "order 123");

  // Without the input in memory only the paths go.
  SecretRedactor paths_only{fields, {}};
  EXPECT_EQ(json::serialize(paths_only.Output(json::parse(R"({"card_token":"t","a":"t"})"))),
            R"({"a":"t"})");
}

// A message may quote the secret inside a JSON body (escaped) or a URL (percent-encoded).
TEST(SecretFieldsTest, ASecretIsFoundAsItIsJsonEscapedAndPercentEncoded) {
  const std::vector<std::string> fields = {"card_token"};
  const std::string token = "tok \"quoted\"/slash\\9";
  SecretRedactor redactor{fields, {token}};
  EXPECT_EQ(redactor.Text("sent " + token), "sent [secret]");
  EXPECT_EQ(redactor.Text(R"(body {"card_token":"tok \"quoted\"/slash\\9"} refused)"),
            R"(body {"card_token":"[secret]"} refused)");
  EXPECT_EQ(redactor.Text("GET /x?t=tok%20%22quoted%22%2Fslash%5C9 failed"),
            "GET /x?t=[secret] failed");
  EXPECT_EQ(redactor.Text("GET /x?t=tok%20%22quoted%22%2fslash%5c9 failed"),
            "GET /x?t=[secret] failed");
  // In an output too: a string holding a JSON text that quotes it.
  EXPECT_EQ(redactor.Output(json::value(R"({"card_token":"tok \"quoted\"/slash\\9"})")),
            json::value(R"({"card_token":"[secret]"})"));
}

// A provider reference or a code that is a short secret whole goes too; inside text it stays.
TEST(SecretFieldsTest, ATextThatIsAShortSecretIsRedactedWhole) {
  const std::vector<std::string> fields = {"cvv"};
  SecretRedactor redactor{fields, {"123"}};
  EXPECT_EQ(redactor.Text("123"), "[secret]");
  EXPECT_EQ(redactor.Text("re_123"), "re_123");
  EXPECT_FALSE(SecretRedactor().has_values());
  EXPECT_EQ(SecretRedactor().Text("123"), "123");
}

// A secret that holds another is replaced whole, whatever order they came in.
TEST(SecretFieldsTest, ALongerSecretIsReplacedBeforeOneItHolds) {
  const std::vector<std::string> fields = {"a", "b"};
  SecretRedactor redactor{fields, {"tok_12345678", "tok_12345678_long"}};
  EXPECT_EQ(redactor.Text("re_tok_12345678_long_1"), "re_[secret]_1");
}

}  // namespace
}  // namespace reckon
