#include "reckon/storage/sqlite/sqlite_outbox_store.h"

#include <gtest/gtest.h>

#include "reckon/storage/sqlite/sqlite.h"
#include "reckon/storage/sqlite/sqlite_journal.h"

#include "tests/support/temp_dir.h"

namespace reckon::storage {
namespace {

// A codec that "seals" by prefixing the context and reversing the bytes: enough to see that
// the journal stores no clear payload and that a box opens only under its own context.
class ReversingCodec final : public PayloadCodec {
 public:
  Result<SealedPayload> Seal(std::string_view plaintext, std::string_view context) const override {
    std::string box(context);
    box += '|';
    box.append(plaintext.rbegin(), plaintext.rend());
    return SealedPayload{key_id_, std::move(box)};
  }
  Result<std::string> Open(std::string_view key_id, std::string_view box,
                           std::string_view context) const override {
    if (key_id != key_id_) return Err(Errc::kFailedPrecondition, "unknown key");
    if (box.substr(0, context.size()) != context || box.size() <= context.size()) {
      return Err(Errc::kCorruption, "box moved");
    }
    box.remove_prefix(context.size() + 1);
    return std::string(box.rbegin(), box.rend());
  }
  const std::string& sealing_key_id() const override { return key_id_; }

 private:
  std::string key_id_ = "k1";
};

AppendRequest Step(std::int64_t next_seq, std::vector<OutboxMessage> outbox) {
  AppendRequest request;
  request.run = {"wf-1", "r1"};
  request.expected_next_seq = next_seq;
  request.now_us = 1000 * next_seq;
  if (next_seq == 1) {
    request.workflow_type = "order";
    request.events.push_back(WorkflowStarted{"order", "{}", ""});
  }
  request.events.push_back(MarkerRecorded{"publish#1", "publish", "{}"});
  request.outbox = std::move(outbox);
  return request;
}

class OutboxStoreTest : public ::testing::Test {
 protected:
  void Open(const PayloadCodec* codec) {
    SqliteJournalOptions options;
    options.payload_codec = codec;
    auto journal = SqliteJournal::Open(dir_.File("journal.db"), options);
    ASSERT_TRUE(journal) << journal.error().ToString();
    journal_ = std::move(journal).value();
    auto store = SqliteOutboxStore::Open(dir_.File("journal.db"), codec);
    ASSERT_TRUE(store) << store.error().ToString();
    store_ = std::move(store).value();
  }
  testing::TempDir dir_;
  std::unique_ptr<SqliteJournal> journal_;
  std::unique_ptr<SqliteOutboxStore> store_;
};

TEST_F(OutboxStoreTest, AppendWritesTheMessageWithTheStepsEvents) {
  Open(nullptr);
  auto ack = journal_->Append(Step(1, {OutboxMessage{"msg_a", "publish#1", "orders", "hello"}}));
  ASSERT_TRUE(ack) << ack.error().ToString();
  auto due = store_->ListDue(5000, 10);
  ASSERT_TRUE(due) << due.error().ToString();
  ASSERT_EQ(due.value().size(), 1u);
  EXPECT_EQ(due.value()[0].message_id, "msg_a");
  EXPECT_EQ(due.value()[0].step_id, "publish#1");
  EXPECT_EQ(due.value()[0].subject, "orders");
  EXPECT_EQ(due.value()[0].payload, "hello");
  EXPECT_EQ(due.value()[0].created_at_us, 1000);
}

TEST_F(OutboxStoreTest, AStepThatDoesNotCommitLeavesNoMessage) {
  Open(nullptr);
  ASSERT_TRUE(journal_->Append(Step(1, {})));
  // A stale writer (wrong expected seq) is refused: neither its events nor its message land.
  auto stale = journal_->Append(Step(1, {OutboxMessage{"msg_b", "publish#1", "orders", "x"}}));
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code(), Errc::kConflict);
  // A message id already in the outbox refuses the whole request, events included.
  ASSERT_TRUE(journal_->Append(Step(3, {OutboxMessage{"msg_c", "publish#1", "orders", "x"}})));
  auto again = journal_->Append(Step(4, {OutboxMessage{"msg_c", "publish#1", "orders", "y"}}));
  ASSERT_FALSE(again);
  auto events = journal_->ReadEvents(RunRef{"wf-1", "r1"});
  ASSERT_TRUE(events);
  EXPECT_EQ(events.value().size(), 3u);
  auto all = store_->List(false, 10);
  ASSERT_TRUE(all);
  ASSERT_EQ(all.value().size(), 1u);
  EXPECT_EQ(all.value()[0].message_id, "msg_c");
}

TEST_F(OutboxStoreTest, PayloadsAreSealedWhenTheJournalHasACodec) {
  ReversingCodec codec;
  Open(&codec);
  ASSERT_TRUE(journal_->Append(Step(1, {OutboxMessage{"msg_s", "publish#1", "orders", "secret-amount"}})));
  auto db = SqliteDb::Open(dir_.File("journal.db"), /*read_only=*/true);
  ASSERT_TRUE(db);
  auto key = db.value().QueryText("SELECT key_id FROM outbox");
  ASSERT_TRUE(key);
  EXPECT_EQ(key.value(), "k1");
  auto clear = db.value().QueryInt("SELECT count(*) FROM outbox WHERE instr(payload, 'secret')");
  ASSERT_TRUE(clear);
  EXPECT_EQ(clear.value(), 0);
  auto due = store_->ListDue(5000, 10);
  ASSERT_TRUE(due) << due.error().ToString();
  ASSERT_EQ(due.value().size(), 1u);
  EXPECT_EQ(due.value()[0].payload, "secret-amount");
  // Without the codec the store says which key it needs instead of returning sealed bytes.
  auto keyless = SqliteOutboxStore::Open(dir_.File("journal.db"), nullptr);
  ASSERT_TRUE(keyless);
  auto refused = keyless.value()->ListDue(5000, 10);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(refused.error().message().find("k1"), std::string::npos);
}

TEST_F(OutboxStoreTest, RecordsEveryAttemptAndTheAck) {
  Open(nullptr);
  ASSERT_TRUE(journal_->Append(Step(1, {OutboxMessage{"msg_r", "publish#1", "orders", "p"}})));
  ASSERT_TRUE(store_->RecordAttempt(OutboxAttempt{"msg_r", 2000, false, false, 0, "no responders", 9000}));
  EXPECT_TRUE(store_->ListDue(5000, 10).value().empty());  // not due before its retry time
  EXPECT_EQ(store_->NextDueAt().value(), std::optional<std::int64_t>(9000));
  ASSERT_EQ(store_->ListDue(9000, 10).value().size(), 1u);
  ASSERT_TRUE(store_->RecordAttempt(OutboxAttempt{"msg_r", 9000, true, true, 42, "", 0}));
  EXPECT_TRUE(store_->ListDue(100000, 10).value().empty());
  EXPECT_EQ(store_->NextDueAt().value(), std::nullopt);
  auto rows = store_->List(false, 10);
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows.value().size(), 1u);
  EXPECT_EQ(rows.value()[0].attempts, 2);
  EXPECT_EQ(rows.value()[0].stream_seq, 42);
  EXPECT_EQ(rows.value()[0].published_at_us, 9000);
  EXPECT_TRUE(store_->List(true, 10).value().empty());
  auto attempts = store_->ListAttempts("msg_r");
  ASSERT_TRUE(attempts);
  ASSERT_EQ(attempts.value().size(), 2u);
  EXPECT_EQ(attempts.value()[0].outcome, "failed");
  EXPECT_EQ(attempts.value()[0].error, "no responders");
  EXPECT_EQ(attempts.value()[1].outcome, "duplicate");
  EXPECT_EQ(attempts.value()[1].stream_seq, 42);
  auto unknown = store_->RecordAttempt(OutboxAttempt{"msg_none", 1, true, false, 1, "", 0});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), Errc::kNotFound);
}

