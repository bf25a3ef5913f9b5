// The journal conformance suite (journal_conformance.h): compiled into each backend's test
// binary, which instantiates it.
#include "reckon/storage/testing/journal_conformance.h"

#include <gmock/gmock.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "reckon/storage/group_commit.h"
#include "reckon/storage/testing/journal_requests.h"
#include "reckon/storage/testing/reversing_codec.h"

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

OperationRow Operation(const std::string& id, const std::string& tool, const std::string& state) {
  return OperationRow{id, "s-" + id, tool, SideEffect::kNonRepeatableWrite, state, 1, "fp", "ch",
                      "", 5000};
}

std::vector<std::string> Ids(const std::vector<RunRow>& runs) {
  std::vector<std::string> ids;
  for (const RunRow& run : runs) ids.push_back(run.ref.workflow_id);
  return ids;
}

TEST_P(JournalConformanceTest, OpensAtTheNewestSchema) {
  EXPECT_EQ(journal_->schema_version(), backend_->newest_schema_version());
  EXPECT_FALSE(journal_->path().empty());
  auto integrity = journal_->IntegrityCheck();
  ASSERT_TRUE(integrity) << integrity.error().ToString();
  EXPECT_EQ(integrity.value(), "ok");
}

TEST_P(JournalConformanceTest, AppendsAndReadsBackInOrder) {
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
  auto second = journal_->Append(next);
  ASSERT_TRUE(second) << second.error().ToString();
  EXPECT_EQ(second.value().run_pk, ack.value().run_pk);
  EXPECT_EQ(second.value().first_seq, 3);

  auto events = journal_->ReadEvents({"wf-1", "r1"});
  ASSERT_TRUE(events) << events.error().ToString();
  ASSERT_EQ(events.value().size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(events.value()[i].seq, std::int64_t(i + 1));
  ASSERT_TRUE(std::holds_alternative<WorkflowStarted>(events.value()[0].body));
  EXPECT_EQ(std::get<WorkflowStarted>(events.value()[0].body).workflow_type, "refund");
  ASSERT_TRUE(std::holds_alternative<AttemptStarted>(events.value()[3].body));
  EXPECT_EQ(std::get<AttemptStarted>(events.value()[3].body).deadline_us, 5000);
  EXPECT_EQ(events.value()[3].recorded_at_us, 2000);

  auto from3 = journal_->ReadEvents({"wf-1", "r1"}, 3);
  ASSERT_TRUE(from3);
  EXPECT_EQ(from3.value().size(), 2u);
  auto unknown = journal_->ReadEvents({"wf-404", "r1"});
  ASSERT_TRUE(unknown);
  EXPECT_TRUE(unknown.value().empty());

  auto op = journal_->FindOperation("op-1");
  ASSERT_TRUE(op && op.value());
  EXPECT_EQ(op.value()->state, "in_flight");
  EXPECT_EQ(op.value()->run_pk, ack.value().run_pk);
  EXPECT_EQ(op.value()->due_at_us, 5000);
  EXPECT_EQ(op.value()->updated_at_us, 2000);
  EXPECT_EQ(Count("SELECT count(*) FROM timers"), 0);

  auto run = journal_->FindRun({"wf-1", "r1"});
  ASSERT_TRUE(run && run.value());
  EXPECT_EQ(run.value()->next_seq, 5);
  EXPECT_EQ(run.value()->workflow_type, "refund");
  EXPECT_EQ(run.value()->status, RunStatus::kRunning);
  EXPECT_EQ(run.value()->created_at_us, 1000);
  EXPECT_EQ(run.value()->updated_at_us, 2000);
  auto missing = journal_->FindRun({"wf-1", "r2"});
  ASSERT_TRUE(missing);
  EXPECT_FALSE(missing.value());
}

TEST_P(JournalConformanceTest, PayloadsRoundTripByteForByte) {
  // Every byte value, NUL included, in an event's payload fields.
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  AppendRequest request = MarkerStep("wf-bytes", 1);
  request.events = {MarkerRecorded{"s", "side_effect", bytes + bytes},
                    WorkflowCompleted{std::string(100000, 'x')}};
  ASSERT_TRUE(journal_->Append(request));
  auto events = journal_->ReadEvents({"wf-bytes", "r1"});
  ASSERT_TRUE(events) << events.error().ToString();
  ASSERT_EQ(events.value().size(), 2u);
  EXPECT_EQ(std::get<MarkerRecorded>(events.value()[0].body).value_json, bytes + bytes);
  EXPECT_EQ(std::get<WorkflowCompleted>(events.value()[1].body).result_json.size(), 100000u);
}

TEST_P(JournalConformanceTest, SealedPayloadsOpenOnlyWithTheirKey) {
  ReversingCodec codec;
  journal_.reset();
  auto sealed = backend_->Reopen(&codec);
  ASSERT_TRUE(sealed) << sealed.error().ToString();
  AppendRequest start = MarkerStep("wf-s", 1);
  start.events = {WorkflowStarted{"refund", "{\"card\":\"4111\"}", ""}};
  ASSERT_TRUE(sealed.value()->Append(start));
  auto events = sealed.value()->ReadEvents({"wf-s", "r1"});
  ASSERT_TRUE(events) << events.error().ToString();
  ASSERT_EQ(events.value().size(), 1u);
  const auto& started = std::get<WorkflowStarted>(events.value()[0].body);
  EXPECT_EQ(started.input_json, "{\"card\":\"4111\"}");
  EXPECT_EQ(started.workflow_type, "refund");
  sealed.value().reset();
  // Without the key, the read names the key it needs instead of inventing a payload.
  auto keyless = backend_->Reopen(nullptr);
  ASSERT_TRUE(keyless);
  auto refused = keyless.value()->ReadEvents({"wf-s", "r1"});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(refused.error().message().find("k1"), std::string::npos)
      << refused.error().ToString();
}

TEST_P(JournalConformanceTest, ConditionalAppendRefusesAStaleSequence) {
  ASSERT_TRUE(journal_->Append(StartRun("wf-1")));
  // A second writer that still believes the run is new.
  auto again = journal_->Append(StartRun("wf-1"));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), Errc::kConflict);
  EXPECT_NE(again.error().message().find("expected next sequence 1"), std::string::npos)
      << again.error().ToString();

  AppendRequest ahead;
  ahead.run = {"wf-1", "r1"};
  ahead.expected_next_seq = 7;
  ahead.events = {TimerFired{"t"}};
  auto skipped = journal_->Append(ahead);
  ASSERT_FALSE(skipped);
  EXPECT_EQ(skipped.error().code(), Errc::kConflict);

  // A new run must start at 1.
  AppendRequest late = MarkerStep("wf-new", 2);
  auto refused = journal_->Append(late);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kConflict);

  // Nothing from the refused appends is visible, and the journal goes on.
  auto events = journal_->ReadEvents({"wf-1", "r1"});
  ASSERT_TRUE(events);
  EXPECT_EQ(events.value().size(), 2u);
  EXPECT_EQ(Count("SELECT count(*) FROM runs"), 1);
  EXPECT_TRUE(journal_->Append(MarkerStep("wf-1", 3)));
}

