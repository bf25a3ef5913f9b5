// EmbeddedHost, the composition root of embedded mode, over a real SQLite journal: UntilIdle()
// completes only once everything shown is durable (a reopened journal holds it), a run that
// waits for a person is idle, Settle() grants approvals as a person would, and RunPlan runs an
// agent plan as one library call (progress lines, step states, refusals that journal nothing).
#include "reckon/worker/embedded_host.h"

#include <gtest/gtest.h>

#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include "reckon/storage/sqlite/sqlite_journal.h"
#include "reckon/plan/plan.h"
#include "reckon/storage/testing/faulty_journal.h"
#include "tests/support/temp_dir.h"
#include "reckon/worker/plan_runner.h"
#include "reckon/worker/plan_workflow.h"
#include "reckon/worker/testing/expect_ok.h"
#include "reckon/worker/testing/fake_provider.h"
#include "reckon/worker/testing/fast_contracts.h"
#include "reckon/worker/testing/test_workflows.h"

namespace reckon {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace reckon::testing;

class EmbeddedHostTest : public ::testing::Test {
 protected:
  std::unique_ptr<EmbeddedHost> OpenHost() {
    auto host = EmbeddedHost::Open(dir_.File("journal.db"));
    EXPECT_TRUE(host) << host.error().ToString();
    EmbeddedHost& h = *host.value();
    auto approved = FastContract("approved_charge", SideEffect::kNonRepeatableWrite);
    approved.approval.kind = ApprovalKind::kAlways;
    approved.approval.grant_ttl = std::chrono::hours(1);
    EXPECT_TRUE(h.tools().Register(
        ProviderTool(FastContract("reserve", SideEffect::kIdempotentWrite), provider_)));
    EXPECT_TRUE(h.tools().Register(ProviderTool(std::move(approved), provider_)));
    EXPECT_TRUE(h.workflows().Register(kCallOnce, CallOnce));
    EXPECT_TRUE(RegisterPlanWorkflow(h.workflows()));
    return std::move(host).value();
  }

  // The runs' statuses as a reopened journal holds them.
  std::map<std::string, std::string> DurableStatuses() {
    auto journal = storage::OpenSqliteJournal(dir_.File("journal.db"));
    EXPECT_TRUE(journal) << journal.error().ToString();
    std::map<std::string, std::string> out;
    auto runs = journal.value()->ListRuns();
    EXPECT_TRUE(runs);
    for (const auto& run : runs.value()) out[run.ref.workflow_id] = storage::RunStatusName(run.status);
    return out;
  }