TEST_F(OutboxStoreTest, TheBacklogCountsUnacknowledgedMessagesAndDatesTheOldest) {
  Open(nullptr);
  EXPECT_EQ(store_->PendingBacklog().value().pending, 0);
  EXPECT_EQ(store_->PendingBacklog().value().oldest_created_at_us, 0);
  ASSERT_TRUE(journal_->Append(Step(1, {OutboxMessage{"msg_1", "publish#1", "orders", "a"}})));
  ASSERT_TRUE(journal_->Append(Step(3, {OutboxMessage{"msg_2", "publish#1", "orders", "b"}})));
  auto backlog = store_->PendingBacklog();
  ASSERT_TRUE(backlog) << backlog.error().ToString();
  EXPECT_EQ(backlog.value().pending, 2);
  EXPECT_EQ(backlog.value().oldest_created_at_us, 1000);
  // A failed attempt leaves it pending; an ack takes it out, and the next one is the oldest.
  ASSERT_TRUE(store_->RecordAttempt(OutboxAttempt{"msg_1", 4000, false, false, 0, "down", 9000}));
  EXPECT_EQ(store_->PendingBacklog().value().pending, 2);
  ASSERT_TRUE(store_->RecordAttempt(OutboxAttempt{"msg_1", 9000, true, false, 1, "", 0}));
  EXPECT_EQ(store_->PendingBacklog().value().pending, 1);
  EXPECT_EQ(store_->PendingBacklog().value().oldest_created_at_us, 3000);
  ASSERT_TRUE(store_->RecordAttempt(OutboxAttempt{"msg_2", 9000, true, false, 2, "", 0}));
  EXPECT_EQ(store_->PendingBacklog().value().pending, 0);
  EXPECT_EQ(store_->PendingBacklog().value().oldest_created_at_us, 0);
}

}  // namespace
}  // namespace reckon::storage
