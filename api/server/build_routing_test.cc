// The worker build routing rule (build_routing.h), edge by edge, and TaskQueues applying it:
// a run is pinned to the build that ran its first workflow task, waits while no worker of that
// build (or compatible with it) is connected, and `listWorkers` shows both.
#include "reckon/api/server/build_routing.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "reckon/api/server/task_queues.h"

namespace reckon::api {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

const WorkerBuild kV1{"v1", {}};
const WorkerBuild kV2{"v2", {}};
const WorkerBuild kV2ReadsV1{"v2", {"v1"}};
const WorkerBuild kUnversioned{"", {}};
const WorkerBuild kUnversionedReadsV1{"", {"v1"}};

TEST(BuildRouting, ARunNotPinnedYetGoesToAnyWorker) {
  for (const WorkerBuild& w : {kV1, kV2, kV2ReadsV1, kUnversioned, kUnversionedReadsV1}) {
    EXPECT_TRUE(CanServe(w, std::nullopt)) << w.build_id;
  }
}

TEST(BuildRouting, AnUnversionedRunGoesToAnyWorker) {
  for (const WorkerBuild& w : {kV1, kV2, kV2ReadsV1, kUnversioned, kUnversionedReadsV1}) {
    EXPECT_TRUE(CanServe(w, std::string())) << w.build_id;
  }
}

TEST(BuildRouting, APinnedRunGoesToItsBuildOrToWorkersCompatibleWithIt) {
  const std::optional<std::string> v1 = "v1";
  EXPECT_TRUE(CanServe(kV1, v1));
  EXPECT_FALSE(CanServe(kV2, v1));
  EXPECT_TRUE(CanServe(kV2ReadsV1, v1));
  EXPECT_FALSE(CanServe(kUnversioned, v1)) << "an unversioned worker takes no versioned run";
  EXPECT_TRUE(CanServe(kUnversionedReadsV1, v1)) << "unless it lists the run's build";
  EXPECT_FALSE(CanServe(kV1, std::optional<std::string>("v2"))) << "compatibility is one-way";
}

TEST(BuildRouting, TheHistoryPinsTheRunToItsFirstWorkflowTasksBuild) {
  std::vector<storage::Event> history = {
      {1, 0, storage::SignalReceived{"s", "null"}},
      {2, 0, storage::WorkflowTaskStarted{"w-a", "v1"}},
      {3, 0, storage::WorkflowTaskStarted{"w-b", "v2"}},
  };
  EXPECT_EQ(BuildOfHistory(history), std::optional<std::string>("v1"));
  history.erase(history.begin() + 1, history.end());
  EXPECT_EQ(BuildOfHistory(history), std::nullopt);
}

TEST(BuildRouting, BuildIdsAreChecked) {
  EXPECT_TRUE(CheckBuildId("", "buildId", true));
  EXPECT_FALSE(CheckBuildId("", "compatibleBuilds", false));
  EXPECT_TRUE(CheckBuildId("refund-2026.12.01+abc/1@x", "buildId", true));
  auto bad = CheckBuildId("v 1", "buildId", true);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("buildId"), std::string::npos);
  EXPECT_FALSE(CheckBuildId(std::string(129, 'a'), "buildId", true));
}

// --- TaskQueues ----------------------------------------------------------------------------

asio::awaitable<void> ActivateInto(TaskQueues& queues, std::vector<storage::Event> events,
                                   bool full, std::optional<Result<std::vector<Command>>>* out) {
  ActivationRequest request{{"wf-1", "r1"}, "refund", events, full, 1, events};
  auto done = queues.Activate(request);
  out->emplace(co_await std::move(done));
}

struct BuildQueues : ::testing::Test {
  asio::io_context io;
  std::vector<storage::Event> journal;
  TaskQueues queues{io.get_executor(), TaskQueueOptions{}, [](const ToolReport&) {},
                    [this](const storage::RunRef&) -> Result<std::vector<storage::Event>> {
                      return journal;
                    }};

  void RunFor(std::chrono::milliseconds d) {
    io.restart();
    io.run_for(d);
  }
  void Activate(std::vector<storage::Event> events, bool full,
                std::optional<Result<std::vector<Command>>>& out) {
    asio::co_spawn(io, ActivateInto(queues, std::move(events), full, &out), asio::detached);
    RunFor(10ms);
  }
  std::optional<WorkflowTaskView> Poll(SessionId session) {
    std::optional<WorkflowTaskView> got;
    asio::co_spawn(io, queues.PollWorkflowTask(session, 0ms),
                   [&](std::exception_ptr, std::optional<WorkflowTaskView> t) { got = t; });
    RunFor(10ms);
    return got;
  }
  void Add(SessionId session, const std::string& id, WorkerBuild build) {
    queues.AddSession(session, "worker-principal", id, {"refund"}, {}, std::move(build));
  }
};

storage::Event Signal(std::int64_t seq) {
  return storage::Event{seq, 0, storage::SignalReceived{"s" + std::to_string(seq), "null"}};
}

