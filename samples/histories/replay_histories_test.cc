// Replays the saved histories of samples/histories/ against the sample workflows as they are
// now: the check a user runs in CI before deploying a change (docs/GUIDE.md, "Replaying
// histories in CI"). A change that would break a run in flight fails here, naming the run and
// the step. Regenerate the files with reckon-sample-histories (README.md beside them).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <set>
#include <string>
#include <utility>

#include "reckon/worker/replayer.h"
#include "samples/agent/agent_loop.h"
#include "samples/agent/propose_tool.h"
#include "samples/refund/refund_contracts.h"
#include "samples/refund/refund_workflow.h"

namespace reckon {
namespace {

namespace json = boost::json;

const std::string kHistories = std::string(RECKON_SOURCE_DIR) + "/samples/histories";

class SampleHistoriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(refund::RegisterRefundContracts(contracts_));
    ASSERT_TRUE(contracts_.Register(agent::ProposeContract()));
  }

  // The workflows as the sample workers register them.
  static void RegisterCurrent(WorkflowRegistry& workflows) {
    ASSERT_TRUE(workflows.Register(refund::kRefundWorkflow, refund::RefundWorkflow));
    ASSERT_TRUE(workflows.Register(agent::kAgentLoopWorkflow, agent::AgentLoopWorkflow));
  }

  ContractRegistry contracts_;
};

TEST_F(SampleHistoriesTest, TheCurrentCodeReplaysEverySavedHistory) {
  WorkflowRegistry workflows;
  RegisterCurrent(workflows);
  auto replay = ReplayHistoryDirectory(workflows, kHistories, ReplayOptions{&contracts_});
  ASSERT_TRUE(replay) << replay.error().message();
  EXPECT_EQ(replay.value().failures(), 0u) << replay.value().FailureText();
  // Both samples, finished and in flight, are covered.
  std::set<std::pair<std::string, storage::RunStatus>> covered;
  for (const FileReplay& file : replay.value().files) {
    if (!file.result) continue;
    covered.emplace(file.result.value().workflow_type, file.result.value().history_status);
    EXPECT_TRUE(file.result.value().inputs_checked);
  }
  for (const char* type : {refund::kRefundWorkflow, agent::kAgentLoopWorkflow}) {
    EXPECT_TRUE(covered.count({type, storage::RunStatus::kCompleted})) << type;
    EXPECT_TRUE(covered.count({type, storage::RunStatus::kRunning})) << type;
  }
}

// The refund workflow as someone might "improve" it: refund first, look the payment up
// afterwards. Registered under the type name of the real one, as a new release would be.
Task<WorkflowOutcome> RefundFirst(WorkflowContext& ctx, json::value input) {
  const json::object& in = input.as_object();
  json::object refund{{"payment_id", in.at("payment_id")},
                      {"amount_cents", 1500},
                      {"reason", in.at("reason")}};
  auto refund_call = ctx.Call("send_refund", std::move(refund));
  CallResult refunded = co_await refund_call;
  if (!refunded) co_return refunded.error();
  json::object lookup{{"payment_id", in.at("payment_id")}};
  auto lookup_call = ctx.Call("lookup_payment", std::move(lookup));
  CallResult payment = co_await lookup_call;
  if (!payment) co_return payment.error();
  co_return json::object{{"refund_id", refunded.value().provider_ref}};
}

TEST_F(SampleHistoriesTest, AChangedRefundWorkflowIsCaughtNamingTheStep) {
  WorkflowRegistry workflows;
  ASSERT_TRUE(workflows.Register(refund::kRefundWorkflow, RefundFirst));
  ASSERT_TRUE(workflows.Register(agent::kAgentLoopWorkflow, agent::AgentLoopWorkflow));
  auto history = storage::ReadHistoryFile(kHistories + "/refund-completed.json");
  ASSERT_TRUE(history) << history.error().message();
  auto replayed = ReplayHistory(workflows, history.value(), ReplayOptions{&contracts_});
  ASSERT_FALSE(replayed);
  EXPECT_EQ(replayed.error().code(), Errc::kNondeterminism);
  const std::string& message = replayed.error().message();
  EXPECT_NE(message.find("run 'refund-pay-7'"), std::string::npos) << message;
  EXPECT_NE(message.find("'lookup_payment#1'"), std::string::npos) << message;

  // The directory replay reports both refund histories, and only them.
  auto replay = ReplayHistoryDirectory(workflows, kHistories, ReplayOptions{&contracts_});
  ASSERT_TRUE(replay) << replay.error().message();
  EXPECT_EQ(replay.value().failures(), 2u) << replay.value().FailureText();
  EXPECT_NE(replay.value().FailureText().find("refund-awaiting-approval.json: nondeterminism: "),
            std::string::npos)
      << replay.value().FailureText();
}

// The agent loop with a sentence added to the user's goal: a change that looks harmless, but
// every loop in flight asked the model with the old words, so the journaled replies no longer
// answer the question the code now asks.
Task<WorkflowOutcome> GoalReworded(WorkflowContext& ctx, json::value input) {
  json::object in = input.as_object();
  in["goal"] = std::string(in["goal"].as_string()) + " Be brief.";
  auto loop = agent::AgentLoopWorkflow(ctx, std::move(in));
  co_return co_await std::move(loop);
}

TEST_F(SampleHistoriesTest, ARewordedAgentGoalIsCaughtNamingTheModelStep) {
  WorkflowRegistry workflows;
  ASSERT_TRUE(workflows.Register(refund::kRefundWorkflow, refund::RefundWorkflow));
  ASSERT_TRUE(workflows.Register(agent::kAgentLoopWorkflow, GoalReworded));
  auto history = storage::ReadHistoryFile(kHistories + "/agent-loop-awaiting-approval.json");
  ASSERT_TRUE(history) << history.error().message();
  auto replayed = ReplayHistory(workflows, history.value(), ReplayOptions{&contracts_});
  ASSERT_FALSE(replayed);
  EXPECT_EQ(replayed.error().code(), Errc::kNondeterminism);
  const std::string& message = replayed.error().message();
  EXPECT_NE(message.find("'agent-2'"), std::string::npos) << message;
  EXPECT_NE(message.find("'r1-model'"), std::string::npos) << message;
}

}  // namespace
}  // namespace reckon
