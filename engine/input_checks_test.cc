// What the engine refuses before queueing a request: bad identifiers and texts in every field
// of a start, signal, cancel, decision and resolution, and a value for a secret field in a
// workflow input or a signal payload.
#include "reckon/engine/input_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "reckon/contract/testing/test_contracts.h"

namespace reckon {
namespace {

namespace json = boost::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

ContractRegistry Contracts() {
  ContractRegistry registry;
  EXPECT_TRUE(registry.Register(testing_contracts::Payout()));  // secret: card_token
  return registry;
}

std::string MessageOf(const Result<void>& r) {
  EXPECT_FALSE(r);
  if (r) return "";
  EXPECT_EQ(r.error().code(), Errc::kInvalidArgument);
  return r.error().message();
}

const std::string kHash(64, 'a');

TEST(InputChecksTest, AGoodRequestOfEachKindPasses) {
  const ContractRegistry contracts = Contracts();
  EXPECT_TRUE(CheckStart("order-1", "fulfil_order", json::parse(R"({"sku":"a"})"), "", contracts));
  EXPECT_TRUE(CheckStart("plan-1", "plan", json::object(), kHash, contracts));
  EXPECT_TRUE(CheckSignal("order-1", "packed", R"({"box":3})", contracts));
  EXPECT_TRUE(CheckCancel("order-1", "changed my mind"));
  EXPECT_TRUE(CheckDecision("order-1",
                            ApprovalDecision{"ap_x_1", "", kHash, true, "alice@example.com", ""}));
  EXPECT_TRUE(CheckResolution("order-1", HumanResolution{"op_1", true, "re_1", "bob", "ok"}));
}

TEST(InputChecksTest, EveryFieldIsChecked) {
  const ContractRegistry contracts = Contracts();
  const json::value input = json::object();
  EXPECT_THAT(MessageOf(CheckStart("a\nb", "t", input, "", contracts)),
              StartsWith("workflow id 'a\\x0ab' is not valid: it contains a newline"));
  EXPECT_THAT(MessageOf(CheckStart(std::string(100 * 1024, 'w'), "t", input, "", contracts)),
              HasSubstr("it is 102400 bytes long"));
  EXPECT_THAT(MessageOf(CheckStart("", "t", input, "", contracts)),
              StartsWith("workflow id is empty"));
  EXPECT_THAT(MessageOf(CheckStart("w", std::string("t\0", 2), input, "", contracts)),
              StartsWith("workflow type 't\\x00' is not valid: it contains a NUL byte"));
  EXPECT_THAT(MessageOf(CheckStart("w", "t", input, "xyz", contracts)),
              StartsWith("definition hash 'xyz' is not valid"));
  EXPECT_THAT(MessageOf(CheckSignal("w", "go\xff", "null", contracts)),
              StartsWith("signal name 'go\\xff' is not valid: it is not valid UTF-8"));
  EXPECT_THAT(MessageOf(CheckSignal("w", "go", "{", contracts)),
              StartsWith("the payload of signal 'go': "));
  EXPECT_THAT(MessageOf(CheckCancel("w", "line\nbreak")),
              StartsWith("reason 'line\\x0abreak' is not valid"));
  EXPECT_THAT(MessageOf(CheckDecision("w", ApprovalDecision{"", "op 1", "", true, "a", ""})),
              StartsWith("operation id 'op 1' is not valid: it contains a space"));
  EXPECT_THAT(MessageOf(CheckDecision("w", ApprovalDecision{"ap\n", "", "", true, "a", ""})),
              StartsWith("approval id 'ap\\x0a' is not valid"));
  EXPECT_THAT(MessageOf(CheckDecision("w", ApprovalDecision{"ap", "", "abc", true, "a", ""})),
              StartsWith("expected intent hash 'abc' is not valid"));
  EXPECT_THAT(MessageOf(CheckDecision("w", ApprovalDecision{"ap", "", "", true, "", ""})),
              StartsWith("decided by is empty; a principal name is 1-64 bytes"));
  EXPECT_THAT(MessageOf(CheckDecision(
                  "w", ApprovalDecision{"ap", "", "", true, "refund-agent --approve-all", ""})),
              StartsWith("decided by 'refund-agent --approve-all' is not valid: it contains a "
                         "space"));
  EXPECT_THAT(MessageOf(CheckDecision(
                  "w", ApprovalDecision{"ap", "", "", false, "a", std::string(2000, 'r')})),
              StartsWith("reason 'rrrr"));
  EXPECT_THAT(MessageOf(CheckResolution("w", HumanResolution{"", true, "re", "bob", ""})),
              StartsWith("operation id is empty"));
  EXPECT_THAT(MessageOf(CheckResolution("w", HumanResolution{"op", true, "re\r", "bob", ""})),
              StartsWith("provider ref 're\\x0d' is not valid"));
  EXPECT_THAT(MessageOf(CheckResolution("w", HumanResolution{"op", true, "re", "b\tb", ""})),
              StartsWith("resolved by 'b\\x09b' is not valid"));
  EXPECT_THAT(MessageOf(CheckResolution(
                  "w", HumanResolution{"op", true, "re", "bob", std::string("\0", 1)})),
              StartsWith("note '\\x00' is not valid"));
}

TEST(InputChecksTest, AWorkflowInputOrSignalPayloadMayNotCarryASecretField) {
  const ContractRegistry contracts = Contracts();
  const std::string start = MessageOf(
      CheckStart("pay-1", "pay", json::parse(R"({"payee":"a","card_token":"tok_canary_start"})"),
                 "", contracts));
  EXPECT_EQ(start,
            "the input of workflow 'pay-1' carries a value for 'card_token', a secret "
            "field of tool 'send_payout' (at card_token); secrets come from the worker's "
            "side: the tool fetches them (e.g. from a vault) when it runs, so they are "
            "never journaled. Remove 'card_token'");
  const std::string signal =
      MessageOf(CheckSignal("pay-1", "card", R"({"card_token":"tok_canary_signal"})", contracts));
  EXPECT_THAT(signal, StartsWith("the payload of signal 'card' carries a value for 'card_token'"));
  EXPECT_THAT(signal, ::testing::Not(HasSubstr("tok_canary")));
}

}  // namespace
}  // namespace reckon