TEST_F(BuildQueues, ARunStaysWithTheBuildThatStartedItAndWaitsWhenNoneIsConnected) {
  Add(1, "w-v1", kV1);
  std::optional<Result<std::vector<Command>>> first, second;
  Activate({Signal(1)}, true, first);
  EXPECT_EQ(queues.BuildOf("wf-1"), std::nullopt) << "not pinned before a task completes";
  auto t1 = Poll(1);
  ASSERT_TRUE(t1);
  ASSERT_TRUE(queues.CompleteWorkflowTask(1, t1->token, std::vector<Command>{}));
  EXPECT_EQ(queues.BuildOf("wf-1"), std::optional<std::string>("v1"));
  // The engine learns who ran it, once (it journals the build when it changes).
  auto ran = queues.TakeRanOn({"wf-1", "r1"});
  ASSERT_TRUE(ran);
  EXPECT_EQ(ran->worker, "w-v1");
  EXPECT_EQ(ran->build_id, "v1");
  EXPECT_FALSE(queues.TakeRanOn({"wf-1", "r1"}));
  journal = {Signal(1)};

  Add(2, "w-v2", kV2);
  Add(3, "w-none", kUnversioned);
  queues.RemoveSession(1);  // v1 is gone
  Activate({Signal(2)}, false, second);
  EXPECT_FALSE(Poll(2)) << "a v2 worker does not take a v1 run";
  EXPECT_FALSE(Poll(3)) << "nor does an unversioned one";
  EXPECT_FALSE(second) << "the run waits; it is not failed";
  auto waiting = queues.WaitingForBuild();
  ASSERT_EQ(waiting.size(), 1u);
  EXPECT_EQ(waiting[0].run.workflow_id, "wf-1");
  EXPECT_EQ(waiting[0].build_id, "v1");

  Add(4, "w-v2-reads-v1", kV2ReadsV1);
  auto t2 = Poll(4);
  ASSERT_TRUE(t2) << "a worker compatible with v1 takes it";
  EXPECT_TRUE(t2->full_history);
  EXPECT_TRUE(queues.WaitingForBuild().empty());
  auto workers = queues.Workers();
  ASSERT_EQ(workers.size(), 3u);
  EXPECT_EQ(workers[2].worker_id, "w-v2-reads-v1");  // by worker id
  EXPECT_EQ(workers[2].workflow_tasks, std::vector<std::string>{"wf-1"});
  EXPECT_EQ(workers[2].build.compatible, std::set<std::string>{"v1"});
  EXPECT_TRUE(workers[1].workflow_tasks.empty());
  ASSERT_TRUE(queues.CompleteWorkflowTask(4, t2->token, std::vector<Command>{}));
  EXPECT_EQ(queues.TakeRanOn({"wf-1", "r1"})->build_id, "v2");
  RunFor(10ms);
  ASSERT_TRUE(second && second->has_value());
  EXPECT_EQ(queues.BuildOf("wf-1"), std::optional<std::string>("v1")) << "still a v1 run";
}

TEST_F(BuildQueues, ATaskNoWorkerFinishedDoesNotPinTheRun) {
  Add(1, "w-v1", kV1);
  Add(2, "w-v2", kV2);
  std::optional<Result<std::vector<Command>>> out;
  Activate({Signal(1)}, true, out);
  auto t1 = Poll(1);
  ASSERT_TRUE(t1);
  queues.RemoveSession(1);  // v1 took it and died before answering
  auto t2 = Poll(2);
  ASSERT_TRUE(t2) << "the run was never pinned: v2 takes it";
  ASSERT_TRUE(queues.CompleteWorkflowTask(2, t2->token, std::vector<Command>{}));
  EXPECT_EQ(queues.BuildOf("wf-1"), std::optional<std::string>("v2"));
}

TEST_F(BuildQueues, ARecoveredRunIsPinnedByItsJournaledBuild) {
  Add(2, "w-v2", kV2);
  Add(3, "w-v1", kV1);
  std::optional<Result<std::vector<Command>>> out;
  Activate({Signal(1), storage::Event{2, 0, storage::WorkflowTaskStarted{"w-old", "v1"}}}, true,
           out);
  EXPECT_EQ(queues.BuildOf("wf-1"), std::optional<std::string>("v1"));
  EXPECT_FALSE(Poll(2));
  EXPECT_TRUE(Poll(3));
}

TEST_F(BuildQueues, AnUnversionedRunGoesToAnyWorker) {
  Add(1, "w-none", kUnversioned);
  std::optional<Result<std::vector<Command>>> first, second;
  Activate({Signal(1)}, true, first);
  auto t1 = Poll(1);
  ASSERT_TRUE(t1);
  ASSERT_TRUE(queues.CompleteWorkflowTask(1, t1->token, std::vector<Command>{}));
  EXPECT_EQ(queues.BuildOf("wf-1"), std::optional<std::string>(""));
  journal = {Signal(1)};
  queues.RemoveSession(1);
  Add(2, "w-v2", kV2);
  Activate({Signal(2)}, false, second);
  EXPECT_TRUE(Poll(2));
  EXPECT_TRUE(queues.WaitingForBuild().empty());
}

}  // namespace
}  // namespace reckon::api
