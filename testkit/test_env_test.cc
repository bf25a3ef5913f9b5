// TestEnv's own contract, beyond the sample user test (tests/out_of_tree/order_workflow_test.cc,
// also built in this tree): a crash requested from inside a tool, time moved only by Skip()
// without auto-skip, finished runs described from the journal.
#include "reckon/testkit/test_env.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "reckon/testkit/fake_provider.h"
#include "reckon/testkit/gtest.h"

namespace reckon::testkit {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

ToolContract Idempotent(std::string name) {
  ToolContract c;
  c.name = std::move(name);
  c.description = "A test tool.";
  c.side_effect = SideEffect::kIdempotentWrite;
  c.attempt_timeout = 30s;
  c.retry.max_attempts = 3;
  c.retry.backoff = {1min, 2.0, 10min};
  c.input_schema = json::parse(R"({"type": "object"})");
  c.evidence = "The provider's reference.";
  return c;
}

// Sleeps a day, then calls `poke` once.
Task<WorkflowOutcome> Nap(WorkflowContext& ctx, json::value) {
  co_await ctx.Sleep(24h);
  json::object input{{"n", 1}};
  CallResult poked = co_await ctx.Call("poke", std::move(input));
  if (!poked) co_return poked.error();
  co_return json::object{{"ref", poked.value().provider_ref}};
}

class TestEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RECKON_ASSERT_OK(env_.tools().Register(ProviderTool(Idempotent("poke"), provider_)));
    RECKON_ASSERT_OK(env_.workflows().Register("nap", Nap));
  }
  FakeProvider provider_;
  TestEnv env_;
};

TEST_F(TestEnvTest, CrashRequestedByAToolEndsTheLifeThenRestartFinishes) {
  provider_.OnCall([this](const CallRecord&) {
    if (provider_.calls().size() == 1) env_.RequestCrash();
  });
  provider_.Script("poke", {{Behaviour::kHang}});
  RECKON_ASSERT_OK(env_.Start("nap-1", "nap", json::object{}));
  auto settled = env_.RunUntilSettled("nap-1");
  ASSERT_FALSE(settled);
  EXPECT_EQ(settled.error().code(), Errc::kUnavailable) << settled.error().ToString();

  RECKON_ASSERT_OK_AND_ASSIGN(int resumed, env_.CrashAndRestart());
  EXPECT_EQ(resumed, 1);
  RECKON_ASSERT_OK_AND_ASSIGN(RunSummary run, env_.RunUntilSettled("nap-1"));
  EXPECT_EQ(run.status, storage::RunStatus::kCompleted) << run.stuck_reason;
  EXPECT_EQ(provider_.total_effects(), 1);
}

TEST_F(TestEnvTest, WithoutAutoSkipTimeMovesOnlyBySkip) {
  env_.set_auto_skip(false);
  RECKON_ASSERT_OK(env_.Start("nap-1", "nap", json::object{}));
  RECKON_ASSERT_OK(env_.Skip(23h));
  RECKON_ASSERT_OK_AND_ASSIGN(RunSummary run, env_.Describe("nap-1"));
  EXPECT_EQ(run.status, storage::RunStatus::kRunning);
  EXPECT_TRUE(provider_.calls().empty()) << "the timer fired an hour early";

  RECKON_ASSERT_OK(env_.Skip(1h));
  RECKON_ASSERT_OK_AND_ASSIGN(run, env_.Describe("nap-1"));
  EXPECT_EQ(run.status, storage::RunStatus::kCompleted) << run.stuck_reason;
  EXPECT_EQ(provider_.calls().size(), 1u);
}

TEST_F(TestEnvTest, AFinishedRunIsDescribedAndItsHistoryReplays) {
  RECKON_ASSERT_OK(env_.Start("nap-1", "nap", json::object{}));
  RECKON_ASSERT_OK(env_.RunUntilIdle());
  RECKON_ASSERT_OK(env_.CrashAndRestart());  // the new life holds no finished run in memory
  RECKON_ASSERT_OK_AND_ASSIGN(RunSummary run, env_.Describe("nap-1"));
  EXPECT_EQ(run.status, storage::RunStatus::kCompleted);
  RECKON_ASSERT_OK_AND_ASSIGN(RunHistory history, env_.History("nap-1"));
  EXPECT_EQ(history.run, run.ref);
  RECKON_EXPECT_OK(env_.Replay(history));
  EXPECT_EQ(env_.Describe("nap-2").error().code(), Errc::kNotFound);
}

}  // namespace
}  // namespace reckon::testkit
