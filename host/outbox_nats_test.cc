// The outbox end to end against a real broker: a nats-server with JetStream started by the
// test on a free port of 127.0.0.1, a workflow that publishes, the dispatcher with the
// NatsPublisher, and a JetStream consumer that reads the message and its Nats-Msg-Id. The
// broker's deduplication is checked by publishing the same message id again.
#include "reckon/outbox/nats_publisher.h"

#include <nats/nats.h>

#include <gtest/gtest.h>

#include <thread>

#include <boost/json/object.hpp>

#include "reckon/engine/outbox_message.h"
#include "reckon/outbox/dispatcher.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "reckon/storage/sqlite/sqlite_outbox_store.h"
#include "reckon/host/embedded_host.h"
#include "reckon/host/testing/engine_harness.h"
#include "reckon/testkit/gtest.h"
#include "reckon/host/testing/journal_view.h"

#include "tests/support/nats_server.h"
#include "tests/support/temp_dir.h"

namespace reckon::outbox {
namespace {

using namespace std::chrono_literals;
namespace json = boost::json;

// The broker (tests/support/nats_server.h) with the stream ORDERS over orders.> (a two-minute
// duplicate window), and a client connection that the test uses as the consumer.
class NatsBroker {
 public:
  explicit NatsBroker(const reckon::testing::TempDir& dir) : dir_(dir) {}
  ~NatsBroker() {
    if (js_ != nullptr) jsCtx_Destroy(js_);
    if (conn_ != nullptr) natsConnection_Destroy(conn_);
  }
  std::string url() const { return server_->url(); }

  // Starts the broker, declares the stream and connects; false (with a failure) if any fails.
  bool Ready() {
    auto started = reckon::testing::NatsServer::Start({.program = RECKON_NATS_SERVER,
                                                        .dir = dir_.path()});
    if (!started) {
      ADD_FAILURE() << started.error().ToString();
      return false;
    }
    server_ = std::move(started).value();
    if (auto declared = server_->AddStream("ORDERS", {"orders.>"}, 2min); !declared) {
      ADD_FAILURE() << declared.error().ToString();
      return false;
    }
    if (natsConnection_ConnectTo(&conn_, url().c_str()) != NATS_OK) return false;
    return natsConnection_JetStream(&js_, conn_, nullptr) == NATS_OK;
  }
  std::int64_t StreamMessages() {
    auto state = server_->StreamState("ORDERS");
    return state ? state.value().messages : -1;
  }
  jsCtx* js() { return js_; }
  reckon::testing::NatsServer& server() { return *server_; }

