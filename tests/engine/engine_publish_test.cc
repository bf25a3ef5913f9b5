// Publishing through the transactional outbox (WorkflowContext::Publish): the message lands in
// the outbox with the step that publishes it, under the id derived from the workflow and the
// step; replay after a restart makes no second message; code that publishes something else at
// a journaled step stops the run.
#include <gtest/gtest.h>

#include <boost/json/object.hpp>

#include "reckon/engine/outbox_message.h"
#include "reckon/storage/backend/open_backend.h"
#include "reckon/host/testing/engine_harness.h"
#include "reckon/host/testing/journal_view.h"
#include "reckon/testkit/gtest.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"

namespace reckon {
namespace {

using namespace std::chrono_literals;
using namespace reckon::testing;
using namespace reckon::storage;
namespace json = boost::json;

constexpr char kOrder[] = "order-1";

// Publishes "order <note>" to orders.created, reserves, then waits for "go".
Task<WorkflowOutcome> PublishThenReserve(WorkflowContext& ctx, std::string note) {
  auto published = ctx.Publish("orders.created", "{\"order\":\"" + note + "\"}");
  if (!published) co_return CallFailure{"publish_failed", published.error().message()};
  auto hold = ctx.Call("reserve", FastInput("acct-1", 100));
  CallResult held = co_await hold;
  if (!held) co_return held.error();
  auto go = ctx.WaitSignal("go");
  std::string payload = co_await go;
  co_return json::object{{"message_id", published.value()}};
}

WorkflowFunction Version(std::string note) {
  return [note](WorkflowContext& ctx, json::value) { return PublishThenReserve(ctx, note); };
}

class PublishTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RECKON_ASSERT_OK(h_.tools().Register(
        testkit::ProviderTool(FastContract("reserve", SideEffect::kIdempotentWrite), provider_)));
  }
  std::vector<OutboxRow> Outbox() {
    auto store = OpenOutboxStore(h_.journal_name(), nullptr);
    EXPECT_TRUE(store) << store.error().ToString();
    if (!store) return {};
    auto due = store.value()->ListDue(std::numeric_limits<std::int64_t>::max(), 100);
    EXPECT_TRUE(due) << due.error().ToString();
    return due ? due.value() : std::vector<OutboxRow>{};
  }
  // Life 1 runs `v1` until the reservation is committed; life 2 recovers with `v2`.
  void RecoverWith(WorkflowFunction v1, WorkflowFunction v2) {
    RECKON_ASSERT_OK(h_.workflows().Register("order", std::move(v1)));
    h_.Boot();
    RECKON_ASSERT_OK(h_.Start(kOrder, "order", json::object{}));
    ASSERT_TRUE(h_.RunUntilState(kOrder, "reserve#2", OperationState::kCommitted));
    h_.Shutdown();
    journaled_ = h_.Events(kOrder).size();
    RECKON_ASSERT_OK(h_.ReplaceWorkflows().Register("order", std::move(v2)));
    h_.Boot();
    RECKON_ASSERT_OK(h_.Recover());
  }

  testkit::FakeProvider provider_;
  EngineHarness h_;
  std::size_t journaled_ = 0;
};

TEST_F(PublishTest, TheMessageCommitsWithItsStepUnderTheDerivedId) {
  RECKON_ASSERT_OK(h_.workflows().Register("order", Version("a")));
  h_.Boot();
  RECKON_ASSERT_OK(h_.Start(kOrder, "order", json::object{}));
  ASSERT_TRUE(h_.RunUntilState(kOrder, "reserve#2", OperationState::kCommitted));
  h_.Shutdown();
  const auto rows = Outbox();
  ASSERT_EQ(rows.size(), 1u);
  auto scope = testing::LatestIdScope(h_.journal(), kOrder);
  ASSERT_TRUE(scope) << scope.error().ToString();
  EXPECT_EQ(rows[0].message_id, MessageIdFor(scope.value(), "publish#1"));
  EXPECT_EQ(rows[0].step_id, "publish#1");
  EXPECT_EQ(rows[0].subject, "orders.created");
  EXPECT_EQ(rows[0].payload, "{\"order\":\"a\"}");
  int markers = 0;
  for (const Event& event : h_.Events(kOrder)) {
    if (const auto* m = std::get_if<MarkerRecorded>(&event.body)) {
      if (m->kind == kPublishMarker) {
        ++markers;
        EXPECT_EQ(m->step_id, "publish#1");
      }
    }
  }
  EXPECT_EQ(markers, 1);
}

TEST_F(PublishTest, ReplayMakesNoSecondMessage) {
  RecoverWith(Version("a"), Version("a"));
  auto signalled = h_.Await(h_.engine().Signal(kOrder, "go", "\"yes\""));
  ASSERT_TRUE(signalled);
  RECKON_ASSERT_OK(*signalled);
  ASSERT_TRUE(h_.RunUntilSettled(kOrder));
  auto summary = h_.Describe(kOrder);
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->status, RunStatus::kCompleted) << summary->stuck_reason;
  h_.Shutdown();
  const auto rows = Outbox();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].payload, "{\"order\":\"a\"}");
}

TEST_F(PublishTest, APublishThatDiffersFromTheJournaledOneStopsTheRun) {
  RecoverWith(Version("a"), Version("b"));
  ASSERT_TRUE(h_.RunUntil([this] { return !h_.Describe(kOrder)->stuck_reason.empty(); }, 1s));
  const std::string reason = h_.Describe(kOrder)->stuck_reason;
  EXPECT_NE(reason.find("nondeterminism"), std::string::npos) << reason;
  EXPECT_NE(reason.find("'publish#1'"), std::string::npos) << reason;
  h_.Shutdown();
  EXPECT_EQ(h_.Events(kOrder).size(), journaled_);
  const auto rows = Outbox();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].payload, "{\"order\":\"a\"}");
}

}  // namespace
}  // namespace reckon
