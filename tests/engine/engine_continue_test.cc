// Continue-as-new: a run closes and the next run of the same workflow id starts in one
// transaction, with a history of its own. The chain is visible in the journal (statuses,
// previous run ids), every run's operation ids are its own (a provider never sees a key twice),
// unconsumed signals move to the next run, and it is refused while an operation is not
// terminal. A crash in the next run resumes that run alone.
#include <gtest/gtest.h>

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>

#include <set>

#include "reckon/host/testing/engine_harness.h"
#include "reckon/testkit/gtest.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/journal_view.h"

namespace reckon {
namespace {

using namespace std::chrono_literals;
using namespace reckon::testing;
using namespace reckon::storage;
namespace json = boost::json;

constexpr char kLoop[] = "loop-1";

// Round n charges once (step "charge#1" in every run), then continues as new with round n + 1
// until round 3, which completes.
Task<WorkflowOutcome> Rounds(WorkflowContext& ctx, json::value input) {
  const std::int64_t round = input.as_object().at("round").as_int64();
  auto charge = ctx.Call("charge", FastInput("acct-1", 100 + round));
  CallResult charged = co_await charge;
  if (!charged) co_return charged.error();
  if (round < 3) co_return ctx.ContinueAsNew(json::object{{"round", round + 1}});
  co_return json::object{{"rounds", round}, {"previous_run", ctx.previous_run_id()}};
}

// Issues a call and continues as new without awaiting it: refused.
Task<WorkflowOutcome> Hasty(WorkflowContext& ctx, json::value) {
  auto charge = ctx.Call("charge", FastInput("acct-1", 100));
  (void)charge;
  co_return ctx.ContinueAsNew(json::object{{"round", 2}});
}

// Run 1 takes "go" and continues; run 2 takes "note", which arrived while run 1 was running.
Task<WorkflowOutcome> Relay(WorkflowContext& ctx, json::value input) {
  if (input.as_object().at("round").as_int64() == 1) {
    auto go = ctx.WaitSignal("go");
    std::string payload = co_await go;
    co_return ctx.ContinueAsNew(json::object{{"round", 2}});
  }
  auto note = ctx.WaitSignal("note");
  std::string payload = co_await note;
  co_return json::object{{"note", payload}};
}

class ContinueAsNewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RECKON_ASSERT_OK(h_.tools().Register(
        testkit::ProviderTool(FastContract("charge", SideEffect::kNonRepeatableWrite), provider_)));
    RECKON_ASSERT_OK(h_.workflows().Register("rounds", Rounds));
    RECKON_ASSERT_OK(h_.workflows().Register("hasty", Hasty));
    RECKON_ASSERT_OK(h_.workflows().Register("relay", Relay));
  }

  // The runs of `workflow_id`, oldest first (after Shutdown).
  std::vector<RunRow> Chain(const std::string& workflow_id) {
    RunQuery query;
    query.id_prefix = workflow_id;
    auto rows = h_.journal().QueryRuns(query);
    EXPECT_TRUE(rows) << rows.error().ToString();
    std::vector<RunRow> chain(rows.value().rbegin(), rows.value().rend());
    return chain;
  }

  testkit::FakeProvider provider_;
  EngineHarness h_;
};

TEST_F(ContinueAsNewTest, EachRunClosesAndTheNextStartsWithItsOwnHistoryAndIds) {
  h_.Boot();
  RECKON_ASSERT_OK(h_.Start(kLoop, "rounds", json::object{{"round", 1}}));
  ASSERT_TRUE(h_.RunUntil([&] {
    auto run = h_.Describe(kLoop);
    return run && run->status == RunStatus::kCompleted;
  }));
  const auto summary = h_.Describe(kLoop);
  const json::value result = json::parse(summary->result_json);
  EXPECT_EQ(result.at("rounds").as_int64(), 3);
  // Three charges, at the same step of three runs, under three idempotency keys.
  const auto calls = provider_.calls_to("charge");
  ASSERT_EQ(calls.size(), 3u);
  std::set<std::string> keys;
  for (const auto& call : calls) keys.insert(call.key);
  EXPECT_EQ(keys.size(), 3u);
  h_.Shutdown();

  const auto chain = Chain(kLoop);
  ASSERT_EQ(chain.size(), 3u);
  EXPECT_EQ(chain[0].status, RunStatus::kContinuedAsNew);
  EXPECT_EQ(chain[1].status, RunStatus::kContinuedAsNew);
  EXPECT_EQ(chain[2].status, RunStatus::kCompleted);
  EXPECT_EQ(std::string(result.at("previous_run").as_string()), chain[1].ref.run_id);
  for (std::size_t i = 0; i < chain.size(); ++i) {
    auto events = h_.journal().ReadEvents(chain[i].ref);
    ASSERT_TRUE(events);
    const auto& started = std::get<WorkflowStarted>(events.value().front().body);
    EXPECT_EQ(started.previous_run_id, i == 0 ? "" : chain[i - 1].ref.run_id);
    EXPECT_EQ(started.id_version, kRunScopedIds);
    EXPECT_EQ(json::parse(started.input_json).at("round").as_int64(), static_cast<int>(i) + 1);
    if (i + 1 < chain.size()) {
      const auto& last = events.value().back();
      ASSERT_TRUE(std::holds_alternative<WorkflowContinuedAsNew>(last.body))
          << EventTypeName(last.body);
      EXPECT_EQ(std::get<WorkflowContinuedAsNew>(last.body).next_run_id,
                chain[i + 1].ref.run_id);
    }
    // The operation id is the run's own.
    const IdScope scope{kRunScopedIds, "default", kLoop, chain[i].ref.run_id};
    EXPECT_EQ(OperationIdOfStep(events.value(), "charge#1"), OperationIdFor(scope, "charge#1"));
  }
  // Starting the workflow id again returns the chain's current run.
  h_.Boot();
  auto again = h_.Start(kLoop, "rounds", json::object{{"round", 1}});
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(again.value().run_id, chain[2].ref.run_id);
}