 private:
  const reckon::testing::TempDir& dir_;
  std::unique_ptr<reckon::testing::NatsServer> server_;
  natsConnection* conn_ = nullptr;
  jsCtx* js_ = nullptr;
};

// What a JetStream consumer reads: the payload and the Nats-Msg-Id header.
struct Received {
  std::string data;
  std::string msg_id;
  std::string subject;
};

std::optional<Received> ReadOne(jsCtx* js) {
  natsSubscription* sub = nullptr;
  jsErrCode error = static_cast<jsErrCode>(0);
  if (js_SubscribeSync(&sub, js, "orders.>", nullptr, nullptr, &error) != NATS_OK) {
    return std::nullopt;
  }
  natsMsg* msg = nullptr;
  std::optional<Received> received;
  if (natsSubscription_NextMsg(&msg, sub, 10000) == NATS_OK) {
    const char* id = nullptr;
    natsMsgHeader_Get(msg, "Nats-Msg-Id", &id);
    received = Received{std::string(natsMsg_GetData(msg), natsMsg_GetDataLength(msg)),
                        id ? id : "", natsMsg_GetSubject(msg)};
    natsMsg_Ack(msg, nullptr);
    natsMsg_Destroy(msg);
  }
  natsSubscription_Destroy(sub);
  return received;
}

Task<WorkflowOutcome> PublishOrder(WorkflowContext& ctx, json::value) {
  auto published = ctx.Publish("orders.created", R"({"order":"o-1","cents":4200})");
  if (!published) co_return CallFailure{"publish_failed", published.error().message()};
  co_return json::object{{"message_id", published.value()}};
}

TEST(NatsOutbox, AWorkflowsMessageReachesAJetStreamConsumerOnceWithItsId) {
  reckon::testing::EngineHarness h;
  RECKON_ASSERT_OK(h.workflows().Register("order", PublishOrder));
  NatsBroker broker(h.dir());
  ASSERT_TRUE(broker.Ready());

  h.Boot();
  RECKON_ASSERT_OK(h.Start("order-1", "order", json::object{}));
  ASSERT_TRUE(h.RunUntilSettled("order-1"));
  h.Shutdown();
  auto scope = reckon::testing::LatestIdScope(h.journal(), "order-1");
  ASSERT_TRUE(scope) << scope.error().ToString();
  const std::string id = MessageIdFor(scope.value(), "publish#1");

  auto store = storage::SqliteOutboxStore::Open(h.journal_path(), nullptr);
  ASSERT_TRUE(store) << store.error().ToString();
  Dispatcher dispatcher(std::move(store).value(),
                        std::make_unique<NatsPublisher>(NatsPublisherOptions{.url = broker.url()}));
  auto pass = dispatcher.RunOnce(1'000'000);
  ASSERT_TRUE(pass) << pass.error().ToString();
  ASSERT_EQ(pass.value().acked, 1) << "failed: " << pass.value().failed;

  auto received = ReadOne(broker.js());
  ASSERT_TRUE(received);
  EXPECT_EQ(received->subject, "orders.created");
  EXPECT_EQ(received->data, R"({"order":"o-1","cents":4200})");
  EXPECT_EQ(received->msg_id, id);

  // The journal holds the ack's stream sequence.
  auto rows = storage::SqliteOutboxStore::Open(h.journal_path(), nullptr).value()->List(false, 10);
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows.value().size(), 1u);
  EXPECT_EQ(rows.value()[0].stream_seq, 1);
  EXPECT_GT(rows.value()[0].published_at_us, 0);

  // Publishing the same id again (a dispatcher that died before recording its ack) stores
  // nothing new: the stream acks it as a duplicate of sequence 1.
  NatsPublisher again(NatsPublisherOptions{.url = broker.url()});
  auto copy = again.Publish("orders.created", id, R"({"order":"o-1","cents":4200})");
  ASSERT_TRUE(copy) << copy.error().ToString();
  EXPECT_TRUE(copy.value().duplicate);
  EXPECT_EQ(copy.value().stream_seq, 1);
  EXPECT_EQ(broker.StreamMessages(), 1);
}

// A message published by a life that died before recording the ack is pending after the
// restart; the next dispatcher publishes it again, and the broker absorbs the copy.
TEST(NatsOutbox, AnUnrecordedAckIsRepublishedAndAbsorbedByTheBroker) {
  reckon::testing::EngineHarness h;
  RECKON_ASSERT_OK(h.workflows().Register("order", PublishOrder));
  NatsBroker broker(h.dir());
  ASSERT_TRUE(broker.Ready());
  h.Boot();
  RECKON_ASSERT_OK(h.Start("order-1", "order", json::object{}));
  ASSERT_TRUE(h.RunUntilSettled("order-1"));
  h.Shutdown();
  auto scope = reckon::testing::LatestIdScope(h.journal(), "order-1");
  ASSERT_TRUE(scope) << scope.error().ToString();
  const std::string id = MessageIdFor(scope.value(), "publish#1");
  NatsPublisher first_life(NatsPublisherOptions{.url = broker.url()});
  ASSERT_TRUE(first_life.Publish("orders.created", id, R"({"order":"o-1","cents":4200})"));

  auto store = storage::SqliteOutboxStore::Open(h.journal_path(), nullptr);
  ASSERT_TRUE(store);
  Dispatcher dispatcher(std::move(store).value(),
                        std::make_unique<NatsPublisher>(NatsPublisherOptions{.url = broker.url()}));
  auto pass = dispatcher.RunOnce(1'000'000);
  ASSERT_TRUE(pass) << pass.error().ToString();
  EXPECT_EQ(pass.value().acked, 1);
  EXPECT_EQ(pass.value().duplicates, 1);
  EXPECT_EQ(broker.StreamMessages(), 1);
  auto attempts =
      storage::SqliteOutboxStore::Open(h.journal_path(), nullptr).value()->ListAttempts(id);
  ASSERT_TRUE(attempts);
  ASSERT_EQ(attempts.value().size(), 1u);
  EXPECT_EQ(attempts.value()[0].outcome, "duplicate");
}

// No stream takes the subject: the attempt fails with an error that says what to do, and the
// message stays pending for a later try.
TEST(NatsOutbox, ASubjectNoStreamTakesIsAnErrorThatSaysSo) {
  reckon::testing::TempDir dir;
  NatsBroker broker(dir);
  ASSERT_TRUE(broker.Ready());
  NatsPublisher publisher(NatsPublisherOptions{.url = broker.url()});
  auto refused = publisher.Publish("invoices.created", "msg_x", "{}");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(refused.error().message().find("create a stream"), std::string::npos);
}

// The broker is SIGKILLed and restarted on its port and store: the publisher reconnects by
// itself, what was stored before is still there, and the duplicate window survived.
TEST(NatsOutbox, APublisherKeepsWorkingAcrossABrokerKillAndRestart) {
  reckon::testing::TempDir dir;
  NatsBroker broker(dir);
  ASSERT_TRUE(broker.Ready());
  NatsPublisher publisher(NatsPublisherOptions{.url = broker.url(), .ack_timeout = 1s});
  auto first = publisher.Publish("orders.created", "msg_1", "one");
  ASSERT_TRUE(first) << first.error().ToString();
  EXPECT_EQ(first.value().stream_seq, 1);

  RECKON_ASSERT_OK(broker.server().Kill());
  auto while_down = publisher.Publish("orders.created", "msg_2", "two");
  ASSERT_FALSE(while_down);
  EXPECT_EQ(while_down.error().code(), Errc::kUnavailable) << while_down.error().ToString();
  RECKON_ASSERT_OK(broker.server().Restart());

  Result<PublishAck> second = Err(Errc::kUnavailable, "not tried");
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (!(second = publisher.Publish("orders.created", "msg_2", "two")) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);  // libnats is reconnecting
  }
  ASSERT_TRUE(second) << second.error().ToString();
  auto again = publisher.Publish("orders.created", "msg_1", "one");
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_TRUE(again.value().duplicate);
  EXPECT_EQ(again.value().stream_seq, 1);
  EXPECT_EQ(broker.StreamMessages(), 2);
}

