// The SDK written the way a user writes it: every argument built inside the `co_await`
// expression (literal tool names, `std::move(obj)`, `CallOptions{.step_id = ...}` inline,
// `std::chrono::milliseconds(...)`, a literal signal name), and the host starting and
// signalling runs the same way, over an EmbeddedHost with a real SQLite journal.
//
// GCC 12 miscompiled two of these forms (a default argument and an inline CallOptions, both
// brace-initialized aggregates holding a std::string, were destroyed twice: `free(): invalid
// pointer`). This executable alone is compiled and linked with -fsanitize=address,undefined
// (worker/CMakeLists.txt), so a form that regresses aborts here rather than in a user's host.
#include <gtest/gtest.h>

#include <boost/asio/awaitable.hpp>
#include <boost/json.hpp>

#include <chrono>
#include <string>

#include "reckon/storage/sqlite/sqlite_journal.h"
#include "tests/support/temp_dir.h"
#include "reckon/host/embedded_host.h"
#include "reckon/testkit/gtest.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/journal_view.h"

namespace reckon {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace reckon::testing;

// Long enough that no string below fits the small-string buffer: a double free must free.
constexpr char kAccount[] = "acct-natural-forms-0123456789-0123456789";
constexpr char kOrder[] = "order-natural-forms-0123456789-0123456789";

// Reserve, charge under a chosen step id, sleep, wait for "approved", then email under a step
// id built at run time with a tightened contract. Completes with every reference and the
// signal's payload.
Task<WorkflowOutcome> Fulfil(WorkflowContext& ctx, json::value) {
  json::object hold = FastInput(kAccount, 4200).as_object();
  hold["memo"] = "reserve the items of the order before charging the customer for them";
  CallResult reserved = co_await ctx.Call("reserve_inventory", std::move(hold));
  if (!reserved) co_return reserved.error();
  CallResult charged = co_await ctx.Call("charge_card", FastInput(kAccount, 4200),
                                         CallOptions{.step_id = "charge-the-customer-once"});
  if (!charged) co_return charged.error();
  co_await ctx.Sleep(std::chrono::milliseconds(5));
  std::string approval = co_await ctx.WaitSignal("approved");
  const std::string prefix = "email-for-" + std::string(kOrder);
  CallResult mailed = co_await ctx.Call(
      std::string("send_email"), json::value(FastInput(kAccount, 1)),
      CallOptions{.step_id = prefix + "-confirmation", .overrides = {.max_attempts = 2}});
  if (!mailed) co_return mailed.error();
  json::object out;
  out["reserved"] = reserved.value().provider_ref;
  out["charged"] = charged.value().provider_ref;
  out["mailed"] = mailed.value().provider_ref;
  out["approval"] = approval;
  co_return out;
}

// One call whose chosen step id is longer than StepId::kMaxBytes.
Task<WorkflowOutcome> OverlongStep(WorkflowContext& ctx, json::value) {
  CallResult refused = co_await ctx.Call("reserve_inventory", FastInput(kAccount, 1),
                                         CallOptions{.step_id = std::string(200, 's')});
  if (!refused) co_return refused.error();
  co_return json::value("unexpected");
}

class NaturalFormsTest : public ::testing::Test {
 protected:
  std::unique_ptr<EmbeddedHost> OpenHost() {
    auto host = EmbeddedHost::Open(dir_.File("journal.db"));
    EXPECT_TRUE(host) << host.error().ToString();
    EmbeddedHost& h = *host.value();
    for (const char* tool : {"reserve_inventory", "charge_card", "send_email"}) {
      EXPECT_TRUE(h.tools().Register(
          testkit::ProviderTool(FastContract(tool, SideEffect::kIdempotentWrite), provider_)));
    }
    EXPECT_TRUE(h.workflows().Register("fulfil", Fulfil));
    EXPECT_TRUE(h.workflows().Register("overlong", OverlongStep));
    return std::move(host).value();
  }