TEST_P(JournalConformanceTest, ConflictInAGroupLeavesTheOthersIntact) {
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
  EXPECT_EQ(Count("SELECT count(*) FROM events"), 6);
}

TEST_P(JournalConformanceTest, AGroupAppendsEveryRequestAndSeveralStepsOfOneRun) {
  // Many runs, and consecutive steps of one run in the same group.
  std::vector<AppendRequest> requests;
  for (int i = 0; i < 40; ++i) requests.push_back(MarkerStep("wf-" + std::to_string(i), 1));
  requests.push_back(MarkerStep("wf-0", 2));
  requests.push_back(MarkerStep("wf-0", 3));
  std::vector<const AppendRequest*> group;
  for (const AppendRequest& request : requests) group.push_back(&request);
  auto results = journal_->AppendGroup(group);
  ASSERT_EQ(results.size(), requests.size());
  for (const auto& result : results) EXPECT_TRUE(result) << result.error().ToString();
  EXPECT_EQ(results.back().value().first_seq, 3);
  EXPECT_EQ(Count("SELECT count(*) FROM events"), 42);
  // A group whose every request conflicts writes nothing and leaves the journal usable.
  const AppendRequest* stale[] = {&requests[0], &requests[1]};
  auto refused = journal_->AppendGroup(stale);
  ASSERT_EQ(refused.size(), 2u);
  EXPECT_FALSE(refused[0]);
  EXPECT_FALSE(refused[1]);
  EXPECT_TRUE(journal_->Append(MarkerStep("wf-1", 2)));
  EXPECT_EQ(Count("SELECT count(*) FROM events"), 43);
}

