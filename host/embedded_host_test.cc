// EmbeddedHost, the composition root of embedded mode, over a real SQLite journal: UntilIdle()
// completes only once everything shown is durable (a reopened journal holds it), a run that
// waits for a person is idle, Settle() grants approvals as a person would, and RunPlan runs an
// agent plan as one library call (progress lines, step states, refusals that journal nothing),
// and UntilSettled(id) tells a host what a run waits on: nothing, a signal, a timer (it keeps
// waiting through one), an approval, a person, or a stop for nondeterminism.
#include "reckon/host/embedded_host.h"

#include <gtest/gtest.h>

#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include "reckon/storage/backend/open_backend.h"
#include "reckon/storage/testing/test_backend.h"
#include "reckon/plan/plan.h"
#include "reckon/storage/testing/faulty_journal.h"
#include "tests/support/temp_dir.h"
#include "reckon/host/plan_runner.h"
#include "reckon/worker/plan_workflow.h"
#include "reckon/testkit/gtest.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/journal_view.h"
#include "reckon/host/testing/test_workflows.h"

namespace reckon {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace reckon::testing;

class EmbeddedHostTest : public ::testing::Test {
 protected:
  std::unique_ptr<EmbeddedHost> OpenHost() {
    auto host = EmbeddedHost::Open(journal_);
    EXPECT_TRUE(host) << host.error().ToString();
    EmbeddedHost& h = *host.value();
    auto approved = FastContract("approved_charge", SideEffect::kNonRepeatableWrite);
    approved.approval.kind = ApprovalKind::kAlways;
    approved.approval.grant_ttl = std::chrono::hours(1);
    EXPECT_TRUE(h.tools().Register(
        testkit::ProviderTool(FastContract("reserve", SideEffect::kIdempotentWrite), provider_)));
    EXPECT_TRUE(h.tools().Register(testkit::ProviderTool(std::move(approved), provider_)));
    auto parked = FastContract("transfer", SideEffect::kNonRepeatableWrite);
    parked.reconcile = {.mode = ReconcileMode::kNeedsHuman};
    EXPECT_TRUE(h.tools().Register(testkit::ProviderTool(std::move(parked), provider_)));
    EXPECT_TRUE(h.workflows().Register(kCallOnce, CallOnce));
    EXPECT_TRUE(RegisterPlanWorkflow(h.workflows()));
    return std::move(host).value();
  }

  // The runs' statuses as a reopened journal holds them.
  std::map<std::string, std::string> DurableStatuses() {
    auto journal = storage::OpenJournal(journal_);
    EXPECT_TRUE(journal) << journal.error().ToString();
    std::map<std::string, std::string> out;
    auto runs = journal.value()->ListRuns();
    EXPECT_TRUE(runs);
    for (const auto& run : runs.value()) out[run.ref.workflow_id] = storage::RunStatusName(run.status);
    return out;
  }