TEST_F(ContinueAsNewTest, IsRefusedWhileAnOperationIsNotTerminalAndSaysWhich) {
  provider_.Script("charge", {testkit::Step{testkit::Behaviour::kHang}});
  h_.Boot();
  RECKON_ASSERT_OK(h_.Start("hasty-1", "hasty", json::object{}));
  ASSERT_TRUE(h_.RunUntilSettled("hasty-1"));
  const auto run = h_.Describe("hasty-1");
  EXPECT_EQ(run->status, RunStatus::kFailed);
  h_.Shutdown();
  const auto failed = BodiesOf<WorkflowFailed>(h_.Events("hasty-1"));
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].code, "continue_as_new_refused");
  EXPECT_NE(failed[0].message.find("'charge#1' (charge)"), std::string::npos) << failed[0].message;
  EXPECT_EQ(Chain("hasty-1").size(), 1u);
}

TEST_F(ContinueAsNewTest, SignalsTheRunDidNotConsumeGoToTheNextRun) {
  h_.Boot();
  RECKON_ASSERT_OK(h_.Start("relay-1", "relay", json::object{{"round", 1}}));
  ASSERT_TRUE(h_.RunUntil([&] {
    auto run = h_.Describe("relay-1");
    return run && run->wait.kind == WaitKind::kSignal;
  }));
  // Both arrive in one batch: run 1 consumes "go", and "note" waits in its history.
  auto note = h_.engine().Signal("relay-1", "note", "\"carried\"");
  auto go = h_.engine().Signal("relay-1", "go", "{}");
  auto noted = h_.Await(std::move(note));
  auto went = h_.Await(std::move(go));
  ASSERT_TRUE(noted && *noted);
  ASSERT_TRUE(went && *went);
  ASSERT_TRUE(h_.RunUntil([&] {
    auto run = h_.Describe("relay-1");
    return run && run->status == RunStatus::kCompleted;
  }));
  EXPECT_EQ(json::parse(h_.Describe("relay-1")->result_json).at("note"), "\"carried\"");
}

// Life 1 dies during the first attempt of run 2's charge: the journal holds run 1 closed and
// run 2 started (one transaction). Life 2 resumes run 2 alone; the charge that was in flight is
// reconciled, never repeated, and run 1's charge is not touched again.
TEST_F(ContinueAsNewTest, ACrashInTheNextRunResumesThatRunWithoutRepeatingAnEffect) {
  provider_.OnCall([this](const testkit::CallRecord& call) {
    if (provider_.calls_to("charge").size() == 2 && call.attempt == 1) h_.Crash();
  });
  h_.Boot();
  RECKON_ASSERT_OK(h_.Start(kLoop, "rounds", json::object{{"round", 1}}));
  ASSERT_TRUE(h_.RunUntil([this] { return h_.crashed(); }));
  provider_.OnCall(nullptr);
  h_.Restart();
  auto recovered = h_.Recover();
  ASSERT_TRUE(recovered) << recovered.error().ToString();
  EXPECT_EQ(recovered.value(), 1);  // run 2 only: run 1 is closed
  ASSERT_TRUE(h_.RunUntil([&] {
    auto run = h_.Describe(kLoop);
    return run && run->status == RunStatus::kCompleted;
  }));
  EXPECT_EQ(provider_.total_effects(), 3);  // one charge per run, the interrupted one included
  h_.Shutdown();
  EXPECT_EQ(Chain(kLoop).size(), 3u);
}

}  // namespace
}  // namespace reckon
