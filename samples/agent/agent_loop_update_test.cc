// The agent loop's query and update (samples/agent/agent_loop.h): while the loop waits for its
// model, "progress" reports where it is, "instruct" adds an instruction to the conversation
// and answers with the model's reply to it, a malformed instruction is rejected without
// journaling anything, and the instruction is part of what the loop works on afterwards.
#include <gtest/gtest.h>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include "reckon/host/testing/engine_harness.h"
#include "reckon/testkit/gtest.h"
#include "reckon/host/testing/journal_view.h"
#include "samples/agent/agent_loop.h"
#include "samples/agent/propose_tool.h"

namespace reckon::agent {
namespace {

namespace json = boost::json;
using namespace reckon::testing;

// Answers an instruction at once ("noted: <the instruction>"); any other turn waits until
// the test opens the gate, then, if the conversation holds an instruction, ends the loop with
// a summary that counts them, and otherwise replies with something that is not a fragment (the
// loop asks again next round).
class GatedModel final : public ChatModel {
 public:
  boost::asio::awaitable<Result<ChatReply>> Complete(ChatRequest request) override {
    ++calls_;
    const ChatMessage& last = request.messages.back();
    if (last.content.rfind("New instruction from a person:", 0) == 0) {
      const std::size_t begin = 31, end = last.content.find(" Take it into account");
      co_return ChatReply{"noted: " + last.content.substr(begin, end - begin), "gated", "stop"};
    }
    while (!open_) {
      boost::asio::steady_timer pause(co_await boost::asio::this_coro::executor,
                                      std::chrono::milliseconds(2));
      co_await pause.async_wait(boost::asio::use_awaitable);
    }
    int instructions = 0;
    for (const ChatMessage& m : request.messages) {
      if (m.content.rfind("New instruction from a person:", 0) == 0) ++instructions;
    }
    if (instructions == 0) co_return ChatReply{"thinking...", "gated", "stop"};
    const std::string summary = "done after " + std::to_string(instructions) + " instruction(s)";
    co_return ChatReply{json::serialize(json::object{{"done", true}, {"summary", summary}}),
                        "gated", "stop"};
  }
  void Open() { open_ = true; }
  int calls() const { return calls_; }

 private:
  bool open_ = false;
  int calls_ = 0;
};

TEST(AgentLoopUpdateTest, APersonInstructsARunningAgentAndGetsItsAnswer) {
  GatedModel model;
  EngineHarness h;
  RECKON_ASSERT_OK(h.tools().Register(ProposeTool(model)));
  RECKON_ASSERT_OK(h.workflows().Register(kAgentLoopWorkflow, AgentLoopWorkflow));
  h.Boot();
  RECKON_ASSERT_OK(h.Start("agent-1", kAgentLoopWorkflow,
                           json::object{{"goal", "refund payment p-1"}, {"max_rounds", 3}}));
  ASSERT_TRUE(h.RunUntil([&] { return model.calls() == 1; }));  // round 1 asks the model

  auto progress = h.Await(h.engine().Query("agent-1", "progress", "null"));
  ASSERT_TRUE(progress && *progress) << (progress ? progress->error().ToString() : "timeout");
  const json::value before = json::parse(progress->value());
  EXPECT_EQ(before.at("round").as_int64(), 1);
  EXPECT_EQ(before.at("instructions").as_int64(), 0);

  UpdateRequest empty{"", "instruct", R"({"instruction": ""})", ""};
  auto rejected = h.Await(h.engine().Update("agent-1", std::move(empty)));
  ASSERT_TRUE(rejected && !*rejected);
  EXPECT_EQ(rejected->error().code(), Errc::kInvalidArgument);

  UpdateRequest instruction{"i-1", "instruct", R"({"instruction": "prefer partial refunds"})",
                            ""};
  auto answered = h.Await(h.engine().Update("agent-1", std::move(instruction)));
  ASSERT_TRUE(answered && *answered) << (answered ? answered->error().ToString() : "timeout");
  EXPECT_EQ(answered->value().error_code, "");
  EXPECT_EQ(json::parse(answered->value().result_json).at("answer"),
            "noted: prefer partial refunds");

  auto after = h.Await(h.engine().Query("agent-1", "progress", "null"));
  ASSERT_TRUE(after && *after);
  EXPECT_EQ(json::parse(after->value()).at("instructions").as_int64(), 1);

  model.Open();
  ASSERT_TRUE(h.RunUntil([&] {
    auto run = h.Describe("agent-1");
    return run && run->status == storage::RunStatus::kCompleted;
  }));
  const json::value result = json::parse(h.Describe("agent-1")->result_json);
  // Round 1's request was sent before the instruction; round 2's holds it.
  EXPECT_EQ(result.at("summary"), "done after 1 instruction(s)");
  EXPECT_EQ(result.at("rounds").as_int64(), 2);
  h.Shutdown();
  const auto events = h.Events("agent-1");
  EXPECT_EQ(BodiesOf<storage::UpdateAccepted>(events).size(), 1u);
  EXPECT_EQ(BodiesOf<storage::UpdateCompleted>(events).size(), 1u);
  EXPECT_NE(OperationIdOfStep(events, "update:i-1/instruct-model"), "");
}

}  // namespace
}  // namespace reckon::agent
