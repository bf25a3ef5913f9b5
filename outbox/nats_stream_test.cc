// DeclareStream (outbox/nats_stream.h) against a real nats-server with JetStream: a missing
// stream is created, declaring it again changes nothing, other subjects or another duplicate
// window update it, a publisher then reaches it, and bad names, overlapping subjects and an
// absent broker are refused with what to do.
#include "reckon/outbox/nats_stream.h"

#include <gtest/gtest.h>

#include "reckon/outbox/nats_publisher.h"
#include "tests/support/nats_server.h"
#include "tests/support/temp_dir.h"

namespace reckon::outbox {
namespace {

using namespace std::chrono_literals;

class NatsStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reckon::testing::NatsServerOptions options;
    options.program = RECKON_NATS_SERVER;
    options.dir = dir_.path();
    auto started = reckon::testing::NatsServer::Start(options);
    ASSERT_TRUE(started) << started.error().ToString();
    broker_ = std::move(started).value();
  }
  StreamSpec Spec(std::vector<std::string> subjects) {
    StreamSpec spec;
    spec.url = broker_->url();
    spec.name = "ORDERS";
    spec.subjects = std::move(subjects);
    return spec;
  }
  reckon::testing::TempDir dir_;
  std::unique_ptr<reckon::testing::NatsServer> broker_;
};

TEST_F(NatsStreamTest, CreatedOnceThenUnchangedThenUpdated) {
  auto created = DeclareStream(Spec({"orders.>"}));
  ASSERT_TRUE(created) << created.error().ToString();
  EXPECT_EQ(created.value().change, StreamChange::kCreated);
  auto again = DeclareStream(Spec({"orders.>"}));
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(again.value().change, StreamChange::kUnchanged);

  NatsPublisher publisher(NatsPublisherOptions{broker_->url()});
  auto acked = publisher.Publish("orders.created", "msg_1", "{}");
  ASSERT_TRUE(acked) << acked.error().ToString();
  EXPECT_EQ(acked.value().stream_seq, 1);

  StreamSpec wider = Spec({"orders.>", "refunds.>"});
  wider.duplicate_window = 5min;
  auto updated = DeclareStream(wider);
  ASSERT_TRUE(updated) << updated.error().ToString();
  EXPECT_EQ(updated.value().change, StreamChange::kUpdated);
  EXPECT_EQ(updated.value().messages, 1);  // kept
  auto refund = publisher.Publish("refunds.sent", "msg_2", "{}");
  ASSERT_TRUE(refund) << refund.error().ToString();
  EXPECT_EQ(refund.value().stream_seq, 2);
  auto state = broker_->StreamState("ORDERS");
  ASSERT_TRUE(state) << state.error().ToString();
}

TEST_F(NatsStreamTest, RefusalsSayWhatIsWrong) {
  StreamSpec bad = Spec({"orders.>"});
  bad.name = "ORDERS STREAM";
  auto refused = DeclareStream(bad);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kInvalidArgument);
  EXPECT_NE(refused.error().message().find("not valid"), std::string::npos);

  auto none = DeclareStream(Spec({}));
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code(), Errc::kInvalidArgument);

  ASSERT_TRUE(DeclareStream(Spec({"orders.>"})));
  StreamSpec overlap = Spec({"orders.created"});
  overlap.name = "OTHER";
  auto overlapping = DeclareStream(overlap);
  ASSERT_FALSE(overlapping);
  EXPECT_EQ(overlapping.error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(overlapping.error().message().find("overlap"), std::string::npos)
      << overlapping.error().message();

  ASSERT_TRUE(broker_->Kill());
  StreamSpec absent = Spec({"orders.>"});
  absent.timeout = 500ms;
  auto unavailable = DeclareStream(absent);
  ASSERT_FALSE(unavailable);
  EXPECT_EQ(unavailable.error().code(), Errc::kUnavailable);
  EXPECT_NE(unavailable.error().message().find("is nats-server running"), std::string::npos)
      << unavailable.error().message();
}

}  // namespace
}  // namespace reckon::outbox
