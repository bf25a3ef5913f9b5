// Engine::Release and Engine::Recover(owns), the engine's side of cluster mode
// (api/server/cluster_member.h): a run let go stops acting (its timer, its signals) and leaves
// Runs(); a later Recover(owns) of its shard, here or in another engine, resumes it from the
// journal as a restart would, and it finishes with one effect.
#include <gtest/gtest.h>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "reckon/host/testing/engine_harness.h"
#include "reckon/testkit/gtest.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/journal_view.h"
#include "reckon/host/testing/test_workflows.h"

namespace reckon {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using namespace reckon::testing;
using namespace reckon::storage;

class ReleaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RECKON_ASSERT_OK(h_.tools().Register(
        testkit::ProviderTool(FastContract("charge", SideEffect::kIdempotentWrite), provider_)));
    h_.Boot();
  }

  int Release(const std::string& workflow_id) {
    auto leaving = [workflow_id](const std::string& id) { return id == workflow_id; };
    auto released = h_.Await(h_.engine().Release(std::move(leaving), "moved (test)", 5s));
    EXPECT_TRUE(released);
    return released ? *released : -1;
  }
  int RecoverOnly(const std::string& workflow_id) {
    auto owns = [workflow_id](const std::string& id) { return id == workflow_id; };
    auto recovered = h_.Await(h_.engine().Recover(std::move(owns)));
    EXPECT_TRUE(recovered && *recovered) << (recovered && !*recovered ? recovered->error().ToString() : "");
    return recovered && *recovered ? recovered->value() : -1;
  }
  void RunFor(std::chrono::milliseconds duration) { ASSERT_TRUE(h_.RunFor(duration)); }
  int CallsFor(const std::string& account) {
    int n = 0;
    for (const testkit::CallRecord& call : provider_.calls()) {
      n += call.input.as_object().at("account").as_string() == account;
    }
    return n;
  }

  testkit::FakeProvider provider_{/*dedup=*/false};
  EngineHarness h_;
};

TEST_F(ReleaseTest, ARunLetGoStopsActingAndARecoverOfItsShardResumesIt) {
  RECKON_ASSERT_OK(h_.Start("a", kSleepThenCall,
                            SleepThenCallInput(200ms, "charge", FastInput("acct-a", 100))));
  RECKON_ASSERT_OK(h_.Start("b", kSleepThenCall,
                            SleepThenCallInput(200ms, "charge", FastInput("acct-b", 100))));
  EXPECT_EQ(Release("a"), 1);
  EXPECT_FALSE(h_.Describe("a")) << "a released run leaves Runs()";
  EXPECT_EQ(h_.engine().Runs().size(), 1u);
  RunFor(400ms);
  ASSERT_TRUE(h_.RunUntilSettled("b"));
  EXPECT_EQ(h_.Describe("b")->status, RunStatus::kCompleted);
  EXPECT_EQ(CallsFor("acct-a"), 0) << "the released run's timer did not act";
  auto signalled = h_.Await(h_.engine().Signal("a", "go", "{}"));
  ASSERT_TRUE(signalled);
  EXPECT_FALSE(*signalled) << "a released run takes no input here";

  // Its shard comes back (here; in a cluster, to whichever server takes it): resumed from the
  // journal, it fires its overdue timer and finishes with one call.
  EXPECT_EQ(RecoverOnly("a"), 1);
  EXPECT_EQ(RecoverOnly("a"), 0) << "a run already held is not recovered twice";
  ASSERT_TRUE(h_.RunUntilSettled("a"));
  EXPECT_EQ(h_.Describe("a")->status, RunStatus::kCompleted);
  EXPECT_EQ(CallsFor("acct-a"), 1);
  EXPECT_EQ(CallsFor("acct-b"), 1);
  h_.Shutdown();
  EXPECT_EQ(BodiesOf<TimerFired>(h_.Events("a")).size(), 1u) << EventNames(h_.Events("a"));
}

TEST_F(ReleaseTest, ARunLetGoIsResumedByAnotherEngineOnTheSameJournal) {
  RECKON_ASSERT_OK(h_.Start("c", kSignalThenCall,
                            SignalThenCallInput("go", "charge", FastInput("acct-c", 100))));
  auto waiting = h_.Await(h_.engine().UntilSettled("c"));
  ASSERT_TRUE(waiting && *waiting);
  EXPECT_EQ(Release("c"), 1);
  // Another process life (in a cluster: another server) recovers only its own shards.
  h_.Restart();
  auto none = [](const std::string&) { return false; };
  auto nothing = h_.Await(h_.engine().Recover(std::move(none)));
  ASSERT_TRUE(nothing && *nothing);
  EXPECT_EQ(nothing->value(), 0);
  EXPECT_EQ(RecoverOnly("c"), 1);
  auto signalled = h_.Await(h_.engine().Signal("c", "go", "\"now\""));
  ASSERT_TRUE(signalled && *signalled);
  ASSERT_TRUE(h_.RunUntilSettled("c"));
  EXPECT_EQ(h_.Describe("c")->status, RunStatus::kCompleted);
  EXPECT_EQ(CallsFor("acct-c"), 1);
}

}  // namespace
}  // namespace reckon
