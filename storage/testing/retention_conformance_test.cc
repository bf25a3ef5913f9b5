// The retention part of the journal conformance suite (journal_conformance.h): which finished
// runs an archive pass may take (Journal::ListArchivable), and the deletion of one with every
// row derived from it (Journal::DeleteRun), refused for a running run, a run that moved and a
// run whose outbox message is not delivered yet. Compiled into each backend's test binary.
#include <string>

#include "reckon/storage/testing/journal_conformance.h"
#include "reckon/storage/testing/journal_requests.h"

namespace reckon::storage {
namespace {

// A run of `workflow_id` (run id "r1") with an operation, an approval, a timer and an outbox
// message, finished with `status` at `now_us` (running if nullopt).
void AddRun(Journal& journal, const std::string& workflow_id, std::optional<RunStatus> status,
            std::int64_t now_us) {
  AppendRequest start;
  start.run = {workflow_id, "r1"};
  start.expected_next_seq = 1;
  start.now_us = now_us;
  start.workflow_type = "refund";
  start.events = {WorkflowStarted{"refund", "{}", ""},
                  MarkerRecorded{"publish#1", "publish", "{}"}};
  start.operations = {OperationRow{"op-" + workflow_id, "s1", "send", SideEffect::kIdempotentWrite,
                                   "committed", 1, "fp", "ch", "", 0}};
  start.approvals = {ApprovalRow{"ap-" + workflow_id, "op-" + workflow_id, "ih",
                                 ApprovalState::kGranted, "alice", 0}};
  start.timers_set = {TimerRow{"t1", now_us + 1000}};
  start.outbox = {OutboxMessage{"msg-" + workflow_id, "publish#1", "orders", "{}"}};
  ASSERT_TRUE(journal.Append(start));
  if (!status) return;
  AppendRequest end;
  end.run = start.run;
  end.expected_next_seq = 3;
  end.now_us = now_us;
  end.events = {WorkflowCompleted{"{}"}};
  end.status = status;
  ASSERT_TRUE(journal.Append(end));
}

std::vector<std::string> Ids(const std::vector<RunRow>& runs) {
  std::vector<std::string> ids;
  for (const RunRow& run : runs) ids.push_back(run.ref.workflow_id);
  return ids;
}

// Records the broker's ack of the run's outbox message.
void Deliver(JournalBackend& backend, const std::string& workflow_id) {
  auto store = backend.OpenOutboxStore(nullptr);
  ASSERT_TRUE(store) << store.error().ToString();
  OutboxAttempt acked{"msg-" + workflow_id, 5, true, false, 7, "", 0};
  ASSERT_TRUE(store.value()->RecordAttempt(acked));
}

TEST_P(JournalConformanceTest, RetentionListsFinishedRunsOlderThanTheCutWithTheirMessagesDelivered) {
  AddRun(*journal_, "done-old", RunStatus::kCompleted, 1000);
  AddRun(*journal_, "failed-old", RunStatus::kFailed, 1000);
  AddRun(*journal_, "cancelled-old", RunStatus::kCancelled, 1000);
  AddRun(*journal_, "undelivered-old", RunStatus::kCompleted, 1000);
  AddRun(*journal_, "running-old", std::nullopt, 1000);
  AddRun(*journal_, "done-new", RunStatus::kCompleted, 9000);
  for (const char* id : {"done-old", "failed-old", "cancelled-old", "running-old", "done-new"}) {
    Deliver(*backend_, id);
  }
  auto listed = journal_->ListArchivable(5000, 100);
  ASSERT_TRUE(listed) << listed.error().ToString();
  EXPECT_EQ(Ids(listed.value()),
            (std::vector<std::string>{"done-old", "failed-old", "cancelled-old"}));
  auto limited = journal_->ListArchivable(5000, 2);
  ASSERT_TRUE(limited);
  EXPECT_EQ(Ids(limited.value()), (std::vector<std::string>{"done-old", "failed-old"}));
  auto all = journal_->ListArchivable(10000, 100);
  ASSERT_TRUE(all);
  EXPECT_EQ(all.value().size(), 4u);
}

TEST_P(JournalConformanceTest, RetentionDeletesARunWithEveryRowDerivedFromIt) {
  AddRun(*journal_, "gone", RunStatus::kCompleted, 1000);
  AddRun(*journal_, "kept", RunStatus::kCompleted, 1000);
  Deliver(*backend_, "gone");
  Deliver(*backend_, "kept");
  auto row = journal_->FindRun({"gone", "r1"});
  ASSERT_TRUE(row && row.value());
  const std::int64_t pk = row.value()->run_pk;
  auto deleted = journal_->DeleteRun({"gone", "r1"}, row.value()->next_seq);
  ASSERT_TRUE(deleted) << deleted.error().ToString();

  auto found = journal_->FindRun({"gone", "r1"});
  ASSERT_TRUE(found);
  EXPECT_FALSE(found.value());
  auto events = journal_->ReadEvents({"gone", "r1"});
  ASSERT_TRUE(events);
  EXPECT_TRUE(events.value().empty());
  const std::string of = " WHERE run_pk = " + std::to_string(pk);
  for (const char* table : {"events", "operations", "timers", "approvals", "outbox"}) {
    EXPECT_EQ(Count(std::string("SELECT count(*) FROM ") + table + of), 0) << table;
  }
  EXPECT_EQ(Count("SELECT count(*) FROM outbox_attempts WHERE message_id = 'msg-gone'"), 0);
  // The other run is whole.
  EXPECT_EQ(Count("SELECT count(*) FROM runs"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM events"), 3);
  EXPECT_EQ(Count("SELECT count(*) FROM operations"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM approvals"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM outbox_attempts"), 1);
  auto integrity = journal_->IntegrityCheck();
  ASSERT_TRUE(integrity);
  EXPECT_EQ(integrity.value(), "ok");

  // Deleting it again (a retry after a crash) finds nothing, and changes nothing.
  auto again = journal_->DeleteRun({"gone", "r1"}, row.value()->next_seq);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), Errc::kNotFound);
  // The workflow id can start again.
  AppendRequest restart;
  restart.run = {"gone", "r2"};
  restart.now_us = 2000;
  restart.workflow_type = "refund";
  restart.events = {WorkflowStarted{"refund", "{}", ""}};
  EXPECT_TRUE(journal_->Append(restart));
}

TEST_P(JournalConformanceTest, RetentionRefusesARunningARunThatMovedAndAnUndeliveredMessage) {
  AddRun(*journal_, "running", std::nullopt, 1000);
  AddRun(*journal_, "undelivered", RunStatus::kCompleted, 1000);
  AddRun(*journal_, "done", RunStatus::kCompleted, 1000);
  Deliver(*backend_, "running");
  Deliver(*backend_, "done");
  auto running = journal_->DeleteRun({"running", "r1"}, 3);
  ASSERT_FALSE(running);
  EXPECT_EQ(running.error().code(), Errc::kFailedPrecondition);
  auto undelivered = journal_->DeleteRun({"undelivered", "r1"}, 4);
  ASSERT_FALSE(undelivered);
  EXPECT_EQ(undelivered.error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(undelivered.error().message().find("msg-undelivered"), std::string::npos)
      << undelivered.error().message();
  auto moved = journal_->DeleteRun({"done", "r1"}, 3);
  ASSERT_FALSE(moved);
  EXPECT_EQ(moved.error().code(), Errc::kConflict);
  EXPECT_EQ(Count("SELECT count(*) FROM runs"), 3);
  EXPECT_EQ(Count("SELECT count(*) FROM events"), 2 + 3 + 3);
  EXPECT_EQ(Count("SELECT count(*) FROM outbox"), 3);
  // The journal still takes appends after refusals.
  ASSERT_TRUE(journal_->Append(MarkerStep("running", 3)));
}

}  // namespace
}  // namespace reckon::storage
