#include "storage/journal.h"

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace reckon::storage {
namespace {

AppendRequest StartRun(const std::string& workflow_id) {
  AppendRequest request;
  request.run = {workflow_id, "r1"};
  request.expected_next_seq = 1;
  request.now_us = 1000;
  request.workflow_type = "refund";
  request.events = {WorkflowStarted{"refund", "{}", ""}, WorkflowTaskScheduled{}};
  request.tasks_put = {TaskRow{"wt-" + workflow_id, "default", "workflow", "", 0, 1000}};
  return request;
}

class JournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = Journal::Open(dir_.File("journal.db"));
    ASSERT_TRUE(opened) << opened.error().ToString();
    journal_ = std::move(opened).value();
  }
  testing::TempDir dir_;
  std::unique_ptr<Journal> journal_;
};

TEST_F(JournalTest, OpensInWalModeAtTheNewestSchema) {
  EXPECT_GE(journal_->schema_version(), 1);
  auto integrity = journal_->IntegrityCheck();
  ASSERT_TRUE(integrity);
  EXPECT_EQ(integrity.value(), "ok");
}

TEST_F(JournalTest, AppendsAndReadsBackInOrder) {
  auto ack = journal_->Append(StartRun("wf-1"));
  ASSERT_TRUE(ack) << ack.error().ToString();
  EXPECT_EQ(ack.value().first_seq, 1);
  EXPECT_EQ(ack.value().next_seq, 3);

  AppendRequest next;
  next.run = {"wf-1", "r1"};
  next.expected_next_seq = 3;
  next.now_us = 2000;
  next.events = {OperationPrepared{"s1", "op-1", "send_refund", "ch", "fp",
                                   SideEffect::kNonRepeatableWrite, "{}"},
                 AttemptStarted{"op-1", 1, "w", 5000, ""}};
  next.operations = {OperationRow{"op-1", "s1", "send_refund", SideEffect::kNonRepeatableWrite,
                                  "in_flight", 1, "fp", "ch", "", 5000}};
  next.tasks_removed = {"wt-wf-1"};
  ASSERT_TRUE(journal_->Append(next));

  auto events = journal_->ReadEvents({"wf-1", "r1"});
  ASSERT_TRUE(events) << events.error().ToString();
  ASSERT_EQ(events.value().size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(events.value()[i].seq, std::int64_t(i + 1));
  EXPECT_TRUE(std::holds_alternative<AttemptStarted>(events.value()[3].body));
  EXPECT_EQ(events.value()[3].recorded_at_us, 2000);

  auto from3 = journal_->ReadEvents({"wf-1", "r1"}, 3);
  ASSERT_TRUE(from3);
  EXPECT_EQ(from3.value().size(), 2u);

  auto op = journal_->FindOperation("op-1");
  ASSERT_TRUE(op && op.value());
  EXPECT_EQ(op.value()->state, "in_flight");
  EXPECT_EQ(op.value()->run_pk, ack.value().run_pk);
  auto tasks = journal_->ListTasks("default");
  ASSERT_TRUE(tasks);
  EXPECT_TRUE(tasks.value().empty());

  auto run = journal_->FindRun({"wf-1", "r1"});
  ASSERT_TRUE(run && run.value());
  EXPECT_EQ(run.value()->next_seq, 5);
  EXPECT_EQ(run.value()->workflow_type, "refund");
  EXPECT_EQ(run.value()->status, RunStatus::kRunning);
}

TEST_F(JournalTest, ConditionalAppendRefusesAStaleSequence) {
  ASSERT_TRUE(journal_->Append(StartRun("wf-1")));
  // A second writer that still believes the run is new.
  auto again = journal_->Append(StartRun("wf-1"));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), Errc::kConflict);
  EXPECT_NE(again.error().message().find("expected next sequence 1"), std::string::npos);

  AppendRequest ahead;
  ahead.run = {"wf-1", "r1"};
  ahead.expected_next_seq = 7;
  ahead.events = {TimerFired{"t"}};
  auto skipped = journal_->Append(ahead);
  ASSERT_FALSE(skipped);
  EXPECT_EQ(skipped.error().code(), Errc::kConflict);

  // Nothing from the refused appends is visible.
  auto events = journal_->ReadEvents({"wf-1", "r1"});
  ASSERT_TRUE(events);
  EXPECT_EQ(events.value().size(), 2u);
}