  TempDir dir_;
  testkit::FakeProvider provider_;
};

// Host side, natural forms: a literal id and type, the input built in the call. (A braced
// `json::object{{"k", v}}` there does not compile on GCC 12; `json::parse` or `json::object{}`
// do.)
asio::awaitable<Result<RunSummary>> StartAndSettle(EmbeddedHost& host) {
  RECKON_CO_TRY(co_await host.Recover());
  RECKON_CO_TRY(co_await host.engine().Start(kOrder, "fulfil",
                                             json::parse(R"({"order": "o-17", "items": 3})")));
  co_return co_await host.UntilSettled(kOrder);
}

asio::awaitable<Result<RunSummary>> RecoverSignalAndSettle(EmbeddedHost& host) {
  RECKON_CO_TRY(co_await host.Recover());
  RECKON_CO_TRY(auto waiting, co_await host.UntilSettled(kOrder));
  if (waiting.wait != RunWait{WaitKind::kSignal, "approved"}) {
    co_return Err(Errc::kInternal, "the recovered run waits on " +
                                       std::string(WaitKindName(waiting.wait.kind)));
  }
  RECKON_CO_TRY(co_await host.engine().Signal(kOrder, "approved", R"({"by": "ann@example.com"})"));
  co_return co_await host.UntilSettled(kOrder);
}

TEST_F(NaturalFormsTest, AWorkflowAndAHostInNaturalFormsRunAcrossARestart) {
  {
    auto host = OpenHost();
    auto waiting = host->Run(StartAndSettle(*host));
    RECKON_ASSERT_OK(waiting);
    EXPECT_EQ(waiting.value().wait, (RunWait{WaitKind::kSignal, "approved"}));
  }  // the process ends while the run waits; the next life replays the natural forms
  auto host = OpenHost();
  auto done = host->Run(RecoverSignalAndSettle(*host));
  RECKON_ASSERT_OK(done);
  EXPECT_EQ(done.value().status, storage::RunStatus::kCompleted);
  EXPECT_EQ(done.value().wait.kind, WaitKind::kNothing);

  auto result = json::parse(done.value().result_json).as_object();
  EXPECT_NE(json::serialize(result.at("approval")).find("ann@example.com"), std::string::npos);
  auto events = host->journal().ReadEvents(done.value().ref);
  RECKON_ASSERT_OK(events);
  std::vector<std::string> steps;
  for (const auto& prepared : BodiesOf<storage::OperationPrepared>(events.value())) {
    steps.push_back(prepared.step_id);
    EXPECT_EQ(provider_.effects(prepared.operation_id), 1) << prepared.step_id;
  }
  const std::string email = "email-for-" + std::string(kOrder) + "-confirmation";
  EXPECT_EQ(steps, (std::vector<std::string>{"reserve_inventory#1", "charge-the-customer-once",
                                             email}));
  const auto prepared = BodiesOf<storage::OperationPrepared>(events.value());
  ASSERT_EQ(prepared.size(), 3u);
  EXPECT_EQ(prepared[2].max_attempts, 2u);  // the inline overrides reached the engine
  const auto reserve_input = json::parse(prepared[0].input_json);
  EXPECT_EQ(reserve_input.at("account").as_string(), kAccount);
  EXPECT_NE(reserve_input.at("memo").as_string().find("before charging"), std::string::npos);
  EXPECT_EQ(BodiesOf<storage::TimerFired>(events.value()).size(), 1u);
  EXPECT_EQ(provider_.total_effects(), 3);
}

TEST_F(NaturalFormsTest, AStepIdLongerThanTheLimitFailsThatCallAndNothingElse) {
  auto host = OpenHost();
  auto settled = host->Run([](EmbeddedHost& h) -> asio::awaitable<Result<RunSummary>> {
    RECKON_CO_TRY(co_await h.Recover());
    RECKON_CO_TRY(co_await h.engine().Start("overlong-1", "overlong", json::object{}));
    co_return co_await h.UntilSettled("overlong-1");
  }(*host));
  RECKON_ASSERT_OK(settled);
  EXPECT_EQ(settled.value().status, storage::RunStatus::kFailed);
  EXPECT_TRUE(settled.value().operations.empty());
  auto events = host->journal().ReadEvents(settled.value().ref);
  RECKON_ASSERT_OK(events);
  const auto failed = BodiesOf<storage::WorkflowFailed>(events.value());
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].code, "invalid_step_id");
  EXPECT_NE(failed[0].message.find("128 bytes"), std::string::npos) << failed[0].message;
  EXPECT_EQ(provider_.calls().size(), 0u);
}

}  // namespace
}  // namespace reckon