  TempDir dir_;
  FakeProvider provider_;
};

asio::awaitable<int> StartThreeAndWait(EmbeddedHost& host) {
  auto recovered = co_await host.Recover();
  if (!recovered) co_return -1;
  for (int i = 0; i < 3; ++i) {
    json::value input = CallOnceInput("reserve", FastInput("acct-" + std::to_string(i), 100));
    auto start = host.engine().Start("w" + std::to_string(i), kCallOnce, std::move(input));
    if (!co_await std::move(start)) co_return -2;
  }
  auto idle = co_await host.UntilIdle();
  co_return idle ? 0 : -3;
}

TEST_F(EmbeddedHostTest, UntilIdleCompletesOnceEverythingShownIsDurable) {
  {
    auto host = OpenHost();
    auto ran = host->Run(StartThreeAndWait(*host));
    RECKON_ASSERT_OK(ran);
    EXPECT_EQ(ran.value(), 0);
    EXPECT_EQ(host->engine().BusyRuns(), 0);
    for (const RunSummary& run : host->engine().Runs()) EXPECT_EQ(run.status, storage::RunStatus::kCompleted);
  }  // the host is gone: what follows is what the disk holds
  auto statuses = DurableStatuses();
  ASSERT_EQ(statuses.size(), 3u);
  for (const auto& [id, status] : statuses) EXPECT_EQ(status, "completed") << id;
  EXPECT_EQ(provider_.total_effects(), 3);
}

asio::awaitable<int> StartApprovedAndSettle(EmbeddedHost& host, bool approve) {
  (void)co_await host.Recover();
  json::value input = CallOnceInput("approved_charge", FastInput("acct-9", 500));
  auto start = host.engine().Start("pay", kCallOnce, std::move(input));
  if (!co_await std::move(start)) co_return -1;
  std::optional<std::string> approve_as;
  if (approve) approve_as = "test-approver";
  auto settled = co_await host.Settle(approve_as);
  co_return settled ? 0 : -2;
}

TEST_F(EmbeddedHostTest, ARunWaitingForAPersonIsIdleAndSettleGrantsApprovals) {
  {
    auto host = OpenHost();
    auto waiting = host->Run(StartApprovedAndSettle(*host, /*approve=*/false));
    RECKON_ASSERT_OK(waiting);
    auto run = host->engine().Describe("pay");
    ASSERT_TRUE(run);
    EXPECT_EQ(run->status, storage::RunStatus::kRunning);
    ASSERT_EQ(run->operations.size(), 1u);
    EXPECT_EQ(run->operations[0].state, OperationState::kAwaitingApproval);
    EXPECT_EQ(provider_.total_effects(), 0);
  }
  {
    // A new life: recovery finds the run waiting; Settle grants and the run completes once.
    auto host = OpenHost();
    auto done = host->Run(StartApprovedAndSettle(*host, /*approve=*/true));
    RECKON_ASSERT_OK(done);
    EXPECT_EQ(done.value(), 0);
    EXPECT_EQ(host->engine().Describe("pay")->status, storage::RunStatus::kCompleted);
  }
  EXPECT_EQ(DurableStatuses()["pay"], "completed");
  EXPECT_EQ(provider_.total_effects(), 1);
}

asio::awaitable<int> StartOneAndWait(EmbeddedHost& host) {
  (void)co_await host.Recover();
  json::value input = CallOnceInput("reserve", FastInput("acct-f", 100));
  auto start = host.engine().Start("faulty", kCallOnce, std::move(input));
  if (!co_await std::move(start)) co_return -1;
  auto idle = co_await host.UntilIdle();
  co_return idle ? 0 : -2;
}

TEST_F(EmbeddedHostTest, RunEndsWithTheFailureWhenACommitFailsAndANewHostRecovers) {
  {
    // The host owns the fault-injecting wrapper; the test owns the file's journal beneath it.
    auto sqlite = storage::OpenSqliteJournal(dir_.File("journal.db"));
    RECKON_ASSERT_OK(sqlite);
    auto faulty = std::make_unique<storage::FaultyJournal>(
        *sqlite.value(), storage::FaultyJournal::Faults{.fail_commit = 2});
    EmbeddedHost host(std::move(faulty));
    RECKON_ASSERT_OK(host.tools().Register(
        ProviderTool(FastContract("reserve", SideEffect::kIdempotentWrite), provider_)));
    RECKON_ASSERT_OK(host.workflows().Register(kCallOnce, CallOnce));
    auto ran = host.Run(StartOneAndWait(host));
    ASSERT_FALSE(ran) << "the second commit failed; Run() must not report success";
    EXPECT_EQ(ran.error().code(), Errc::kUnavailable);
    EXPECT_NE(ran.error().message().find("restart the process"), std::string::npos)
        << ran.error().ToString();
    EXPECT_TRUE(host.engine().failed());
  }
  // The attempt ran before the failed commit; its result never became durable. A new process
  // life recovers: the idempotent write is retried under the same key, one effect in all.
  auto host = OpenHost();
  auto ran = host->Run(StartOneAndWait(*host));
  RECKON_ASSERT_OK(ran);
  EXPECT_EQ(ran.value(), 0);
  EXPECT_EQ(host->engine().Describe("faulty")->status, storage::RunStatus::kCompleted);
  EXPECT_EQ(provider_.total_effects(), 1);
}

json::value TwoStepPlan(const std::string& plan_id, int amount) {
  return json::parse(R"({"plan_id": ")" + plan_id + R"(", "steps": [
    {"id": "hold", "tool": "reserve", "input": {"account": "acct-h", "amount_cents": )" +
                     std::to_string(amount) + R"(}},
    {"id": "pay", "tool": "approved_charge", "depends_on": ["hold"],
     "input": {"account": "acct-p", "amount_cents": 700, "memo": {"$ref": "steps.hold.output.ref"}}}
  ]})");
}

