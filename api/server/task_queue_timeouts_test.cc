// TaskQueues' per-tool timeouts on a real event loop, without sockets (task_queue_timeouts.cc):
// an attempt no worker took is withdrawn as not started, and one a worker took never is; a
// tool that stops heartbeating itself is lost although its worker renews the lease; the last
// details go with the outcome and the next attempt gets the ones it is given.
#include "reckon/api/server/task_queues.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <optional>

namespace reckon::api {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

struct TimeoutsFixture : ::testing::Test {
  asio::io_context io;
  TaskQueues queues{io.get_executor(), Options(), [](const ToolReport&) {},
                    [](const storage::RunRef&) -> Result<std::vector<storage::Event>> {
                      return std::vector<storage::Event>{};
                    }};
  std::optional<AttemptOutcome> outcome;

  static TaskQueueOptions Options() {
    TaskQueueOptions options;
    options.lease_timeout = 5000ms;  // long: only the per-tool timeouts end attempts here
    return options;
  }

  void RunFor(std::chrono::milliseconds d) {
    io.restart();
    io.run_for(d);
  }
  // Runs the loop until the attempt has an outcome, at most `limit`.
  bool RunUntilOutcome(std::chrono::milliseconds limit = 10s) {
    for (auto waited = 0ms; !outcome && waited < limit; waited += 20ms) RunFor(20ms);
    return outcome.has_value();
  }

  void Run(AttemptRequest request) {
    asio::co_spawn(io, queues.RunAttempt(std::move(request)),
                   [this](std::exception_ptr, AttemptOutcome o) { outcome = o; });
  }

  static AttemptRequest Attempt() {
    AttemptRequest request;
    request.run = {"wf-1", "r1"};
    request.step_id = "send#1";
    request.operation_id = "op_1";
    request.tool = "send";
    request.input = boost::json::object{};
    request.attempt = 1;
    return request;
  }

  std::optional<ToolTaskView> PollTool(SessionId session) {
    std::optional<ToolTaskView> got;
    asio::co_spawn(io, queues.PollToolTask(session, 0ms),
                   [&](std::exception_ptr, std::optional<ToolTaskView> task) { got = task; });
    RunFor(20ms);
    return got;
  }
};

TEST_F(TimeoutsFixture, AnAttemptNoWorkerTookIsWithdrawnAsNotStarted) {
  AttemptRequest request = Attempt();
  request.schedule_to_start_timeout = 200ms;
  Run(std::move(request));
  ASSERT_TRUE(RunUntilOutcome());
  EXPECT_FALSE(outcome->success);
  EXPECT_TRUE(outcome->not_started);
  EXPECT_EQ(outcome->kind, FailureKind::kRetryable);
  EXPECT_EQ(outcome->code, "schedule_to_start_timeout");
  EXPECT_EQ(queues.schedule_to_start_timeouts(), 1u);
  // Withdrawn: a worker that connects now finds nothing.
  queues.AddSession(1, "p", "w1", {}, {"send"});
  EXPECT_FALSE(PollTool(1));
  EXPECT_EQ(queues.pending_tool_tasks(), 0u);
}

TEST_F(TimeoutsFixture, AnAttemptAWorkerTookIsNeverWithdrawn) {
  queues.AddSession(1, "p", "w1", {}, {"send"});
  AttemptRequest request = Attempt();
  request.schedule_to_start_timeout = 100ms;
  Run(std::move(request));
  auto task = PollTool(1);
  ASSERT_TRUE(task);
  // Well past the schedule-to-start timeout, with the lease renewed: still the worker's.
  for (int i = 0; i < 10; ++i) {
    RunFor(50ms);
    EXPECT_TRUE(queues.Heartbeat(1, {task->token}).empty());
  }
  EXPECT_FALSE(outcome);
  EXPECT_EQ(queues.schedule_to_start_timeouts(), 0u);
}

TEST_F(TimeoutsFixture, ASilentToolIsLostThoughItsWorkerRenewsTheLease) {
  queues.AddSession(1, "p", "w1", {}, {"send"});
  AttemptRequest request = Attempt();
  request.heartbeat_timeout = 300ms;
  request.last_heartbeat_details_json = R"({"page":3})";
  Run(std::move(request));
  auto task = PollTool(1);
  ASSERT_TRUE(task);
  EXPECT_EQ(task->last_heartbeat_details_json, R"({"page":3})");
  // The tool beats with progress for a while: the attempt stays alive.
  for (int i = 0; i < 10; ++i) {
    RunFor(50ms);
    queues.Heartbeat(1, {task->token}, {ToolProgress{task->token, R"({"page":4})"}});
  }
  EXPECT_FALSE(outcome);
  // Then only the worker's automatic renewals: the tool is lost.
  for (int i = 0; i < 200 && !outcome; ++i) {
    RunFor(50ms);
    queues.Heartbeat(1, {task->token});
  }
  ASSERT_TRUE(outcome);
  EXPECT_EQ(outcome->kind, FailureKind::kUnknown);
  EXPECT_EQ(outcome->code, "heartbeat_timeout");
  EXPECT_EQ(outcome->heartbeat_details_json, R"({"page":4})");
  // The worker is told to stop it.
  EXPECT_EQ(queues.Heartbeat(1, {task->token}), std::vector<std::uint64_t>{task->token});
  EXPECT_EQ(queues.heartbeat_timeouts(), 1u);
}

TEST_F(TimeoutsFixture, WithoutAHeartbeatTimeoutTheLeaseAloneCounts) {
  queues.AddSession(1, "p", "w1", {}, {"send"});
  Run(Attempt());
  auto task = PollTool(1);
  ASSERT_TRUE(task);
  for (int i = 0; i < 10; ++i) {
    RunFor(50ms);
    queues.Heartbeat(1, {task->token});
  }
  EXPECT_FALSE(outcome);
}

}  // namespace
}  // namespace reckon::api
