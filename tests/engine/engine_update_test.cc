// Queries and updates in embedded mode (engine.h: Query, Update; workflow_context.h,
// "queries and updates"): a query answers from the run's state and journals nothing; an update
// is validated without journaling a rejection, journaled when accepted, its handler's durable
// steps and answer journaled before the caller hears; a repeated update id is answered from
// the first and never runs twice, across a crash too; replay checks the handlers.
#include <gtest/gtest.h>

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "reckon/storage/history_file.h"
#include "reckon/worker/replayer.h"
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

// A ledger: "total" answers the sum so far; "add" (n > 0, else rejected) charges n through the
// provider (a durable step of the handler), adds it and answers the new total; the run ends
// on signal "stop" with the total. "peek_now" is a query that wrongly reads the time.
Task<WorkflowOutcome> Ledger(WorkflowContext& ctx, json::value) {
  std::int64_t total = 0;
  ctx.OnQuery("total", [&total](const json::value&) -> Result<json::value> {
    return json::value(total);
  });
  ctx.OnQuery("peek_now", [&ctx](const json::value&) -> Result<json::value> {
    return json::value(ctx.NowMicros());
  });
  auto validate = [](const json::value& args) -> Result<void> {
    if (!args.is_int64() || args.as_int64() <= 0) {
      return Err(Errc::kInvalidArgument, "add takes a positive whole number, not " +
                                             json::serialize(args));
    }
    return Ok();
  };
  auto add = [&ctx, &total](json::value args) -> Task<WorkflowOutcome> {
    const std::int64_t n = args.as_int64();
    auto charge = ctx.Call("charge", FastInput("acct-1", n));
    CallResult charged = co_await charge;
    if (!charged) co_return charged.error();
    total += n;
    co_return json::value(json::object{{"total", total}});
  };
  ctx.OnUpdate("add", validate, add);
  auto stop = ctx.WaitSignal("stop");
  co_await stop;
  co_return json::value(json::object{{"total", total}});
}

// The ledger as a later release that answers "add" differently (the total doubled).
Task<WorkflowOutcome> LedgerDoubling(WorkflowContext& ctx, json::value) {
  std::int64_t total = 0;
  auto add = [&ctx, &total](json::value args) -> Task<WorkflowOutcome> {
    const std::int64_t n = args.as_int64();
    auto charge = ctx.Call("charge", FastInput("acct-1", n));
    CallResult charged = co_await charge;
    if (!charged) co_return charged.error();
    total += n;
    co_return json::value(json::object{{"total", 2 * total}});
  };
  ctx.OnUpdate("add", nullptr, add);
  auto stop = ctx.WaitSignal("stop");
  co_await stop;
  co_return json::value(json::object{{"total", total}});
}

class UpdateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RECKON_ASSERT_OK(h_.tools().Register(
        testkit::ProviderTool(FastContract("charge", SideEffect::kNonRepeatableWrite), provider_)));
    RECKON_ASSERT_OK(h_.workflows().Register("embedded_ledger", Ledger));
  }

  void StartLedger(const std::string& id) {
    RECKON_ASSERT_OK(h_.Start(id, "embedded_ledger", json::object{}));
    ASSERT_TRUE(h_.RunUntil([&] {
      auto run = h_.Describe(id);
      return run && run->wait.kind == WaitKind::kSignal;
    }));
  }
  Result<std::string> Query(const std::string& id, const std::string& name,
                            const std::string& args) {
    auto answer = h_.Await(h_.engine().Query(id, name, args));
    if (!answer) return Err(Errc::kDeadlineExceeded, "the query did not complete");
    return std::move(*answer);
  }
  Result<UpdateOutcome> Update(const std::string& id, const std::string& update_id,
                               const std::string& args) {
    UpdateRequest request{update_id, "add", args, ""};
    auto answer = h_.Await(h_.engine().Update(id, std::move(request)));
    if (!answer) return Err(Errc::kDeadlineExceeded, "the update did not complete");
    return std::move(*answer);
  }
  std::int64_t NextSeq(const std::string& id) {
    auto run = h_.engine().Describe(id);
    auto events = h_.Events(id);
    (void)run;
    return static_cast<std::int64_t>(events.size());
  }

  testkit::FakeProvider provider_;
  EngineHarness h_;
};