asio::awaitable<Result<PlanRunReport>> RunPlanMain(EmbeddedHost& host, Plan plan,
                                                   std::vector<std::string>* lines,
                                                   bool approve) {
  (void)co_await host.Recover();
  PlanRunOptions options;
  if (approve) options.approve_as = "plan-approver";
  options.on_line = [lines](const std::string& line) { lines->push_back(line); };
  co_return co_await RunPlan(host, plan, std::move(options));
}

TEST_F(EmbeddedHostTest, RunPlanRunsAPlanAndFollowsItsEvents) {
  auto plan = ParsePlanJson(TwoStepPlan("plan-1", 100));
  RECKON_ASSERT_OK(plan);
  std::vector<std::string> lines;
  {
    auto host = OpenHost();
    auto ran = host->Run(RunPlanMain(*host, plan.value(), &lines, /*approve=*/false));
    RECKON_ASSERT_OK(ran);
    const PlanRunReport& report = ran.value();
    EXPECT_FALSE(report.progress.finished());
    EXPECT_EQ(report.states.at("hold"), "committed");
    EXPECT_EQ(report.states.at("pay"), "awaiting_approval");
    EXPECT_NE(report.progress.WaitingCommands().find("approve"), std::string::npos);
  }
  const std::size_t first_life = lines.size();
  EXPECT_GT(first_life, 0u);
  {
    auto host = OpenHost();
    auto ran = host->Run(RunPlanMain(*host, plan.value(), &lines, /*approve=*/true));
    RECKON_ASSERT_OK(ran);
    const PlanRunReport& report = ran.value();
    EXPECT_EQ(report.progress.status(), storage::RunStatus::kCompleted);
    EXPECT_EQ(report.states.at("pay"), "committed");
  }
  // The second life shows the first life's events again (from the journal), then its own.
  EXPECT_GT(lines.size(), 2 * first_life);
  EXPECT_EQ(provider_.total_effects(), 2);
}

TEST_F(EmbeddedHostTest, RunPlanRefusesAnInvalidPlanOrAnotherPlanUnderAUsedId) {
  auto host = OpenHost();
  auto invalid = ParsePlanJson(json::parse(R"({"plan_id": "bad", "steps": [
      {"id": "x", "tool": "no_such_tool", "input": {}}]})"));
  RECKON_ASSERT_OK(invalid);
  std::vector<std::string> lines;
  auto refused = host->Run(RunPlanMain(*host, invalid.value(), &lines, false));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kInvalidArgument);
  EXPECT_NE(refused.error().message().find("no_such_tool"), std::string::npos);

  auto first = ParsePlanJson(TwoStepPlan("plan-2", 100));
  auto other = ParsePlanJson(TwoStepPlan("plan-2", 999));
  RECKON_ASSERT_OK(first);
  RECKON_ASSERT_OK(other);
  RECKON_ASSERT_OK(host->Run(RunPlanMain(*host, first.value(), &lines, true)));
  auto again = host->Run(RunPlanMain(*host, other.value(), &lines, true));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), Errc::kAlreadyExists);
  host.reset();
  auto statuses = DurableStatuses();
  EXPECT_EQ(statuses.count("bad"), 0u) << "an invalid plan journals nothing";
  EXPECT_EQ(statuses["plan-2"], "completed");
}

}  // namespace
}  // namespace reckon