boost::asio::awaitable<void> AppendSteps(GroupCommitter& committer, std::string workflow_id,
                                         int count, int& acked) {
  for (int i = 1; i <= count; ++i) {
    Result<AppendAck> ack = co_await committer.AsyncAppend(MarkerStep(workflow_id, i),
                                                           boost::asio::use_awaitable);
    EXPECT_TRUE(ack) << ack.error().ToString();
    if (ack) ++acked;
  }
}

TEST_P(JournalConformanceTest, GroupCommitSharesCommitsAmongConcurrentAppenders) {
  boost::asio::io_context io;
  GroupCommitter committer(*journal_, io.get_executor());
  constexpr int kRuns = 8, kSteps = 10;
  int acked = 0;
  for (int r = 0; r < kRuns; ++r) {
    boost::asio::co_spawn(io, AppendSteps(committer, "wf-" + std::to_string(r), kSteps, acked),
                          boost::asio::detached);
  }
  io.run();
  EXPECT_EQ(acked, kRuns * kSteps);
  EXPECT_LE(committer.stats().commits, std::uint64_t(kSteps * 2));
  EXPECT_EQ(Count("SELECT count(*) FROM events"), kRuns * kSteps);
}

TEST_P(JournalConformanceTest, ARequestWithoutEventsIsRefused) {
  AppendRequest empty;
  empty.run = {"wf-1", "r1"};
  auto result = journal_->Append(empty);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), Errc::kInvalidArgument);
  auto runs = journal_->ListRuns();
  ASSERT_TRUE(runs);
  EXPECT_TRUE(runs.value().empty());
  // In a group, it fails alone.
  AppendRequest first = MarkerStep("wf-a", 1);
  AppendRequest last = MarkerStep("wf-b", 1);
  const AppendRequest* group[] = {&first, &empty, &last};
  auto results = journal_->AppendGroup(group);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0]) << results[0].error().ToString();
  ASSERT_FALSE(results[1]);
  EXPECT_EQ(results[1].error().code(), Errc::kInvalidArgument);
  EXPECT_TRUE(results[2]) << results[2].error().ToString();
  EXPECT_EQ(Count("SELECT count(*) FROM runs"), 2);
}

TEST_P(JournalConformanceTest, DerivedTablesFollowTheirEvents) {
  AppendRequest start = StartRun("wf-1");
  start.timers_set = {TimerRow{"sleep-1", 5000}};
  start.approvals = {ApprovalRow{"ap-1", "op-1", "ih", ApprovalState::kRequested}};
  start.outbox = {OutboxMessage{"msg_1", "s1", "orders.refunded", std::string("a\0b", 3)}};
  start.status = RunStatus::kRunning;
  ASSERT_TRUE(journal_->Append(start));
  EXPECT_EQ(Count("SELECT count(*) FROM timers WHERE timer_id = 'sleep-1' AND fire_at_us = 5000"),
            1);
  EXPECT_EQ(Count("SELECT count(*) FROM approvals WHERE approval_id = 'ap-1' AND "
                  "state = 'requested'"),
            1);
  EXPECT_EQ(Count("SELECT count(*) FROM outbox WHERE message_id = 'msg_1' AND "
                  "topic = 'orders.refunded' AND step_id = 's1' AND length(payload) = 3"),
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
  EXPECT_EQ(completed.value()[0].updated_at_us, 5000);
  auto running = journal_->ListRuns(RunStatus::kRunning);
  ASSERT_TRUE(running);
  EXPECT_TRUE(running.value().empty());

  // An outbox message id is unique in the journal: a second one fails its whole request.
  AppendRequest again = StartRun("wf-2");
  again.outbox = start.outbox;
  EXPECT_FALSE(journal_->Append(again));
  EXPECT_EQ(Count("SELECT count(*) FROM runs"), 1);
}

TEST_P(JournalConformanceTest, AFailingDerivedRowFailsTheWholeRequest) {
  // Operation ids are unique across runs: a request whose row takes another run's operation
  // id fails whole, its new run and events included.
  ASSERT_TRUE(journal_->Append(StartRun("wf-1")));
  AppendRequest other = StartRun("wf-2");
  other.operations = {Operation("op-1", "t", "in_flight")};
  ASSERT_TRUE(journal_->Append(other));
  AppendRequest clash = StartRun("wf-3");
  clash.operations = other.operations;
  auto result = journal_->Append(clash);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), Errc::kAlreadyExists) << result.error().ToString();
  auto runs = journal_->ListRuns();
  ASSERT_TRUE(runs);
  EXPECT_EQ(runs.value().size(), 2u) << "the run's events must roll back with its rows";
  EXPECT_EQ(Count("SELECT count(*) FROM timers"), 2);
  // The journal is still usable.
  EXPECT_TRUE(journal_->Append(StartRun("wf-4")));
  // In a group, such a request fails alone; the requests around it land.
  AppendRequest before = StartRun("wf-5");
  AppendRequest after = StartRun("wf-6");
  const AppendRequest* group[] = {&before, &clash, &after};
  auto results = journal_->AppendGroup(group);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0]) << results[0].error().ToString();
  ASSERT_FALSE(results[1]);
  EXPECT_EQ(results[1].error().code(), Errc::kAlreadyExists);
  EXPECT_TRUE(results[2]) << results[2].error().ToString();
  EXPECT_EQ(Count("SELECT count(*) FROM runs"), 5);
  EXPECT_EQ(Count("SELECT count(*) FROM events"), 10);
}

