// The dispatcher over a real journal and a fake broker that behaves like JetStream: it stores
// each message id once (later copies are acked as duplicates with the first sequence), and
// can be down, or store a message and lose the ack.
#include "reckon/outbox/dispatcher.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "reckon/storage/sqlite/sqlite_journal.h"
#include "reckon/storage/sqlite/sqlite_outbox_store.h"

#include "tests/support/temp_dir.h"

namespace reckon::outbox {
namespace {

using namespace std::chrono_literals;
using storage::OutboxMessage;

struct FakeBroker {
  enum class Mode { kUp, kDown, kLoseAcks };
  Mode mode = Mode::kUp;
  std::vector<std::pair<std::string, std::string>> stream;  // (message id, payload)
  std::map<std::string, std::int64_t> seq_of;
  int publishes = 0;
};

class FakePublisher final : public Publisher {
 public:
  explicit FakePublisher(FakeBroker& broker) : broker_(broker) {}
  Result<PublishAck> Publish(std::string_view, std::string_view message_id,
                             std::string_view payload) override {
    ++broker_.publishes;
    if (broker_.mode == FakeBroker::Mode::kDown) {
      return Err(Errc::kUnavailable, "broker down");
    }
    const std::string id(message_id);
    PublishAck ack;
    if (auto it = broker_.seq_of.find(id); it != broker_.seq_of.end()) {
      ack = PublishAck{it->second, true};
    } else {
      broker_.stream.emplace_back(id, std::string(payload));
      ack = PublishAck{static_cast<std::int64_t>(broker_.stream.size()), false};
      broker_.seq_of[id] = ack.stream_seq;
    }
    if (broker_.mode == FakeBroker::Mode::kLoseAcks) {
      return Err(Errc::kUnavailable, "no ack before the timeout");
    }
    return ack;
  }

 private:
  FakeBroker& broker_;
};

class DispatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto journal = storage::SqliteJournal::Open(dir_.File("journal.db"));
    ASSERT_TRUE(journal) << journal.error().ToString();
    journal_ = std::move(journal).value();
  }
  // A run whose one step publishes `count` messages.
  void Commit(int count) {
    storage::AppendRequest request;
    request.run = {"wf-" + std::to_string(++runs_), "r1"};
    request.now_us = 1;
    request.workflow_type = "order";
    request.events.push_back(storage::WorkflowStarted{"order", "{}", ""});
    for (int i = 0; i < count; ++i) {
      const std::string step = "publish#" + std::to_string(i + 1);
      request.events.push_back(storage::MarkerRecorded{step, "publish", "{}"});
      request.outbox.push_back(OutboxMessage{"msg_" + request.run.workflow_id + "_" + step,
                                             step, "orders", "p" + std::to_string(i)});
    }
    auto ack = journal_->Append(request);
    ASSERT_TRUE(ack) << ack.error().ToString();
  }
  // A dispatcher as a process life would build it: its own store connection.
  std::unique_ptr<Dispatcher> NewDispatcher() {
    auto store = storage::SqliteOutboxStore::Open(dir_.File("journal.db"), nullptr);
    EXPECT_TRUE(store) << store.error().ToString();
    return std::make_unique<Dispatcher>(std::move(store).value(),
                                        std::make_unique<FakePublisher>(broker_), options_);
  }
  std::vector<storage::OutboxRow> Rows(bool pending_only) {
    auto store = storage::SqliteOutboxStore::Open(dir_.File("journal.db"), nullptr);
    return store.value()->List(pending_only, 100).value();
  }

  testing::TempDir dir_;
  std::unique_ptr<storage::SqliteJournal> journal_;
  FakeBroker broker_;
  DispatcherOptions options_{.batch = 2, .first_backoff = 100ms, .max_backoff = 400ms};
  int runs_ = 0;
};