  TempDir dir_;
  const std::string journal_ = storage::NewTestJournalOrThrow(dir_);  // SQLite or PostgreSQL
  testkit::FakeProvider provider_;
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
    // The host owns the fault-injecting wrapper; the test owns the journal beneath it.
    auto inner = storage::OpenJournal(journal_);
    RECKON_ASSERT_OK(inner);
    auto faulty = std::make_unique<storage::FaultyJournal>(
        *inner.value(), storage::FaultyJournal::Faults{.fail_commit = 2});
    EmbeddedHost host(std::move(faulty));
    RECKON_ASSERT_OK(host.tools().Register(
        testkit::ProviderTool(FastContract("reserve", SideEffect::kIdempotentWrite), provider_)));
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

// --- what a run waits on ---------------------------------------------------------------------

// Recovers, starts `id` (unless `type` is empty) and waits until the run settles.
asio::awaitable<Result<RunSummary>> StartAndSettle(EmbeddedHost& host, std::string id,
                                                   std::string type, json::value input) {
  RECKON_CO_TRY(co_await host.Recover());
  if (!type.empty()) {
    RECKON_CO_TRY(co_await host.engine().Start(id, type, std::move(input)));
  }
  co_return co_await host.UntilSettled(std::move(id));
}

asio::awaitable<Result<RunSummary>> SignalAndSettle(EmbeddedHost& host, std::string id,
                                                    std::string name, std::string payload) {
  RECKON_CO_TRY(co_await host.engine().Signal(id, std::move(name), std::move(payload)));
  co_return co_await host.UntilSettled(std::move(id));
}

asio::awaitable<Result<void>> StartOnly(EmbeddedHost& host, std::string id, std::string type,
                                        json::value input) {
  RECKON_CO_TRY(co_await host.Recover());
  RECKON_CO_TRY(co_await host.engine().Start(id, type, std::move(input)));
  co_return Ok();
}

// Waits for the signal "approved"; completes with its payload.
Task<WorkflowOutcome> AwaitApproved(WorkflowContext& ctx, json::value) {
  std::string payload = co_await ctx.WaitSignal("approved");
  co_return json::object{{"payload", payload}};
}

// Sleeps input.ms, then waits for the signal "wake".
Task<WorkflowOutcome> NapThenWake(WorkflowContext& ctx, json::value input) {
  co_await ctx.Sleep(std::chrono::milliseconds(input.at("ms").as_int64()));
  std::string payload = co_await ctx.WaitSignal("wake");
  co_return json::object{{"payload", payload}};
}

// Calls `tool` at step "hold", then waits for the signal "go".
Task<WorkflowOutcome> HoldThenGo(WorkflowContext& ctx, std::string tool) {
  CallResult held = co_await ctx.Call(std::move(tool), FastInput("acct-h", 100),
                                      CallOptions{.step_id = "hold"});
  if (!held) co_return held.error();
  std::string payload = co_await ctx.WaitSignal("go");
  co_return json::object{{"go", payload}};
}

TEST_F(EmbeddedHostTest, ARunThatFinishedWaitsOnNothing) {
  auto host = OpenHost();
  auto settled = host->Run(StartAndSettle(*host, "done", kCallOnce,
                                          CallOnceInput("reserve", FastInput("acct-d", 100))));
  RECKON_ASSERT_OK(settled);
  EXPECT_EQ(settled.value().wait, (RunWait{WaitKind::kNothing, ""}));
  EXPECT_EQ(settled.value().status, storage::RunStatus::kCompleted);
  // Settled already: completes at once. A run the engine does not hold is refused.
  auto again = host->Run(host->UntilSettled("done"));
  RECKON_ASSERT_OK(again);
  EXPECT_EQ(again.value().wait.kind, WaitKind::kNothing);
  auto unknown = host->Run(host->UntilSettled("no-such-run"));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), Errc::kNotFound);
}

// A run that finished in an earlier life of the process is not held by the new engine: its
// summary comes from the journal.
TEST_F(EmbeddedHostTest, ARunFinishedInAnEarlierLifeSettlesFromTheJournal) {
  {
    auto host = OpenHost();
    auto settled = host->Run(StartAndSettle(*host, "earlier", kCallOnce,
                                            CallOnceInput("reserve", FastInput("acct-e", 100))));
    RECKON_ASSERT_OK(settled);
    EXPECT_EQ(settled.value().status, storage::RunStatus::kCompleted);
  }
  auto host = OpenHost();
  auto recovered = host->Run(host->Recover());
  RECKON_ASSERT_OK(recovered);
  auto settled = host->Run(host->UntilSettled("earlier"));
  RECKON_ASSERT_OK(settled);
  EXPECT_EQ(settled.value().status, storage::RunStatus::kCompleted);
  EXPECT_EQ(settled.value().wait.kind, WaitKind::kNothing);
  EXPECT_EQ(settled.value().committed_operations, 1);
}

TEST_F(EmbeddedHostTest, ARunWaitingForASignalNamesItAndGoesOnWhenItArrives) {
  auto host = OpenHost();
  RECKON_ASSERT_OK(host->workflows().Register("await_approved", AwaitApproved));
  auto waiting = host->Run(StartAndSettle(*host, "sig", "await_approved", json::object{}));
  RECKON_ASSERT_OK(waiting);
  EXPECT_EQ(waiting.value().wait, (RunWait{WaitKind::kSignal, "approved"}));
  EXPECT_EQ(waiting.value().status, storage::RunStatus::kRunning);
  EXPECT_EQ(host->engine().Describe("sig")->wait, waiting.value().wait);
  // Only the signal can move it on: the engine is idle, and UntilIdle completes.
  EXPECT_EQ(host->engine().BusyRuns(), 0);
  RECKON_ASSERT_OK(host->Run(host->UntilIdle()));

  auto done = host->Run(SignalAndSettle(*host, "sig", "approved", R"({"by":"ann"})"));
  RECKON_ASSERT_OK(done);
  EXPECT_EQ(done.value().wait.kind, WaitKind::kNothing);
  EXPECT_EQ(done.value().status, storage::RunStatus::kCompleted);
  EXPECT_NE(done.value().result_json.find("ann"), std::string::npos) << done.value().result_json;
}

