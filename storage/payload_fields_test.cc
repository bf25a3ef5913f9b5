// Payload fields added to an event type later (storage/payload_fields.h): what a release
// before them sealed still opens, with the new fields empty; new events pack every field.
#include "reckon/storage/payload_fields.h"

#include <gtest/gtest.h>

namespace reckon::storage {
namespace {

TEST(PayloadFieldsTest, HeartbeatDetailsArePackedWithTheMessage) {
  AttemptFailedRetryable failed{"op_1", 2, "rate_limited", "slow down", 123, R"({"page":3})"};
  const std::string packed = PackPayload(failed);
  EventBody opened = AttemptFailedRetryable{"op_1", 2, "rate_limited", "", 123, ""};
  ASSERT_TRUE(UnpackPayload(packed, opened));
  EXPECT_EQ(std::get<AttemptFailedRetryable>(opened).message, "slow down");
  EXPECT_EQ(std::get<AttemptFailedRetryable>(opened).heartbeat_details_json, R"({"page":3})");

  OutcomeUnknown unknown{"op_1", 2, "heartbeat_timeout", 0, R"({"page":3})"};
  EXPECT_TRUE(HasPayload(unknown));
  EXPECT_FALSE(HasPayload(OutcomeUnknown{"op_1", 2, "lease_lost", 0, ""}));
}

TEST(PayloadFieldsTest, APlaintextSealedBeforeTheDetailsExistedStillOpens) {
  // Before heartbeat details: the message alone, length-prefixed.
  const std::string message = "slow down";
  std::string old_plaintext(4, '\0');
  old_plaintext[0] = static_cast<char>(message.size());
  old_plaintext += message;
  EventBody opened = AttemptFailedRetryable{"op_1", 1, "rate_limited", "", 0, ""};
  ASSERT_TRUE(UnpackPayload(old_plaintext, opened));
  EXPECT_EQ(std::get<AttemptFailedRetryable>(opened).message, "slow down");
  EXPECT_EQ(std::get<AttemptFailedRetryable>(opened).heartbeat_details_json, "");
  // A plaintext cut inside a field is still refused.
  EXPECT_FALSE(UnpackPayload(old_plaintext.substr(0, 6), opened));
}

}  // namespace
}  // namespace reckon::storage