TEST_F(JournalTest, ConflictInAGroupLeavesTheOthersIntact) {
  ASSERT_TRUE(journal_->Append(StartRun("wf-a")));
  AppendRequest ok_b = StartRun("wf-b");
  AppendRequest stale_a = StartRun("wf-a");  // conflicts
  AppendRequest ok_c = StartRun("wf-c");
  const AppendRequest* group[] = {&ok_b, &stale_a, &ok_c};
  auto results = journal_->AppendGroup(group);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0]);
  ASSERT_FALSE(results[1]);
  EXPECT_EQ(results[1].error().code(), Errc::kConflict);
  EXPECT_TRUE(results[2]);
  auto runs = journal_->ListRuns();
  ASSERT_TRUE(runs);
  EXPECT_EQ(runs.value().size(), 3u);
  // The conflicting request's derived rows were rolled back with its events.
  auto tasks = journal_->ListTasks("default");
  ASSERT_TRUE(tasks);
  EXPECT_EQ(tasks.value().size(), 3u);
}

TEST_F(JournalTest, ARequestWithoutEventsIsRefused) {
  AppendRequest empty;
  empty.run = {"wf-1", "r1"};
  auto result = journal_->Append(empty);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), Errc::kInvalidArgument);
  auto runs = journal_->ListRuns();
  ASSERT_TRUE(runs);
  EXPECT_TRUE(runs.value().empty());
}

TEST_F(JournalTest, DerivedTablesFollowTheirEvents) {
  AppendRequest start = StartRun("wf-1");
  start.timers_set = {TimerRow{"sleep-1", 5000}};
  start.approvals = {ApprovalRow{"ap-1", "op-1", "ih", ApprovalState::kRequested}};
  start.outbox = {OutboxRow{0, "msg-1", "op-1", "refunds", "payload"}};
  start.status = RunStatus::kRunning;
  ASSERT_TRUE(journal_->Append(start));

  auto due_early = journal_->DueTimers(4999, 10);
  ASSERT_TRUE(due_early);
  EXPECT_TRUE(due_early.value().empty());
  auto due = journal_->DueTimers(5000, 10);
  ASSERT_TRUE(due);
  ASSERT_EQ(due.value().size(), 1u);
  EXPECT_EQ(due.value()[0].timer_id, "sleep-1");

  auto approval = journal_->FindApproval("ap-1");
  ASSERT_TRUE(approval && approval.value());
  EXPECT_EQ(approval.value()->state, ApprovalState::kRequested);

  auto outbox = journal_->PendingOutbox(2000, 10);
  ASSERT_TRUE(outbox);
  ASSERT_EQ(outbox.value().size(), 1u);
  EXPECT_EQ(outbox.value()[0].payload, "payload");
  ASSERT_TRUE(journal_->MarkOutboxPublished(outbox.value()[0].id, 3000));
  auto after = journal_->PendingOutbox(4000, 10);
  ASSERT_TRUE(after);
  EXPECT_TRUE(after.value().empty());

  AppendRequest fire;
  fire.run = {"wf-1", "r1"};
  fire.expected_next_seq = 3;
  fire.now_us = 5000;
  fire.events = {TimerFired{"sleep-1"}, WorkflowCompleted{"{}"}};
  fire.timers_cleared = {"sleep-1"};
  fire.status = RunStatus::kCompleted;
  ASSERT_TRUE(journal_->Append(fire));
  auto none = journal_->DueTimers(9999, 10);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none.value().empty());
  auto completed = journal_->ListRuns(RunStatus::kCompleted);
  ASSERT_TRUE(completed);
  ASSERT_EQ(completed.value().size(), 1u);
}

TEST_F(JournalTest, ADuplicateOutboxMessageFailsTheWholeRequest) {
  AppendRequest start = StartRun("wf-1");
  start.outbox = {OutboxRow{0, "msg-1", "", "t", "a"}, OutboxRow{0, "msg-1", "", "t", "b"}};
  auto result = journal_->Append(start);
  ASSERT_FALSE(result);
  auto runs = journal_->ListRuns();
  ASSERT_TRUE(runs);
  EXPECT_TRUE(runs.value().empty()) << "the run's events must roll back with the outbox row";
}

TEST_F(JournalTest, SurvivesReopen) {
  ASSERT_TRUE(journal_->Append(StartRun("wf-1")));
  journal_.reset();
  auto reopened = Journal::Open(dir_.File("journal.db"));
  ASSERT_TRUE(reopened) << reopened.error().ToString();
  auto events = reopened.value()->ReadEvents({"wf-1", "r1"});
  ASSERT_TRUE(events);
  EXPECT_EQ(events.value().size(), 2u);
}

TEST(JournalOpenTest, RefusesAFileThatIsNotAJournal) {
  testing::TempDir dir;
  {
    FILE* f = std::fopen(dir.File("junk.db").c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fputs("this is not a database, just some text that is long enough to matter..........",
               f);
    std::fclose(f);
  }
  auto opened = Journal::Open(dir.File("junk.db"));
  ASSERT_FALSE(opened);
  EXPECT_NE(opened.error().message().find("junk.db"), std::string::npos)
      << opened.error().ToString();
}

}  // namespace
}  // namespace reckon::storage
