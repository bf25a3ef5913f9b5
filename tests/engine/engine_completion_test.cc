// Asynchronous completion end to end, through a real engine and journal: a provider that
// accepts a payout and reports it later. The tool runs once; the completion, redelivered,
// commits once; a restart keeps waiting (nothing was lost, so nothing is reconciled early); a
// completion that never comes is looked up at the provider, never retried blindly.
#include <gtest/gtest.h>

#include <boost/json/object.hpp>

#include <map>
#include <string>

#include "reckon/host/testing/engine_harness.h"
#include "reckon/testkit/gtest.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/journal_view.h"
#include "reckon/host/testing/test_workflows.h"

namespace reckon {
namespace {

using namespace std::chrono_literals;
using namespace reckon::testing;
using namespace reckon::storage;
namespace json = boost::json;

constexpr char kRun[] = "payout-run";
constexpr char kTool[] = "payout";

// A provider that accepts every payout and pays it when told (Settle), keyed by the
// idempotency key: a second request with a known key is not a second payout.
struct AsyncProvider {
  std::map<std::string, bool> payouts;  // idempotency key -> paid
  int requests = 0;
  bool lookups_find = true;  // a lookup finds an accepted payout

  void Accept(const std::string& key) {
    ++requests;
    payouts.emplace(key, false);
  }
};

ToolContract AsyncPayout(std::chrono::milliseconds deadline) {
  ToolContract c = FastContract(kTool, SideEffect::kNonRepeatableWrite);
  c.completion.deadline = deadline;
  return c;
}

class CompletionTest : public ::testing::Test {
 protected:
  void Register(std::chrono::milliseconds deadline) {
    AsyncProvider* provider = &provider_;
    Tool tool{AsyncPayout(deadline),
              [provider](json::value, ToolCallContext context) -> asio_awaitable {
                provider->Accept(context.operation_id);
                co_return ToolAccepted("po-" + context.operation_id.substr(0, 8));
              },
              [provider](json::value, ToolCallContext context) -> reconcile_awaitable {
                ReconcileOutcome outcome;
                auto it = provider->payouts.find(context.operation_id);
                if (it == provider->payouts.end() || !provider->lookups_find) {
                  outcome.verdict = ReconcileVerdict::kNotFound;
                } else {
                  outcome.verdict = ReconcileVerdict::kCommitted;
                  outcome.provider_ref = "po-found";
                  outcome.output = json::object{{"paid", it->second}};
                }
                co_return outcome;
              }};
    RECKON_ASSERT_OK(h_.tools().Register(std::move(tool)));
  }

  void StartAndAwaitAcceptance() {
    h_.Boot();
    RECKON_ASSERT_OK(h_.Recover());
    RECKON_ASSERT_OK(h_.Start(kRun, kCallOnce, CallOnceInput(kTool, FastInput("acct-1", 500))));
    ASSERT_TRUE(h_.RunUntilState(kRun, kTool + std::string("#1"),
                                 OperationState::kAwaitingCompletion));
    op_id_ = h_.Operation(kRun, std::string(kTool) + "#1")->operation_id;
  }

  Result<void> Deliver(const std::string& delivery, bool succeeded) {
    Completion completion;
    completion.operation_id = op_id_;
    completion.delivery_id = delivery;
    completion.outcome.success = succeeded;
    if (succeeded) {
      completion.outcome.output = json::object{{"paid", true}};
    } else {
      completion.outcome.kind = FailureKind::kDefinitive;
      completion.outcome.code = "card_declined";
    }
    auto done = h_.Await(h_.engine().Complete(std::move(completion)));
    if (!done) return Err(Errc::kDeadlineExceeded, "no answer");
    return *done;
  }

  int Count(std::string_view type) {
    int n = 0;
    for (const Event& e : h_.Events(kRun)) n += EventTypeName(e.body) == type;
    return n;
  }

  using asio_awaitable = boost::asio::awaitable<AttemptOutcome>;
  using reconcile_awaitable = boost::asio::awaitable<ReconcileOutcome>;
  AsyncProvider provider_;
  EngineHarness h_;
  std::string op_id_;
};

TEST_F(CompletionTest, ACompletionDeliveredTwiceCommitsOnce) {
  Register(10s);
  StartAndAwaitAcceptance();
  auto waiting = h_.Describe(kRun);
  ASSERT_TRUE(waiting);
  EXPECT_EQ(waiting->wait.kind, WaitKind::kCompletion);
  RECKON_EXPECT_OK(Deliver("evt-1", true));
  ASSERT_TRUE(h_.RunUntilSettled(kRun));
  RECKON_EXPECT_OK(Deliver("evt-1", true));  // the same webhook again, the run finished
  RECKON_EXPECT_OK(Deliver("evt-2", false));  // a contradicting one: the first settled it
  EXPECT_EQ(h_.Describe(kRun)->status, RunStatus::kCompleted);
  h_.Shutdown();
  EXPECT_EQ(Count("CompletionReceived"), 1);
  EXPECT_EQ(Count("OperationCommitted"), 1);
  EXPECT_EQ(provider_.requests, 1);
}

TEST_F(CompletionTest, ARestartKeepsWaitingAndTheToolIsNotCalledAgain) {
  Register(10s);
  StartAndAwaitAcceptance();
  h_.Restart();
  RECKON_ASSERT_OK(h_.Recover());
  ASSERT_TRUE(h_.RunFor(50ms));
  EXPECT_EQ(h_.Operation(kRun, std::string(kTool) + "#1")->state,
            OperationState::kAwaitingCompletion);
  RECKON_EXPECT_OK(Deliver("evt-1", true));
  ASSERT_TRUE(h_.RunUntilSettled(kRun));
  EXPECT_EQ(h_.Describe(kRun)->status, RunStatus::kCompleted);
  EXPECT_EQ(provider_.requests, 1);
  h_.Shutdown();
  EXPECT_EQ(Count("OutcomeUnknown"), 0);
}

TEST_F(CompletionTest, ADefinitiveFailureReportFailsTheStep) {
  Register(10s);
  StartAndAwaitAcceptance();
  RECKON_EXPECT_OK(Deliver("evt-1", false));
  ASSERT_TRUE(h_.RunUntilSettled(kRun));
  EXPECT_EQ(h_.Describe(kRun)->status, RunStatus::kFailed);
}

TEST_F(CompletionTest, NoCompletionByTheDeadlineIsLookedUpNotRetried) {
  Register(50ms);
  StartAndAwaitAcceptance();
  ASSERT_TRUE(h_.RunUntilSettled(kRun, 5s));
  EXPECT_EQ(h_.Describe(kRun)->status, RunStatus::kCompleted);
  EXPECT_EQ(provider_.requests, 1);  // found by the lookup: no second request
  h_.Shutdown();
  EXPECT_EQ(Count("OutcomeUnknown"), 1);
  EXPECT_EQ(Count("ReconciliationStarted"), 1);
}

TEST_F(CompletionTest, BadCompletionsAreRefusedAndNothingIsJournaled) {
  Register(10s);
  StartAndAwaitAcceptance();
  const std::string real = op_id_;
  op_id_ = "op-that-does-not-exist";
  auto unknown = Deliver("evt-1", true);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), Errc::kNotFound);
  op_id_ = real;
  auto no_delivery = Deliver("", true);
  ASSERT_FALSE(no_delivery);
  EXPECT_EQ(no_delivery.error().code(), Errc::kInvalidArgument);
  h_.Shutdown();
  EXPECT_EQ(Count("CompletionReceived"), 0);
}

}  // namespace
}  // namespace reckon
