// Chained appends (storage::AppendRequest::chained), as ctx.ContinueAsNew uses them: a run
// closes and the next run of its workflow id is created in the same transaction, all or
// nothing, alone or inside a group. Part of the journal conformance suite
// (journal_conformance.h): compiled into each backend's test binary.
#include "reckon/storage/testing/journal_conformance.h"

#include <string>

namespace reckon::storage {
namespace {

AppendRequest Begin(const std::string& workflow_id, const std::string& run_id) {
  AppendRequest request;
  request.run = {workflow_id, run_id};
  request.expected_next_seq = 1;
  request.now_us = 1000;
  request.workflow_type = "loop";
  request.events = {WorkflowStarted{"loop", "{}", ""}};
  return request;
}

// Run r1 of `workflow_id` (at seq 2) continues as new into r2.
AppendRequest ContinueInto(const std::string& workflow_id, std::int64_t expected_next_seq) {
  AppendRequest close;
  close.run = {workflow_id, "r1"};
  close.expected_next_seq = expected_next_seq;
  close.now_us = 2000;
  close.status = RunStatus::kContinuedAsNew;
  close.events = {WorkflowContinuedAsNew{"r2", "{\"round\":2}"}};
  AppendRequest next = Begin(workflow_id, "r2");
  next.now_us = 2000;
  next.events = {WorkflowStarted{"loop", "{\"round\":2}", "", "", 2, "default", "r1"},
                 SignalReceived{"note", "\"carried\"", ""}};
  close.chained.push_back(std::move(next));
  return close;
}

TEST_P(JournalConformanceTest, AChainedAppendClosesOneRunAndStartsTheNextTogether) {
  ASSERT_TRUE(journal_->Append(Begin("loop-1", "r1")));
  auto ack = journal_->Append(ContinueInto("loop-1", 2));
  ASSERT_TRUE(ack) << ack.error().ToString();
  EXPECT_EQ(ack.value().first_seq, 2);  // the closing request's

  auto first = journal_->FindRun({"loop-1", "r1"});
  ASSERT_TRUE(first && first.value());
  EXPECT_EQ(first.value()->status, RunStatus::kContinuedAsNew);
  auto latest = journal_->FindLatestRun("loop-1");
  ASSERT_TRUE(latest && latest.value());
  EXPECT_EQ(latest.value()->ref.run_id, "r2");
  EXPECT_EQ(latest.value()->status, RunStatus::kRunning);
  auto events = journal_->ReadEvents({"loop-1", "r2"});
  ASSERT_TRUE(events);
  ASSERT_EQ(events.value().size(), 2u);
  const auto& started = std::get<WorkflowStarted>(events.value()[0].body);
  EXPECT_EQ(started.previous_run_id, "r1");
  EXPECT_EQ(started.id_version, 2u);
  EXPECT_EQ(started.id_namespace, "default");
  EXPECT_TRUE(std::holds_alternative<SignalReceived>(events.value()[1].body));
  auto closed = journal_->ReadEvents({"loop-1", "r1"});
  ASSERT_TRUE(closed);
  EXPECT_EQ(std::get<WorkflowContinuedAsNew>(closed.value().back().body).next_run_id, "r2");
}

TEST_P(JournalConformanceTest, AChainedAppendThatConflictsWritesNothingOfEitherRun) {
  ASSERT_TRUE(journal_->Append(Begin("loop-1", "r1")));
  // The next run exists already: the chained part conflicts, so the close is undone too.
  ASSERT_TRUE(journal_->Append(Begin("loop-1", "r2")));
  AppendRequest other = Begin("other", "r1");
  AppendRequest chained = ContinueInto("loop-1", 2);
  const AppendRequest* group[] = {&other, &chained};
  auto results = journal_->AppendGroup(group);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0]) << results[0].error().ToString();
  ASSERT_FALSE(results[1]);
  EXPECT_EQ(results[1].error().code(), Errc::kConflict);
  auto first = journal_->FindRun({"loop-1", "r1"});
  ASSERT_TRUE(first && first.value());
  EXPECT_EQ(first.value()->status, RunStatus::kRunning);
  EXPECT_EQ(first.value()->next_seq, 2);
  auto second = journal_->ReadEvents({"loop-1", "r2"});
  ASSERT_TRUE(second);
  EXPECT_EQ(second.value().size(), 1u);
  // The journal stays usable, and the group's other request landed.
  EXPECT_TRUE(journal_->Append(ContinueInto("other", 2)));
}

}  // namespace
}  // namespace reckon::storage