TEST_P(JournalConformanceTest, OperationsAreUpsertedAndListedByStep) {
  AppendRequest start = StartRun("wf-1");
  start.operations = {Operation("op-b", "pay", "in_flight"), Operation("op-a", "mail", "prepared")};
  auto ack = journal_->Append(start);
  ASSERT_TRUE(ack);
  AppendRequest update = MarkerStep("wf-1", 3);
  OperationRow committed = Operation("op-b", "pay", "committed");
  committed.attempt = 2;
  committed.provider_ref = "ref-9";
  committed.due_at_us = 0;
  update.operations = {committed};
  ASSERT_TRUE(journal_->Append(update));
  auto ops = journal_->ListOperations(ack.value().run_pk);
  ASSERT_TRUE(ops) << ops.error().ToString();
  ASSERT_EQ(ops.value().size(), 2u);
  EXPECT_EQ(ops.value()[0].step_id, "s-op-a");
  EXPECT_EQ(ops.value()[1].state, "committed");
  EXPECT_EQ(ops.value()[1].attempt, 2);
  EXPECT_EQ(ops.value()[1].provider_ref, "ref-9");
  EXPECT_EQ(ops.value()[1].side_effect, SideEffect::kNonRepeatableWrite);
  auto none = journal_->FindOperation("op-z");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none.value());
}

TEST_P(JournalConformanceTest, FindsTheLatestRunOfAWorkflow) {
  ASSERT_TRUE(journal_->Append(StartRun("wf-1")));
  AppendRequest second = StartRun("wf-1");
  second.run.run_id = "r2";
  second.timers_set.clear();
  ASSERT_TRUE(journal_->Append(second));
  auto latest = journal_->FindLatestRun("wf-1");
  ASSERT_TRUE(latest && latest.value());
  EXPECT_EQ(latest.value()->ref.run_id, "r2");
  auto none = journal_->FindLatestRun("wf-2");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none.value());
}

