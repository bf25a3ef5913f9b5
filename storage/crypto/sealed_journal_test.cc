// Sealed payloads end to end in storage: the event codec with a real AES-256-GCM codec, and a
// SQLite journal opened with, without, and with other payload keys.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "reckon/storage/crypto/aes_gcm_codec.h"
#include "reckon/storage/event_codec.h"
#include "reckon/storage/sqlite/sqlite.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "tests/support/temp_dir.h"

namespace reckon::storage {
namespace {

std::span<const std::byte> Bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

std::unique_ptr<AesGcmCodec> Codec(std::vector<std::pair<std::string, unsigned char>> keys) {
  PayloadKeySet set;
  for (auto& [id, fill] : keys) {
    std::array<unsigned char, 32> bytes;
    bytes.fill(fill);
    set.keys.emplace_back(id, bytes);
  }
  set.sealing = set.keys.size() - 1;
  set.source = "test.keys";
  return std::move(AesGcmCodec::Create(std::move(set))).value();
}

// One event of every type; each payload field holds "secret-<n>".
std::vector<EventBody> EveryEventType() {
  return {
      WorkflowStarted{"refund", R"({"c":"secret-1"})", "defhash"},
      WorkflowCompleted{R"({"r":"secret-2"})"},
      WorkflowFailed{"rejected", "secret-3"},
      WorkflowCancelRequested{"secret-4"},
      WorkflowCancelled{},
      WorkflowTaskScheduled{},
      WorkflowTaskStarted{"worker-1"},
      WorkflowTaskCompleted{},
      OperationPrepared{"s1", "op-1", "send_refund", "ch", "ih", SideEffect::kNonRepeatableWrite,
                        R"({"i":"secret-5"})", 2, true},
      ApprovalRequested{"op-1", "ap-1", "ih", 42},
      ApprovalGranted{"op-1", "ap-1", "ih", "alice", 99},
      ApprovalDenied{"op-1", "ap-1", "bob", "secret-6"},
      AttemptStarted{"op-1", 3, "w", 1234, "ap-1"},
      OperationCommitted{"op-1", 3, R"({"o":"secret-7"})", "re_1", CommitSource::kAttempt},
      OperationRejected{"op-1", 1, "invalid", "secret-8"},
      AttemptFailedRetryable{"op-1", 2, "rate_limited", "secret-9", 777},
      OutcomeUnknown{"op-1", 2, "deadline_exceeded", 888},
      ReconciliationStarted{"op-1", 1},
      ReconciliationResult{"op-1", 1, ReconcileVerdict::kStillUnknown, "", 999},
      NeedsHuman{"op-1", "reconcile limit"},
      HumanResolved{"op-1", true, "re_9", "carol", "secret-10"},
      TimerStarted{"t1", 5},
      TimerFired{"t1"},
      SignalReceived{"go", R"("secret-11")"},
      MarkerRecorded{"now#1", "now", "secret-12"},
      RetryScheduled{"op-1", 2, 1234, RetryReason::kReconciledNotFound},
      WorkflowContinuedAsNew{"r2", R"({"c":"secret-13"})"},
      ChildWorkflowInitiated{"child#1", "ship-1", "r3", "ship", R"({"c":"secret-14"})", "cancel"},
      ChildWorkflowClosed{"child#1", "ship-1", "r3", "completed", R"({"c":"secret-15"})", "",
                          "secret-16"},
      ChildPolicyApplied{"child#1", "ship-1", "cancel"},
      UpdateAccepted{"u-1", "instruct", R"({"i":"secret-17"})", "operator"},
      UpdateCompleted{"u-1", R"({"a":"secret-18"})", "failed", "secret-19"},
      AttemptAccepted{"op-1", 2, "po_1", 5555},
      CompletionReceived{"op-1", "evt_1", true, "", "worker"},
  };
}

TEST(SealedEventTest, EveryTypeRoundTripsAndHidesOnlyItsPayload) {
  auto codec = Codec({{"k1", 7}});
  EventDecoder decoder(codec.get());
  EventDecoder keyless;
  const std::vector<EventBody> bodies = EveryEventType();
  ASSERT_EQ(bodies.size(), std::variant_size_v<EventBody>);
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const EventPlace place{"wf-1", "r1", static_cast<std::int64_t>(i + 1)};
    auto stored = EncodeStoredEvent(bodies[i], place, codec.get());
    ASSERT_TRUE(stored) << stored.error().ToString();
    EXPECT_EQ(stored.value().find("secret-"), std::string::npos) << EventTypeName(bodies[i]);
    auto decoded = decoder.Decode(Bytes(stored.value()), place);
    ASSERT_TRUE(decoded) << EventTypeName(bodies[i]) << ": " << decoded.error().ToString();
    // Every field survived: the clear encodings are equal.
    EXPECT_EQ(EncodeEventBody(decoded.value()), EncodeEventBody(bodies[i]));
    if (HasPayload(bodies[i])) {
      // Without the key the event is refused, naming the key.
      auto refused = keyless.Decode(Bytes(stored.value()), place);
      ASSERT_FALSE(refused) << EventTypeName(bodies[i]);
      EXPECT_EQ(refused.error().code(), Errc::kFailedPrecondition);
      EXPECT_NE(refused.error().message().find("payload key 'k1'"), std::string::npos);
      // The wire never carries sealed events.
      EXPECT_FALSE(decoder.Decode(Bytes(stored.value())));
    } else {
      // No payload: stored exactly as in a journal without a codec.
      EXPECT_EQ(stored.value(), EncodeEventBody(bodies[i]));
    }
  }
}

TEST(SealedEventTest, ABoxMovedToAnotherPlaceDoesNotOpen) {
  auto codec = Codec({{"k1", 7}});
  EventDecoder decoder(codec.get());
  const EventBody body = SignalReceived{"go", R"("secret-11")"};
  auto stored = EncodeStoredEvent(body, EventPlace{"wf-1", "r1", 4}, codec.get());
  ASSERT_TRUE(stored);
  for (const EventPlace& other : {EventPlace{"wf-2", "r1", 4}, EventPlace{"wf-1", "r2", 4},
                                  EventPlace{"wf-1", "r1", 5}, EventPlace{"wf-1r", "1", 4}}) {
    auto moved = decoder.Decode(Bytes(stored.value()), other);
    ASSERT_FALSE(moved);
    EXPECT_EQ(moved.error().code(), Errc::kCorruption);
  }
}

class SealedJournalTest : public ::testing::Test {
 protected:
  std::unique_ptr<Journal> Open(const PayloadCodec* codec) {
    SqliteJournalOptions options;
    options.payload_codec = codec;
    auto opened = OpenSqliteJournal(path_, options);
    EXPECT_TRUE(opened) << opened.error().ToString();
    return opened ? std::move(opened).value() : nullptr;
  }
  static AppendRequest Append(std::int64_t next_seq, std::vector<EventBody> events) {
    AppendRequest request;
    request.run = {"wf-1", "r1"};
    request.expected_next_seq = next_seq;
    request.now_us = 1000 * next_seq;
    if (next_seq == 1) request.workflow_type = "refund";
    request.events = std::move(events);
    return request;
  }
  // The database file and its WAL as they are on disk now.
  std::string RawBytes() const {
    std::string all;
    for (const std::string& file : {path_, path_ + "-wal"}) {
      std::ifstream in(file, std::ios::binary);
      all.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    return all;
  }
  // The stored payload of event `seq` of wf-1/r1, read beside the journal.
  std::string StoredPayload(std::int64_t seq) const {
    auto db = std::move(SqliteDb::Open(path_, /*read_only=*/true)).value();
    auto stmt = std::move(db.Prepare("SELECT payload FROM events WHERE seq = ?1")).value();
    stmt.Bind(1, seq);
    EXPECT_TRUE(stmt.Step().value());
    auto blob = stmt.ColumnBlob(0);
    return std::string(reinterpret_cast<const char*>(blob.data()), blob.size());
  }
  void Overwrite(std::int64_t seq, const std::string& payload) const {
    auto db = std::move(SqliteDb::Open(path_)).value();
    auto stmt = std::move(db.Prepare("UPDATE events SET payload = ?2 WHERE seq = ?1")).value();
    stmt.Bind(1, seq).BindBlob(2, Bytes(payload));
    ASSERT_TRUE(stmt.Run());
  }

  testing::TempDir dir_;
  std::string path_ = dir_.File("journal.db");
};

TEST_F(SealedJournalTest, PayloadsNeverReachTheFileButIdsAndStatesDo) {
  auto codec = Codec({{"k1", 7}});
  auto journal = Open(codec.get());
  ASSERT_TRUE(journal);
  auto request = Append(1, {WorkflowStarted{"refund", R"({"c":"secret-1"})", ""},
                            OperationPrepared{"s1", "op-77", "send_refund", "ch", "ih",
                                              SideEffect::kIdempotentWrite,
                                              R"({"i":"secret-5"})"}});
  request.operations = {OperationRow{"op-77", "s1", "send_refund", SideEffect::kIdempotentWrite,
                                     "prepared", 0, "ih", "ch", "", 0}};
  ASSERT_TRUE(journal->Append(request));
  ASSERT_TRUE(journal->Append(
      Append(3, {OperationCommitted{"op-77", 1, R"({"o":"secret-7"})", "re_1",
                                    CommitSource::kAttempt},
                 WorkflowCompleted{R"({"r":"secret-2"})"}})));

  const std::string raw = RawBytes();
  EXPECT_EQ(raw.find("secret-"), std::string::npos);
  EXPECT_NE(raw.find("op-77"), std::string::npos);
  EXPECT_NE(raw.find("send_refund"), std::string::npos);
  auto op = journal->FindOperation("op-77");
  ASSERT_TRUE(op && op.value());
  EXPECT_EQ(op.value()->state, "prepared");

  auto events = journal->ReadEvents({"wf-1", "r1"});
  ASSERT_TRUE(events) << events.error().ToString();
  ASSERT_EQ(events.value().size(), 4u);
  EXPECT_EQ(std::get<WorkflowStarted>(events.value()[0].body).input_json, R"({"c":"secret-1"})");
  EXPECT_EQ(std::get<OperationCommitted>(events.value()[2].body).result_json,
            R"({"o":"secret-7"})");
}

TEST_F(SealedJournalTest, AClearJournalStaysReadableOnceTheCodecIsOn) {
  {
    auto clear = Open(nullptr);
    ASSERT_TRUE(clear->Append(Append(1, {WorkflowStarted{"refund", R"({"c":"old-input"})", ""}})));
  }
  auto codec = Codec({{"k1", 7}});
  auto journal = Open(codec.get());
  ASSERT_TRUE(journal->Append(Append(2, {SignalReceived{"go", R"("secret-11")"}})));
  auto events = journal->ReadEvents({"wf-1", "r1"});
  ASSERT_TRUE(events) << events.error().ToString();
  ASSERT_EQ(events.value().size(), 2u);
  EXPECT_EQ(std::get<WorkflowStarted>(events.value()[0].body).input_json, R"({"c":"old-input"})");
  EXPECT_EQ(std::get<SignalReceived>(events.value()[1].body).payload_json, R"("secret-11")");
  EXPECT_EQ(RawBytes().find("secret-11"), std::string::npos);
}

TEST_F(SealedJournalTest, WithoutTheKeyReadsAreRefusedNamingIt) {
  {
    auto codec = Codec({{"k1", 7}});
    auto journal = Open(codec.get());
    ASSERT_TRUE(journal->Append(Append(1, {WorkflowStarted{"refund", R"({"c":"secret"})", ""}})));
  }
  {
    auto keyless = Open(nullptr);
    auto refused = keyless->ReadEvents({"wf-1", "r1"});
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code(), Errc::kFailedPrecondition);
    EXPECT_NE(refused.error().message().find("payload key 'k1'"), std::string::npos);
    EXPECT_NE(refused.error().message().find("wf-1/r1"), std::string::npos);
    // What needs no payload still works: the run and its status.
    auto run = keyless->FindRun({"wf-1", "r1"});
    ASSERT_TRUE(run && run.value());
    EXPECT_EQ(run.value()->workflow_type, "refund");
  }
  auto other = Codec({{"k2", 8}});
  auto journal = Open(other.get());
  auto refused = journal->ReadEvents({"wf-1", "r1"});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(refused.error().message().find("payload key 'k1'"), std::string::npos);
  EXPECT_NE(refused.error().message().find("test.keys"), std::string::npos);
}

TEST_F(SealedJournalTest, RotationKeepsOldPayloadsReadableAndSealsNewOnesWithTheNewKey) {
  {
    auto k1 = Codec({{"k1", 7}});
    auto journal = Open(k1.get());
    ASSERT_TRUE(journal->Append(Append(1, {WorkflowStarted{"refund", R"({"c":"one"})", ""}})));
  }
  auto rotated = Codec({{"k1", 7}, {"k2", 8}});
  auto journal = Open(rotated.get());
  ASSERT_TRUE(journal->Append(Append(2, {SignalReceived{"go", R"("two")"}})));
  auto events = journal->ReadEvents({"wf-1", "r1"});
  ASSERT_TRUE(events) << events.error().ToString();
  EXPECT_EQ(std::get<WorkflowStarted>(events.value()[0].body).input_json, R"({"c":"one"})");
  EXPECT_EQ(std::get<SignalReceived>(events.value()[1].body).payload_json, R"("two")");

  // Which key sealed what: a decoder without keys names it.
  EventDecoder keyless;
  auto first = keyless.Decode(Bytes(StoredPayload(1)), EventPlace{"wf-1", "r1", 1});
  auto second = keyless.Decode(Bytes(StoredPayload(2)), EventPlace{"wf-1", "r1", 2});
  ASSERT_FALSE(first);
  ASSERT_FALSE(second);
  EXPECT_NE(first.error().message().find("'k1'"), std::string::npos);
  EXPECT_NE(second.error().message().find("'k2'"), std::string::npos);
}

TEST_F(SealedJournalTest, TamperedOrMovedPayloadsAreRefusedAsCorruption) {
  auto codec = Codec({{"k1", 7}});
  {
    auto journal = Open(codec.get());
    ASSERT_TRUE(journal->Append(Append(1, {WorkflowStarted{"refund", R"({"c":"a"})", ""},
                                           SignalReceived{"go", R"("b")"}})));
  }
  const std::string first = StoredPayload(1);
  std::string altered = StoredPayload(2);
  altered[altered.size() - 9] = static_cast<char>(altered[altered.size() - 9] ^ 0x40);
  Overwrite(2, altered);
  auto journal = Open(codec.get());
  auto tampered = journal->ReadEvents({"wf-1", "r1"});
  ASSERT_FALSE(tampered);
  EXPECT_EQ(tampered.error().code(), Errc::kCorruption);

  // Event 1's sealed payload copied over event 2 (same type would still be refused: the
  // place is part of what is authenticated).
  journal.reset();
  Overwrite(2, first);
  journal = Open(codec.get());
  auto moved = journal->ReadEvents({"wf-1", "r1"});
  ASSERT_FALSE(moved);
  EXPECT_EQ(moved.error().code(), Errc::kCorruption);
  EXPECT_NE(moved.error().message().find("event 2"), std::string::npos);
}

}  // namespace
}  // namespace reckon::storage
