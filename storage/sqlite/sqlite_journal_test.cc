#include "reckon/storage/sqlite/sqlite_journal.h"

#include <gtest/gtest.h>

#include "reckon/storage/sqlite/sqlite.h"

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
  request.timers_set = {TimerRow{"t-" + workflow_id, 5000}};
  return request;
}

class JournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = SqliteJournal::Open(dir_.File("journal.db"));
    ASSERT_TRUE(opened) << opened.error().ToString();
    journal_ = std::move(opened).value();
  }
  // Derived tables that no journal read returns are checked in the file itself, through a
  // second connection (which sees what is committed).
  std::int64_t Count(const std::string& query) {
    auto db = SqliteDb::Open(dir_.File("journal.db"), /*read_only=*/true);
    EXPECT_TRUE(db) << db.error().ToString();
    if (!db) return -1;
    auto count = db.value().QueryInt(query);
    EXPECT_TRUE(count) << count.error().ToString();
    return count ? count.value() : -1;
  }
  testing::TempDir dir_;
  std::unique_ptr<SqliteJournal> journal_;
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
  next.timers_cleared = {"t-wf-1"};
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
  EXPECT_EQ(Count("SELECT count(*) FROM timers"), 0);

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
  EXPECT_EQ(Count("SELECT count(*) FROM timers"), 3);
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
  start.status = RunStatus::kRunning;
  ASSERT_TRUE(journal_->Append(start));
  EXPECT_EQ(Count("SELECT count(*) FROM timers WHERE timer_id = 'sleep-1' AND fire_at_us = 5000"),
            1);
  EXPECT_EQ(Count("SELECT count(*) FROM approvals WHERE approval_id = 'ap-1' AND "
                  "state = 'requested'"),
            1);

  AppendRequest fire;
  fire.run = {"wf-1", "r1"};
  fire.expected_next_seq = 3;
  fire.now_us = 5000;
  fire.events = {TimerFired{"sleep-1"}, WorkflowCompleted{"{}"}};
  fire.timers_cleared = {"sleep-1"};
  fire.approvals = {ApprovalRow{"ap-1", "op-1", "ih", ApprovalState::kGranted, "ana"}};
  fire.status = RunStatus::kCompleted;
  ASSERT_TRUE(journal_->Append(fire));
  EXPECT_EQ(Count("SELECT count(*) FROM timers WHERE timer_id = 'sleep-1'"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM approvals WHERE approval_id = 'ap-1' AND "
                  "state = 'granted' AND decided_by = 'ana'"),
            1);
  auto completed = journal_->ListRuns(RunStatus::kCompleted);
  ASSERT_TRUE(completed);
  ASSERT_EQ(completed.value().size(), 1u);
}

TEST_F(JournalTest, AFailingDerivedRowFailsTheWholeRequest) {
  // Operation ids are unique across runs (index operations_by_id): a request whose row takes
  // another run's operation id fails whole, its new run and events included.
  ASSERT_TRUE(journal_->Append(StartRun("wf-1")));
  AppendRequest other = StartRun("wf-2");
  other.operations = {OperationRow{"op-1", "s1", "t", SideEffect::kReadOnly, "in_flight", 1, "fp", "ch"}};
  ASSERT_TRUE(journal_->Append(other));
  AppendRequest clash = StartRun("wf-3");
  clash.operations = other.operations;
  auto result = journal_->Append(clash);
  ASSERT_FALSE(result);
  auto runs = journal_->ListRuns();
  ASSERT_TRUE(runs);
  EXPECT_EQ(runs.value().size(), 2u) << "the run's events must roll back with its rows";
  EXPECT_EQ(Count("SELECT count(*) FROM timers"), 2);
}

TEST_F(JournalTest, SurvivesReopen) {
  ASSERT_TRUE(journal_->Append(StartRun("wf-1")));
  journal_.reset();
  auto reopened = OpenSqliteJournal(dir_.File("journal.db"));
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
  auto opened = OpenSqliteJournal(dir.File("junk.db"));
  ASSERT_FALSE(opened);
  EXPECT_NE(opened.error().message().find("junk.db"), std::string::npos)
      << opened.error().ToString();
}

}  // namespace
}  // namespace reckon::storage
