// The journaled plan hash, embedded: RunPlan journals the plan's canonical hash
// (plan/plan.h, PlanHash) in WorkflowStarted.definitionHash, and a plain workflow start
// journals none. Read back from a reopened journal.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "reckon/plan/plan.h"
#include "reckon/storage/backend/open_backend.h"
#include "reckon/storage/testing/test_backend.h"
#include "tests/support/temp_dir.h"
#include "reckon/host/embedded_host.h"
#include "reckon/host/plan_runner.h"
#include "reckon/worker/plan_workflow.h"
#include "reckon/testkit/gtest.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/test_workflows.h"

namespace reckon {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace reckon::testing;

Plan TwoSteps(const std::string& plan_id) {
  auto plan = ParsePlanJson(json::parse(R"({"plan_id": ")" + plan_id + R"(", "steps": [
    {"id": "a", "tool": "reserve", "input": {"account": "acct-a", "amount_cents": 100}},
    {"id": "b", "tool": "reserve", "depends_on": ["a"],
     "input": {"account": "acct-b", "amount_cents": 200, "memo": {"$ref": "steps.a.output.ref"}}}
  ]})"));
  EXPECT_TRUE(plan) << plan.error().ToString();
  return plan.value();
}

asio::awaitable<Result<std::string>> RunBoth(EmbeddedHost& host, const Plan& plan) {
  RECKON_CO_TRY(co_await host.Recover());
  auto ran = RunPlan(host, plan, PlanRunOptions{});
  RECKON_CO_TRY(PlanRunReport report, co_await std::move(ran));
  if (report.progress.status() != storage::RunStatus::kCompleted) {
    co_return Err(Errc::kInternal, "the plan did not complete");
  }
  auto started = host.engine().Start("plain-1", kCallOnce,
                                     CallOnceInput("reserve", FastInput("acct-c", 300)));
  RECKON_CO_TRY(co_await std::move(started));
  RECKON_CO_TRY(co_await host.UntilIdle());
  co_return std::string("done");
}

// The WorkflowStarted event of `workflow_id`'s run, from the journal `name`.
storage::WorkflowStarted StartOf(const std::string& name, const std::string& workflow_id) {
  auto journal = storage::OpenJournal(name);
  EXPECT_TRUE(journal) << journal.error().ToString();
  auto run = journal.value()->FindLatestRun(workflow_id);
  EXPECT_TRUE(run && run.value()) << workflow_id;
  auto events = journal.value()->ReadEvents(run.value()->ref, 1);
  EXPECT_TRUE(events && !events.value().empty());
  auto* started = std::get_if<storage::WorkflowStarted>(&events.value().front().body);
  EXPECT_NE(started, nullptr);
  return started != nullptr ? *started : storage::WorkflowStarted{};
}

TEST(PlanHashTest, RunPlanJournalsThePlansHashAndAPlainStartNone) {
  TempDir dir;
  const std::string journal = storage::NewTestJournalOrThrow(dir);  // SQLite or PostgreSQL
  testkit::FakeProvider provider;
  const Plan plan = TwoSteps("hashed-1");
  {
    auto host = EmbeddedHost::Open(journal);
    ASSERT_TRUE(host) << host.error().ToString();
    RECKON_ASSERT_OK(host.value()->tools().Register(
        testkit::ProviderTool(FastContract("reserve", SideEffect::kIdempotentWrite), provider)));
    RECKON_ASSERT_OK(RegisterPlanWorkflow(host.value()->workflows()));
    RECKON_ASSERT_OK(host.value()->workflows().Register(kCallOnce, CallOnce));
    RECKON_ASSERT_OK(host.value()->Run(RunBoth(*host.value(), plan)));
  }
  const std::string hash = PlanHash(plan);
  ASSERT_EQ(hash.size(), 64u) << hash;
  const storage::WorkflowStarted planned = StartOf(journal, "hashed-1");
  EXPECT_EQ(planned.workflow_type, kPlanWorkflow);
  EXPECT_EQ(planned.definition_hash, hash);
  const storage::WorkflowStarted plain = StartOf(journal, "plain-1");
  EXPECT_EQ(plain.workflow_type, kCallOnce);
  EXPECT_EQ(plain.definition_hash, "");
}

}  // namespace
}  // namespace reckon
