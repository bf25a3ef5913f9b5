#include "reckon/storage/event_codec.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reckon/storage/rows.h"

namespace reckon::storage {
namespace {

std::span<const std::byte> Bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

TEST(EventCodecTest, RoundTripsEveryEventType) {
  std::vector<EventBody> bodies = {
      WorkflowStarted{"refund", R"({"n":1})", "abc", "alice", 2, "default", "r0", "order-1",
                      "r7", "cancel"},
      WorkflowCompleted{R"({"ok":true})"},
      WorkflowFailed{"rejected", "card declined"},
      WorkflowCancelRequested{"user asked", "bob", true},
      WorkflowCancelled{},
      WorkflowTaskScheduled{},
      WorkflowTaskStarted{"worker-1", "build-7"},
      WorkflowTaskCompleted{},
      OperationPrepared{"s1", "op-1", "send_refund", "ch", "fp", SideEffect::kNonRepeatableWrite,
                        "{}"},
      ApprovalRequested{"op-1", "ap-1", "ih", 42},
      ApprovalGranted{"op-1", "ap-1", "ih", "alice", 99},
      ApprovalDenied{"op-1", "ap-1", "bob", "too large"},
      AttemptStarted{"op-1", 3, "w", 1234, "ap-1"},
      OperationCommitted{"op-1", 3, R"({"id":"re_1"})", "re_1", CommitSource::kAttempt},
      OperationRejected{"op-1", 1, "invalid", "bad card"},
      AttemptFailedRetryable{"op-1", 2, "rate_limited", "429", 777},
      OutcomeUnknown{"op-1", 2, "deadline_exceeded", 888},
      ReconciliationStarted{"op-1", 1},
      ReconciliationResult{"op-1", 1, ReconcileVerdict::kStillUnknown, "", 999},
      NeedsHuman{"op-1", "reconcile limit"},
      HumanResolved{"op-1", true, "re_9", "carol", "checked dashboard"},
      TimerStarted{"t1", 5},
      TimerFired{"t1"},
      SignalReceived{"go", "{}", "ops", "req-1"},
      MarkerRecorded{"m1", "now", "17"},
      RetryScheduled{"op-1", 2, 1234, RetryReason::kReconciledNotFound},
      WorkflowContinuedAsNew{"r2", R"({"round":2})"},
      ChildWorkflowInitiated{"child#2", "ship-1", "r9", "ship", R"({"n":2})", "wait"},
      ChildWorkflowClosed{"child#2", "ship-1", "r9", "failed", "", "out_of_stock", "none left"},
      ChildPolicyApplied{"child#2", "ship-1", "abandon"},
      UpdateAccepted{"u-1", "instruct", R"({"instruction":"x"})", "operator"},
      UpdateCompleted{"u-1", R"({"answer":"y"})", "", ""},
      AttemptAccepted{"op-1", 2, "po_1", 5555},
      CompletionReceived{"op-1", "evt_1", true, "", "worker"},
  };
  ASSERT_EQ(bodies.size(), std::variant_size_v<EventBody>);
  EventDecoder decoder;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    ASSERT_EQ(bodies[i].index(), i) << "test list must follow the variant order";
    std::string bytes = EncodeEventBody(bodies[i]);
    auto decoded = decoder.Decode(Bytes(bytes));
    ASSERT_TRUE(decoded) << EventTypeName(bodies[i]) << ": " << decoded.error().ToString();
    EXPECT_EQ(decoded.value().index(), i);
    // Re-encoding the decoded value gives the same bytes: every field survived.
    EXPECT_EQ(EncodeEventBody(decoded.value()), bytes) << EventTypeName(bodies[i]);
  }
}

// The update events' type numbers are their union ordinals (31, 32) plus one, past the
// ordinals 28-30 another branch defines.
TEST(EventCodecTest, UpdateEventsHaveTheirOrdinalsTypeNumbers) {
  EXPECT_EQ(EventTypeNumber(UpdateAccepted{}), 32);
  EXPECT_EQ(EventTypeNumber(UpdateCompleted{}), 33);
  EXPECT_EQ(EventTypeNumber(WorkflowContinuedAsNew{}), 28);
  EXPECT_EQ(EventTypeNumber(AttemptAccepted{}), 34);
  EXPECT_EQ(EventTypeNumber(CompletionReceived{}), 35);
}

TEST(EventCodecTest, DecodesFromUnalignedMemory) {
  std::string bytes =
      EncodeEventBody(OperationCommitted{"op-7", 1, "{}", "re_7", CommitSource::kAttempt});
  std::string shifted = "x" + bytes;  // payload starts at an odd address
  EventDecoder decoder;
  auto decoded = decoder.Decode(Bytes(shifted).subspan(1));
  ASSERT_TRUE(decoded) << decoded.error().ToString();
  EXPECT_EQ(std::get<OperationCommitted>(decoded.value()).provider_ref, "re_7");
}

TEST(EventCodecTest, RejectsGarbageAsCorruption) {
  EventDecoder decoder;
  std::string odd(13, 'a');
  auto not_words = decoder.Decode(Bytes(odd));
  ASSERT_FALSE(not_words);
  EXPECT_EQ(not_words.error().code(), Errc::kCorruption);
  EXPECT_NE(not_words.error().message().find("8-byte words"), std::string::npos);

  std::string junk(64, '\xff');
  auto garbage = decoder.Decode(Bytes(junk));
  ASSERT_FALSE(garbage);
  EXPECT_EQ(garbage.error().code(), Errc::kCorruption);

  // The decoder still works after a failure.
  std::string good = EncodeEventBody(TimerFired{"t"});
  EXPECT_TRUE(decoder.Decode(Bytes(good)));
}

TEST(EventCodecTest, StoresEnumsByTheirNames) {
  // The bytes keep the names the journal always had: the enums exist only in memory.
  std::string bytes = EncodeEventBody(
      RetryScheduled{"op-1", 2, 1234, RetryReason::kReconciledNotFound});
  EXPECT_NE(bytes.find("reconciled_not_found"), std::string::npos);
  bytes = EncodeEventBody(OperationCommitted{"op-1", 1, "{}", "", CommitSource::kLateCompletion});
  EXPECT_NE(bytes.find("late_completion"), std::string::npos);
}

TEST(EventCodecTest, RefusesAnUnknownNameAsCorruption) {
  // A commit source this release does not know, written in place of a known one.
  std::string bytes = EncodeEventBody(
      OperationCommitted{"op-1", 1, "{}", "re_1", CommitSource::kReconciliation});
  const std::size_t at = bytes.find("reconciliation");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 14, "teleportation!");
  EventDecoder decoder;
  auto decoded = decoder.Decode(Bytes(bytes));
  ASSERT_FALSE(decoded);
  EXPECT_EQ(decoded.error().code(), Errc::kCorruption);
  EXPECT_NE(decoded.error().message().find("OperationCommitted.source"), std::string::npos);
  EXPECT_NE(decoded.error().message().find("'teleportation!'"), std::string::npos);

