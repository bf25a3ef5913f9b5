#include "reckon/engine/outbox_message.h"

#include <gtest/gtest.h>

#include "reckon/contract/contract_registry.h"
#include "reckon/engine/decider.h"
#include "reckon/engine/operation_id.h"

namespace reckon {
namespace {

IdScope RunScope(std::string workflow_id, std::string run_id = "r1") {
  return IdScope{kRunScopedIds, "default", std::move(workflow_id), std::move(run_id)};
}

TEST(MessageId, IsDerivedFromTheRunAndTheStep) {
  const std::string id = MessageIdFor(RunScope("order-1"), "publish#3");
  EXPECT_EQ(id, MessageIdFor(RunScope("order-1"), "publish#3"));
  EXPECT_EQ(id.size(), 4u + 32u);
  EXPECT_EQ(id.substr(0, 4), "msg_");
  EXPECT_NE(id, MessageIdFor(RunScope("order-1"), "publish#4"));
  EXPECT_NE(id, MessageIdFor(RunScope("order-2"), "publish#3"));
  // The next run of the same workflow (ctx.ContinueAsNew) publishes under new ids.
  EXPECT_NE(id, MessageIdFor(RunScope("order-1", "r2"), "publish#3"));
  // Length-prefixed: moving a byte between the parts changes the id.
  EXPECT_NE(MessageIdFor(RunScope("a"), "bc"), MessageIdFor(RunScope("ab"), "c"));
  // Never the operation id of the same step.
  EXPECT_NE(id.substr(4), OperationIdFor(RunScope("order-1"), "publish#3").substr(3));
}

TEST(Subject, FollowsTheNatsRuleForPublishers) {
  EXPECT_TRUE(ValidateSubject("orders"));
  EXPECT_TRUE(ValidateSubject("orders.created.v1"));
  for (const char* bad : {"", "orders.", ".orders", "a..b", "orders.*", "orders.>", "a b",
                          "a\nb"}) {
    auto result = ValidateSubject(bad);
    ASSERT_FALSE(result) << bad;
    EXPECT_EQ(result.error().code(), Errc::kInvalidArgument);
    EXPECT_NE(result.error().message().find("a subject is"), std::string::npos);
  }
  EXPECT_FALSE(ValidateSubject(std::string(kMaxSubjectBytes + 1, 'a')));
}

TEST(PublishMarker, RoundTripsAndRefusesWhatIsNotOne) {
  auto value = EncodePublishMarker("orders.created", R"({"id": 7, "note": "ünï"})");
  ASSERT_TRUE(value) << value.error().ToString();
  auto decoded = DecodePublishMarker(value.value());
  ASSERT_TRUE(decoded) << decoded.error().ToString();
  EXPECT_EQ(decoded.value().subject, "orders.created");
  EXPECT_EQ(decoded.value().payload, R"({"id": 7, "note": "ünï"})");
  EXPECT_FALSE(EncodePublishMarker("orders", std::string("\xff\xfe")));
  EXPECT_FALSE(EncodePublishMarker("orders", std::string(kMaxPayloadBytes + 1, 'x')));
  EXPECT_FALSE(EncodePublishMarker("orders.*", "{}"));
  for (const char* bad : {"", "[]", R"({"subject": "a"})", R"({"subject": 1, "payload": ""})",
                          R"({"subject": "a", "payload": "", "x": 1})"}) {
    EXPECT_FALSE(DecodePublishMarker(bad)) << bad;
  }
}

// The Decider puts each publish of a batch in the same append as its marker, with the derived
// id; a malformed publish from a worker is refused before anything is emitted for it.
TEST(PublishMarker, BecomesAnOutboxRowOfTheSameAppend) {
  ContractRegistry contracts;
  RunState state(storage::RunRef{"order-1", "r1"});
  Decider decider(state, contracts, FromMicros(1'700'000'000'000'000));
  ASSERT_TRUE(decider.Start("order", boost::json::object(), "", ""));
  auto value = EncodePublishMarker("orders.created", "{\"id\":7}");
  ASSERT_TRUE(value);
  std::vector<Command> commands;
  commands.push_back(RecordMarker{"publish#1", std::string(kPublishMarker), value.value()});
  commands.push_back(RecordMarker{"now#2", "now", "5"});
  ASSERT_TRUE(decider.ApplyCommands(std::move(commands)));
  storage::AppendRequest append = decider.BuildAppend();
  ASSERT_EQ(append.outbox.size(), 1u);
  EXPECT_EQ(append.outbox[0].message_id, MessageIdFor(state.id_scope(), "publish#1"));
  EXPECT_EQ(state.id_scope().run_id, "r1");
  EXPECT_EQ(append.outbox[0].step_id, "publish#1");
  EXPECT_EQ(append.outbox[0].subject, "orders.created");
  EXPECT_EQ(append.outbox[0].payload, "{\"id\":7}");

  std::vector<Command> bad;
  bad.push_back(RecordMarker{"publish#3", std::string(kPublishMarker), R"({"subject": "a b"})"});
  auto refused = decider.ApplyCommands(std::move(bad));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kInvalidArgument);
  EXPECT_EQ(decider.BuildAppend().outbox.size(), 1u);
}

}  // namespace
}  // namespace reckon