TEST_F(DispatcherTest, DeliversEveryMessageOnceAndRecordsItsAck) {
  Commit(3);
  auto dispatcher = NewDispatcher();
  auto first = dispatcher->RunOnce(1000);
  ASSERT_TRUE(first) << first.error().ToString();
  EXPECT_EQ(first.value().acked, 2);  // one batch
  ASSERT_TRUE(dispatcher->RunOnce(1000));
  ASSERT_TRUE(dispatcher->RunOnce(1000));
  EXPECT_EQ(broker_.stream.size(), 3u);
  EXPECT_EQ(broker_.publishes, 3);
  EXPECT_TRUE(Rows(true).empty());
  const auto rows = Rows(false);
  ASSERT_EQ(rows.size(), 3u);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].stream_seq, static_cast<std::int64_t>(i + 1));
    EXPECT_EQ(rows[i].attempts, 1);
    EXPECT_EQ(rows[i].published_at_us, 1000);
  }
  EXPECT_EQ(broker_.stream[2].second, "p2");
}

TEST_F(DispatcherTest, RetriesWithBackoffWhileTheBrokerIsDown) {
  Commit(1);
  auto dispatcher = NewDispatcher();
  broker_.mode = FakeBroker::Mode::kDown;
  std::int64_t now = 1'000'000;
  auto pass = dispatcher->RunOnce(now);
  ASSERT_TRUE(pass);
  EXPECT_EQ(pass.value().failed, 1);
  // Not due again before its backoff: nothing is published.
  ASSERT_TRUE(dispatcher->RunOnce(now + 99'000));
  EXPECT_EQ(broker_.publishes, 1);
  ASSERT_TRUE(dispatcher->RunOnce(now + 100'000));  // second failure: 200ms
  EXPECT_EQ(broker_.publishes, 2);
  EXPECT_EQ(Rows(true)[0].next_attempt_at_us, now + 100'000 + 200'000);
  EXPECT_EQ(Rows(true)[0].last_error, "broker down");
  broker_.mode = FakeBroker::Mode::kUp;
  ASSERT_TRUE(dispatcher->RunOnce(now + 300'000));
  EXPECT_TRUE(Rows(true).empty());
  EXPECT_EQ(Rows(false)[0].attempts, 3);
  EXPECT_EQ(dispatcher->stats().failed, 2);
  EXPECT_EQ(dispatcher->stats().acked, 1);
  EXPECT_EQ(Dispatcher::Backoff(options_, 1), 100ms);
  EXPECT_EQ(Dispatcher::Backoff(options_, 3), 400ms);
  EXPECT_EQ(Dispatcher::Backoff(options_, 60), 400ms);  // capped, no overflow
}

// The broker stored the message but the ack was lost (or the process died before recording
// it): a later dispatcher, here a new process life, publishes it again under the same id and
// the broker absorbs the copy.
TEST_F(DispatcherTest, AfterALostAckTheMessageIsRepublishedAndTheBrokerDropsTheCopy) {
  Commit(1);
  broker_.mode = FakeBroker::Mode::kLoseAcks;
  ASSERT_TRUE(NewDispatcher()->RunOnce(1000));
  EXPECT_EQ(Rows(true).size(), 1u);  // still pending: no ack was recorded
  broker_.mode = FakeBroker::Mode::kUp;
  auto second_life = NewDispatcher();
  auto pass = second_life->RunOnce(10'000'000);
  ASSERT_TRUE(pass);
  EXPECT_EQ(pass.value().duplicates, 1);
  EXPECT_EQ(broker_.stream.size(), 1u);
  EXPECT_TRUE(Rows(true).empty());
  EXPECT_EQ(Rows(false)[0].stream_seq, 1);
}

// The thread: started, it delivers what is committed while it runs and stops cleanly.
TEST_F(DispatcherTest, TheThreadDeliversWhatCommitsWhileItRuns) {
  auto dispatcher = NewDispatcher();
  dispatcher->Start();
  Commit(2);
  dispatcher->Notify();
  for (int i = 0; i < 500 && dispatcher->stats().acked < 2; ++i) {
    std::this_thread::sleep_for(10ms);  // bounded wait for the other thread, not a timing check
  }
  dispatcher->Stop();
  EXPECT_EQ(dispatcher->stats().acked, 2);
  EXPECT_TRUE(Rows(true).empty());
}

}  // namespace
}  // namespace reckon::outbox