TEST_F(UpdateTest, AQueryAnswersFromTheRunsStateAndJournalsNothing) {
  h_.Boot();
  StartLedger("q-1");
  h_.Shutdown();
  const std::size_t before = h_.Events("q-1").size();
  h_.Boot();
  RECKON_ASSERT_OK(h_.Recover());
  auto total = Query("q-1", "total", "null");
  ASSERT_TRUE(total) << total.error().ToString();
  EXPECT_EQ(total.value(), "0");
  h_.Shutdown();
  EXPECT_EQ(h_.Events("q-1").size(), before);
}

TEST_F(UpdateTest, QueriesThatCannotBeAnsweredSayWhy) {
  h_.Boot();
  StartLedger("q-2");
  auto unknown_name = Query("q-2", "totl", "null");
  ASSERT_FALSE(unknown_name);
  EXPECT_EQ(unknown_name.error().code(), Errc::kNotFound);
  EXPECT_NE(unknown_name.error().message().find("'totl'"), std::string::npos);
  EXPECT_NE(unknown_name.error().message().find("'total'"), std::string::npos)
      << unknown_name.error().message();
  auto unknown_run = Query("nope", "total", "null");
  ASSERT_FALSE(unknown_run);
  EXPECT_EQ(unknown_run.error().code(), Errc::kNotFound);
  auto writes = Query("q-2", "peek_now", "null");
  ASSERT_FALSE(writes);
  EXPECT_EQ(writes.error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(writes.error().message().find("must only read"), std::string::npos);
  auto bad_args = Query("q-2", "total", "{not json");
  ASSERT_FALSE(bad_args);
  EXPECT_EQ(bad_args.error().code(), Errc::kInvalidArgument);
  // A finished run: refused, naming its status.
  auto stop = h_.Await(h_.engine().Signal("q-2", "stop", "{}"));
  ASSERT_TRUE(stop && *stop);
  ASSERT_TRUE(h_.RunUntil([&] {
    auto run = h_.Describe("q-2");
    return run && run->status == RunStatus::kCompleted;
  }));
  auto finished = Query("q-2", "total", "null");
  ASSERT_FALSE(finished);
  EXPECT_EQ(finished.error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(finished.error().message().find("completed"), std::string::npos)
      << finished.error().message();
}

TEST_F(UpdateTest, ARejectedUpdateJournalsNothingAndCarriesTheValidatorsMessage) {
  h_.Boot();
  StartLedger("u-1");
  h_.Shutdown();
  const std::size_t before = h_.Events("u-1").size();
  h_.Boot();
  RECKON_ASSERT_OK(h_.Recover());
  auto rejected = Update("u-1", "", "-3");
  ASSERT_FALSE(rejected);
  EXPECT_EQ(rejected.error().code(), Errc::kInvalidArgument);
  EXPECT_NE(rejected.error().message().find("positive whole number, not -3"), std::string::npos)
      << rejected.error().message();
  auto unknown = h_.Await(h_.engine().Update("u-1", UpdateRequest{"", "subtract", "1", ""}));
  ASSERT_TRUE(unknown && !*unknown);
  EXPECT_EQ(unknown->error().code(), Errc::kNotFound);
  h_.Shutdown();
  EXPECT_EQ(h_.Events("u-1").size(), before);
  EXPECT_EQ(provider_.total_effects(), 0);
}

TEST_F(UpdateTest, AnAcceptedUpdateIsJournaledRunsItsStepsAndAnswers) {
  h_.Boot();
  StartLedger("u-2");
  auto added = Update("u-2", "first", "5");
  ASSERT_TRUE(added) << added.error().ToString();
  EXPECT_EQ(added.value().update_id, "first");
  EXPECT_EQ(added.value().error_code, "");
  EXPECT_EQ(json::parse(added.value().result_json).at("total").as_int64(), 5);
  auto total = Query("u-2", "total", "null");
  ASSERT_TRUE(total);
  EXPECT_EQ(total.value(), "5");
  auto more = Update("u-2", "", "2");
  ASSERT_TRUE(more) << more.error().ToString();
  EXPECT_EQ(json::parse(more.value().result_json).at("total").as_int64(), 7);
  EXPECT_FALSE(more.value().update_id.empty());
  EXPECT_EQ(provider_.total_effects(), 2);
  h_.Shutdown();
  const auto events = h_.Events("u-2");
  const auto accepted = BodiesOf<UpdateAccepted>(events);
  const auto completed = BodiesOf<UpdateCompleted>(events);
  ASSERT_EQ(accepted.size(), 2u);
  ASSERT_EQ(completed.size(), 2u);
  EXPECT_EQ(accepted[0].update_id, "first");
  EXPECT_EQ(accepted[0].name, "add");
  EXPECT_EQ(accepted[0].args_json, "5");
  EXPECT_EQ(completed[0].result_json, "{\"total\":5}");
  // The handler's call has a step id of its own.
  EXPECT_NE(OperationIdOfStep(events, "update:first/charge#1"), "");
}

TEST_F(UpdateTest, ARepeatedUpdateIdAnswersTheFirstAndNeverRunsTwice) {
  h_.Boot();
  StartLedger("u-3");
  auto first = Update("u-3", "once", "4");
  ASSERT_TRUE(first) << first.error().ToString();
  auto again = Update("u-3", "once", "4");
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(again.value().result_json, first.value().result_json);
  EXPECT_EQ(provider_.total_effects(), 1);
  // After a restart, from the journal.
  h_.Restart();
  RECKON_ASSERT_OK(h_.Recover());
  auto after = Update("u-3", "once", "4");
  ASSERT_TRUE(after) << after.error().ToString();
  EXPECT_EQ(after.value().result_json, first.value().result_json);
  EXPECT_EQ(provider_.total_effects(), 1);
  h_.Shutdown();
  EXPECT_EQ(BodiesOf<UpdateAccepted>(h_.Events("u-3")).size(), 1u);
}

// The process dies while the handler's call is in flight (after UpdateAccepted, before
// UpdateCompleted). After the restart the handler resumes by replay, the call is reconciled
// rather than repeated, and the caller asking again with the same id gets the one answer.
TEST_F(UpdateTest, AnUpdateInterruptedByACrashFinishesAfterRestartWithOneEffect) {
  provider_.OnCall([this](const testkit::CallRecord& call) {
    if (call.attempt == 1) h_.Crash();
  });
  h_.Boot();
  StartLedger("u-4");
  UpdateRequest request{"crashy", "add", "9", ""};
  auto pending = h_.engine().Update("u-4", std::move(request));
  (void)h_.Await(std::move(pending), 2s);
  ASSERT_TRUE(h_.crashed());
  provider_.OnCall(nullptr);
  h_.Restart();
  RECKON_ASSERT_OK(h_.Recover());
  auto answer = Update("u-4", "crashy", "9");
  ASSERT_TRUE(answer) << answer.error().ToString();
  EXPECT_EQ(json::parse(answer.value().result_json).at("total").as_int64(), 9);
  EXPECT_EQ(provider_.total_effects(), 1);
  h_.Shutdown();
  EXPECT_EQ(BodiesOf<UpdateAccepted>(h_.Events("u-4")).size(), 1u);
  EXPECT_EQ(BodiesOf<UpdateCompleted>(h_.Events("u-4")).size(), 1u);
}

TEST_F(UpdateTest, AHandlersFailureIsItsAnswerAndAFinishedRunTakesNoUpdates) {
  provider_.Script("charge", {testkit::Step{testkit::Behaviour::kReject}});
  h_.Boot();
  StartLedger("u-5");
  auto failed = Update("u-5", "declined", "3");
  ASSERT_TRUE(failed) << failed.error().ToString();
  EXPECT_EQ(failed.value().error_code, "card_declined");
  auto stop = h_.Await(h_.engine().Signal("u-5", "stop", "{}"));
  ASSERT_TRUE(stop && *stop);
  ASSERT_TRUE(h_.RunUntil([&] {
    auto run = h_.Describe("u-5");
    return run && run->status == RunStatus::kCompleted;
  }));
  auto late = Update("u-5", "late", "1");
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().code(), Errc::kFailedPrecondition);
  auto earlier = Update("u-5", "declined", "3");
  ASSERT_TRUE(earlier) << earlier.error().ToString();
  EXPECT_EQ(earlier.value().error_code, "card_declined");
}

// A history with updates, written by the engine and saved as a history file, replays clean
// with the same code; a release whose handler answers differently is caught, naming the update.
TEST_F(UpdateTest, AHistoryWithUpdatesReplaysCleanAndAChangedHandlerIsCaught) {
  h_.Boot();
  StartLedger("r-1");
  ASSERT_TRUE(Update("r-1", "one", "2"));
  ASSERT_TRUE(Update("r-1", "two", "3"));
  auto stop = h_.Await(h_.engine().Signal("r-1", "stop", "{}"));
  ASSERT_TRUE(stop && *stop);
  ASSERT_TRUE(h_.RunUntil([&] {
    auto run = h_.Describe("r-1");
    return run && run->status == RunStatus::kCompleted;
  }));
  h_.Shutdown();
  auto recorded = ReadLatestHistory(h_.journal(), "r-1");
  ASSERT_TRUE(recorded) << recorded.error().ToString();
  auto text = FormatHistory(recorded.value());
  ASSERT_TRUE(text) << text.error().ToString();
  auto saved = ParseHistory(text.value());  // as a file holds it
  ASSERT_TRUE(saved) << saved.error().ToString();

  WorkflowRegistry same;
  RECKON_ASSERT_OK(same.Register("embedded_ledger", Ledger));
  auto replayed = ReplayHistory(same, saved.value(), ReplayOptions{&h_.tools().contracts()});
  ASSERT_TRUE(replayed) << replayed.error().ToString();
  EXPECT_TRUE(replayed.value().code_finished);
  EXPECT_EQ(replayed.value().calls_replayed, 2u);

  WorkflowRegistry changed;
  RECKON_ASSERT_OK(changed.Register("embedded_ledger", LedgerDoubling));
  auto diverged = ReplayHistory(changed, saved.value(), ReplayOptions{&h_.tools().contracts()});
  ASSERT_FALSE(diverged);
  EXPECT_EQ(diverged.error().code(), Errc::kNondeterminism);
  EXPECT_NE(diverged.error().message().find("update 'one'"), std::string::npos)
      << diverged.error().message();
}

// The validator and the queries see the run's state: after an update, the state it changed.
TEST_F(UpdateTest, TheValidatorRunsAgainstTheStateTheUpdatesBeforeItLeft) {
  h_.Boot();
  StartLedger("v-1");
  ASSERT_TRUE(Update("v-1", "a", "1"));
  h_.Restart();  // the next answers come from a replay of the journal
  RECKON_ASSERT_OK(h_.Recover());
  auto total = Query("v-1", "total", "null");
  ASSERT_TRUE(total) << total.error().ToString();
  EXPECT_EQ(total.value(), "1");
  auto b = Update("v-1", "b", "10");
  ASSERT_TRUE(b) << b.error().ToString();
  EXPECT_EQ(json::parse(b.value().result_json).at("total").as_int64(), 11);
}

}  // namespace
}  // namespace reckon