  for (const char* name : {"attempt", "late_completion", "reconciliation", "human"}) {
    auto parsed = ParseCommitSource(name);
    ASSERT_TRUE(parsed) << name;
    EXPECT_EQ(CommitSourceName(parsed.value()), name);
  }
  for (const char* name : {"committed", "not_found", "still_unknown"}) {
    auto parsed = ParseReconcileVerdict(name);
    ASSERT_TRUE(parsed) << name;
    EXPECT_EQ(ReconcileVerdictName(parsed.value()), name);
  }
  for (const char* name : {"unknown_outcome", "reconciled_not_found", "human_not_committed"}) {
    auto parsed = ParseRetryReason(name);
    ASSERT_TRUE(parsed) << name;
    EXPECT_EQ(RetryReasonName(parsed.value()), name);
  }
  for (const char* name : {"running", "completed", "failed", "cancelled"}) {
    auto parsed = ParseRunStatus(name);
    ASSERT_TRUE(parsed) << name;
    EXPECT_EQ(RunStatusName(parsed.value()), name);
  }
  for (const char* name : {"requested", "granted", "denied"}) {
    auto parsed = ParseApprovalState(name);
    ASSERT_TRUE(parsed) << name;
    EXPECT_EQ(ApprovalStateName(parsed.value()), name);
  }
  auto unknown = ParseRunStatus("paused");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), Errc::kInvalidArgument);
  EXPECT_NE(unknown.error().message().find("'paused'"), std::string::npos);
}

TEST(EventCodecTest, TypeNamesFollowTheVariant) {
  EXPECT_EQ(EventTypeName(WorkflowStarted{}), "WorkflowStarted");
  EXPECT_EQ(EventTypeName(MarkerRecorded{}), "MarkerRecorded");
  EXPECT_EQ(EventTypeNumber(WorkflowStarted{}), 1);
  EXPECT_EQ(EventTypeNumber(MarkerRecorded{}), 25);
}

}  // namespace
}  // namespace reckon::storage