TEST_F(EmbeddedHostTest, ASleepingRunWaitsOnItsTimerAndUntilSettledWaitsThroughIt) {
  auto host = OpenHost();
  RECKON_ASSERT_OK(host->workflows().Register("nap", NapThenWake));
  // The start's batch holds the first activation, so the timer is durable once Start is.
  RECKON_ASSERT_OK(host->Run(StartOnly(*host, "long-nap", "nap", json::object{{"ms", 3600000}})));
  const RunWait wait = host->engine().Describe("long-nap")->wait;
  EXPECT_EQ(wait.kind, WaitKind::kTimer);
  EXPECT_EQ(wait.detail, FormatUtc(wait.until_us));
  const auto timer = BodiesOf<storage::TimerStarted>(
      host->journal().ReadEvents(host->engine().Describe("long-nap")->ref).value());
  ASSERT_EQ(timer.size(), 1u);
  EXPECT_EQ(wait.until_us, timer[0].fire_at_us);

  auto woke = host->Run(StartAndSettle(*host, "short-nap", "nap", json::object{{"ms", 20}}));
  RECKON_ASSERT_OK(woke);
  EXPECT_EQ(woke.value().wait, (RunWait{WaitKind::kSignal, "wake"}));
}

TEST_F(EmbeddedHostTest, ARunWaitingForAnApprovalOrAPersonNamesTheOperation) {
  auto host = OpenHost();
  auto approval = host->Run(StartAndSettle(
      *host, "pay", kCallOnce, CallOnceInput("approved_charge", FastInput("acct-a", 500))));
  RECKON_ASSERT_OK(approval);
  ASSERT_EQ(approval.value().operations.size(), 1u);
  EXPECT_EQ(approval.value().wait,
            (RunWait{WaitKind::kApproval, approval.value().operations[0].operation_id}));

  // The attempt hangs past its deadline: the outcome is unknown and only a person can tell.
  provider_.Script("transfer", {testkit::Step{testkit::Behaviour::kHang}});
  auto person = host->Run(StartAndSettle(*host, "move", kCallOnce,
                                         CallOnceInput("transfer", FastInput("acct-t", 900))));
  RECKON_ASSERT_OK(person);
  ASSERT_EQ(person.value().operations.size(), 1u);
  EXPECT_EQ(person.value().operations[0].state, OperationState::kNeedsHuman);
  EXPECT_EQ(person.value().wait,
            (RunWait{WaitKind::kPerson, person.value().operations[0].operation_id}));
}

TEST_F(EmbeddedHostTest, ARunStoppedAsNondeterministicIsSettledAndSaysWhy) {
  {
    auto host = OpenHost();
    RECKON_ASSERT_OK(host->workflows().Register(
        "order", [](WorkflowContext& ctx, json::value) { return HoldThenGo(ctx, "reserve"); }));
    auto waiting = host->Run(StartAndSettle(*host, "order-1", "order", json::object{}));
    RECKON_ASSERT_OK(waiting);
    EXPECT_EQ(waiting.value().wait, (RunWait{WaitKind::kSignal, "go"}));
  }
  // The next deploy calls another tool at step "hold": the host learns the run is stuck
  // instead of waiting forever, and can exit non-zero.
  auto host = OpenHost();
  RECKON_ASSERT_OK(host->workflows().Register(
      "order", [](WorkflowContext& ctx, json::value) { return HoldThenGo(ctx, "approved_charge"); }));
  auto stopped = host->Run(StartAndSettle(*host, "order-1", "", json::value()));
  RECKON_ASSERT_OK(stopped);
  EXPECT_EQ(stopped.value().wait.kind, WaitKind::kStopped);
  EXPECT_EQ(stopped.value().wait.detail, stopped.value().stuck_reason);
  EXPECT_NE(stopped.value().wait.detail.find("nondeterminism"), std::string::npos)
      << stopped.value().wait.detail;
  EXPECT_NE(stopped.value().wait.detail.find("'hold'"), std::string::npos);
}

}  // namespace
}  // namespace reckon