TEST_P(JournalConformanceTest, QueryRunsFiltersAndPagesNewestFirst) {
  // 12 runs: types alternate, every third completed, ids "a-00".."a-05" and "b-06".."b-11";
  // run 4 has a "pay" operation awaiting approval, runs 7 and 8 a "pay" one each (8 has two).
  for (int i = 0; i < 12; ++i) {
    const std::string n = (i < 10 ? "0" : "") + std::to_string(i);
    AppendRequest request = MarkerStep(std::string(i < 6 ? "a-" : "b-") + n, 1);
    request.workflow_type = i % 2 == 0 ? "refund" : "order";
    if (i % 3 == 0) request.status = RunStatus::kCompleted;
    if (i == 4) request.operations = {Operation("op-4", "pay", "awaiting_approval")};
    if (i == 7) request.operations = {Operation("op-7", "pay", "committed")};
    if (i == 8) {
      request.operations = {Operation("op-8a", "pay", "committed"),
                            Operation("op-8b", "pay", "needs_human")};
    }
    ASSERT_TRUE(journal_->Append(request));
  }
  auto query = [&](RunQuery q) {
    auto rows = journal_->QueryRuns(q);
    EXPECT_TRUE(rows) << rows.error().ToString();
    return rows ? Ids(rows.value()) : std::vector<std::string>{};
  };
  using ::testing::ElementsAre;
  RunQuery all;
  all.limit = 5;
  EXPECT_THAT(query(all), ElementsAre("b-11", "b-10", "b-09", "b-08", "b-07"));
  // Keyset paging: the next page starts after the last row's run_pk.
  auto first = journal_->QueryRuns(all);
  ASSERT_TRUE(first);
  all.before_run_pk = first.value().back().run_pk;
  EXPECT_THAT(query(all), ElementsAre("b-06", "a-05", "a-04", "a-03", "a-02"));
  RunQuery by_status;
  by_status.status = RunStatus::kCompleted;
  EXPECT_THAT(query(by_status), ElementsAre("b-09", "b-06", "a-03", "a-00"));
  RunQuery by_type;
  by_type.workflow_type = "order";
  by_type.id_prefix = "a-";
  EXPECT_THAT(query(by_type), ElementsAre("a-05", "a-03", "a-01"));
  RunQuery by_tool;
  by_tool.tool = "pay";
  EXPECT_THAT(query(by_tool), ElementsAre("b-08", "b-07", "a-04"));
  by_tool.limit = 1;
  auto tool_page = journal_->QueryRuns(by_tool);
  ASSERT_TRUE(tool_page && tool_page.value().size() == 1u);
  by_tool.before_run_pk = tool_page.value()[0].run_pk;
  by_tool.limit = 10;
  EXPECT_THAT(query(by_tool), ElementsAre("b-07", "a-04"));
  RunQuery human;
  human.needs_human = true;
  EXPECT_THAT(query(human), ElementsAre("b-08", "a-04"));
  human.status = RunStatus::kRunning;
  human.tool = "pay";
  human.id_prefix = "b-";
  EXPECT_THAT(query(human), ElementsAre("b-08"));
  RunQuery nothing;
  nothing.id_prefix = "c-";
  EXPECT_TRUE(query(nothing).empty());
}

TEST_P(JournalConformanceTest, ContractsAreRecordedOnceAndListedByName) {
  ASSERT_TRUE(journal_->PutContract({"send_refund", "h1", "{\"a\":1}", 10}));
  ASSERT_TRUE(journal_->PutContract({"lookup", "h2", "{}", 11}));
  ASSERT_TRUE(journal_->PutContract({"send_refund", "h9", "{\"changed\":1}", 12}));  // no-op
  auto contracts = journal_->ListContracts();
  ASSERT_TRUE(contracts) << contracts.error().ToString();
  ASSERT_EQ(contracts.value().size(), 2u);
  EXPECT_EQ(contracts.value()[0].name, "lookup");
  EXPECT_EQ(contracts.value()[1].hash, "h1");
  EXPECT_EQ(contracts.value()[1].contract_json, "{\"a\":1}");
  EXPECT_EQ(contracts.value()[1].registered_at_us, 10);
}

TEST_P(JournalConformanceTest, SurvivesReopen) {
  ASSERT_TRUE(journal_->Append(StartRun("wf-x")));
  ASSERT_TRUE(FillRuns(*journal_, 5));
  journal_.reset();
  auto reopened = backend_->Reopen(nullptr);
  ASSERT_TRUE(reopened) << reopened.error().ToString();
  auto events = reopened.value()->ReadEvents({"wf-x", "r1"});
  ASSERT_TRUE(events);
  EXPECT_EQ(events.value().size(), 2u);
  auto filled = reopened.value()->ReadEvents({"wf-4", "r1"});
  ASSERT_TRUE(filled);
  EXPECT_EQ(filled.value().size(), 20u);
  EXPECT_EQ(reopened.value()->schema_version(), backend_->newest_schema_version());
  EXPECT_TRUE(reopened.value()->Append(MarkerStep("wf-x", 3)));
  auto integrity = reopened.value()->IntegrityCheck();
  ASSERT_TRUE(integrity);
  EXPECT_EQ(integrity.value(), "ok");
}

}  // namespace
}  // namespace reckon::storage