boost::asio::awaitable<int> StartAndSettle(EmbeddedHost& host) {
  (void)co_await host.Recover();
  auto start = host.engine().Start("order-2", "order", json::object{});
  if (!co_await std::move(start)) co_return -1;
  auto settled = co_await host.UntilIdle();
  co_return settled ? 0 : -2;
}

// An embedded host with a NATS url runs the dispatcher itself: the message reaches the
// consumer without anyone driving a pass.
TEST(NatsOutbox, AnEmbeddedHostWithANatsUrlDeliversOnItsOwn) {
  reckon::testing::TempDir dir;
  NatsBroker broker(dir);
  ASSERT_TRUE(broker.Ready());
  EmbeddedHostOptions options;
  options.nats_url = broker.url();
  auto host = EmbeddedHost::Open(dir.File("journal.db"), options);
  ASSERT_TRUE(host) << host.error().ToString();
  RECKON_ASSERT_OK(host.value()->workflows().Register("order", PublishOrder));
  auto ran = host.value()->Run(StartAndSettle(*host.value()));
  ASSERT_TRUE(ran);
  ASSERT_EQ(ran.value(), 0);
  auto received = ReadOne(broker.js());  // waits up to 10 s for the dispatcher's thread
  ASSERT_TRUE(received);
  host.value().reset();
  auto journal = storage::OpenSqliteJournal(dir.File("journal.db"));
  ASSERT_TRUE(journal) << journal.error().ToString();
  auto scope = reckon::testing::LatestIdScope(*journal.value(), "order-2");
  ASSERT_TRUE(scope) << scope.error().ToString();
  EXPECT_EQ(received->msg_id, MessageIdFor(scope.value(), "publish#1"));
  journal.value().reset();
  auto rows = storage::SqliteOutboxStore::Open(dir.File("journal.db"), nullptr).value()->List(true, 10);
  ASSERT_TRUE(rows);
  EXPECT_TRUE(rows.value().empty());  // its ack is recorded
}

}  // namespace
}  // namespace reckon::outbox
