// TaskQueues on a real event loop, without sockets: leases, fencing, stale completions,
// heartbeats, stickiness and the full-history fallback.
#include "reckon/api/server/task_queues.h"

#include <gtest/gtest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <boost/asio/detached.hpp>

#include <optional>

namespace reckon::api {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

struct Fixture : ::testing::Test {
  asio::io_context io;
  std::vector<ToolReport> late;
  std::vector<storage::Event> journal;  // what the test says is durable
  TaskQueues queues{io.get_executor(), Options(),
                    [this](const ToolReport& r) { late.push_back(r); },
                    [this](const storage::RunRef&) -> Result<std::vector<storage::Event>> {
                      return journal;
                    }};

  static TaskQueueOptions Options() {
    TaskQueueOptions options;
    options.lease_timeout = 300ms;
    options.heartbeat_interval = 100ms;
    options.workflow_task_timeout = 300ms;
    options.sticky_timeout = 200ms;
    return options;
  }

  void RunFor(std::chrono::milliseconds d) {
    io.restart();
    io.run_for(d);
  }

  AttemptRequest Attempt(std::uint32_t attempt = 1) {
    AttemptRequest request;
    request.run = {"wf-1", "r1"};
    request.step_id = "send#1";
    request.operation_id = "op_1";
    request.tool = "send";
    request.input = boost::json::object{{"x", 1}};
    request.attempt = attempt;
    request.deadline_us = 0;
    return request;
  }

  std::optional<ToolTaskView> PollTool(SessionId session) {
    std::optional<ToolTaskView> got;
    asio::co_spawn(io, queues.PollToolTask(session, 1000ms),
                   [&](std::exception_ptr, std::optional<ToolTaskView> task) { got = task; });
    RunFor(50ms);
    return got;
  }

  ToolReport Success(const ToolTaskView& task) {
    ToolReport report;
    report.token = task.token;
    report.workflow_id = task.run.workflow_id;
    report.operation_id = task.operation_id;
    report.attempt = task.attempt;
    AttemptOutcome outcome;
    outcome.success = true;
    outcome.output = boost::json::object{{"ok", true}};
    outcome.provider_ref = "re_1";
    report.attempt_outcome = outcome;
    return report;
  }
};

TEST_F(Fixture, AWorkerThatStopsHeartbeatingLosesItsLeaseAndTheOutcomeIsUnknown) {
  queues.AddSession(1, "worker-principal", "w1", {}, {"send"});
  std::optional<AttemptOutcome> outcome;
  asio::co_spawn(io, queues.RunAttempt(Attempt()),
                 [&](std::exception_ptr, AttemptOutcome o) { outcome = o; });
  auto task = PollTool(1);
  ASSERT_TRUE(task);
  EXPECT_EQ(task->operation_id, "op_1");
  EXPECT_EQ(task->attempt, 1u);
  RunFor(200ms);
  EXPECT_FALSE(outcome) << "the lease still holds";
  RunFor(400ms);
  ASSERT_TRUE(outcome);
  EXPECT_FALSE(outcome->success);
  EXPECT_EQ(outcome->kind, FailureKind::kUnknown);
  EXPECT_EQ(outcome->code, "lease_lost");
  // The worker comes back with a success: evidence, handed over as a late completion.
  queues.CompleteToolTask(1, Success(*task));
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0].operation_id, "op_1");
  EXPECT_TRUE(late[0].attempt_outcome->success);
}

TEST_F(Fixture, HeartbeatsKeepTheLeaseAndTheResultArrives) {
  queues.AddSession(1, "worker-principal", "w1", {}, {"send"});
  std::optional<AttemptOutcome> outcome;
  asio::co_spawn(io, queues.RunAttempt(Attempt()),
                 [&](std::exception_ptr, AttemptOutcome o) { outcome = o; });
  auto task = PollTool(1);
  ASSERT_TRUE(task);
  for (int i = 0; i < 6; ++i) {
    EXPECT_TRUE(queues.Heartbeat(1, {task->token}).empty());
    RunFor(100ms);
  }
  EXPECT_FALSE(outcome) << "600 ms with heartbeats: the lease must still hold";
  queues.CompleteToolTask(1, Success(*task));
  RunFor(20ms);
  ASSERT_TRUE(outcome);
  EXPECT_TRUE(outcome->success);
  EXPECT_EQ(outcome->provider_ref, "re_1");
  EXPECT_TRUE(late.empty());
}

TEST_F(Fixture, AReconnectedWorkerKeepsItsLeaseButAnotherWorkerCannotTakeIt) {
  queues.AddSession(1, "worker-principal", "w1", {}, {"send"});
  queues.AddSession(2, "worker-principal", "w2", {}, {"send"});
  std::optional<AttemptOutcome> outcome;
  asio::co_spawn(io, queues.RunAttempt(Attempt()),
                 [&](std::exception_ptr, AttemptOutcome o) { outcome = o; });
  auto task = PollTool(1);
  ASSERT_TRUE(task);
  queues.RemoveSession(1);
  // Another worker presenting the token is told to stop, and its completion is not the result.
  EXPECT_EQ(queues.Heartbeat(2, {task->token}), std::vector<std::uint64_t>{task->token});
  // Nor may another principal that presents the same worker id.
  queues.AddSession(4, "intruder", "w1", {}, {"send"});
  EXPECT_EQ(queues.Heartbeat(4, {task->token}), std::vector<std::uint64_t>{task->token});
  queues.CompleteToolTask(4, Success(*task));
  RunFor(20ms);
  EXPECT_FALSE(outcome);
  EXPECT_EQ(queues.WorkerConnected("w1"), "intruder");
  queues.RemoveSession(4);
  EXPECT_FALSE(queues.WorkerConnected("w1"));
  // w1 reconnects on a new session and renews.
  queues.AddSession(3, "worker-principal", "w1", {}, {"send"});
  EXPECT_TRUE(queues.Heartbeat(3, {task->token}).empty());
  queues.CompleteToolTask(3, Success(*task));
  RunFor(20ms);
  ASSERT_TRUE(outcome);
  EXPECT_TRUE(outcome->success);
}

TEST_F(Fixture, ACompletionOfAnOtherAttemptIsOnlyEvidence) {
  queues.AddSession(1, "worker-principal", "w1", {}, {"send"});
  std::optional<AttemptOutcome> outcome;
  asio::co_spawn(io, queues.RunAttempt(Attempt(2)),
                 [&](std::exception_ptr, AttemptOutcome o) { outcome = o; });
  auto task = PollTool(1);
  ASSERT_TRUE(task);
  ToolReport stale = Success(*task);
  stale.attempt = 1;  // fencing: attempt 1 is not the attempt this task runs
  queues.CompleteToolTask(1, stale);
  RunFor(20ms);
  EXPECT_FALSE(outcome);
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0].attempt, 1u);
}

TEST_F(Fixture, CancellingAnUndeliveredAttemptProvesItNeverRan) {
  queues.AddSession(1, "worker-principal", "w1", {}, {"other"});
  std::optional<AttemptOutcome> outcome;
  asio::cancellation_signal cancel;
  asio::co_spawn(io, queues.RunAttempt(Attempt()),
                 asio::bind_cancellation_slot(cancel.slot(), [&](std::exception_ptr,
                                                                 AttemptOutcome o) { outcome = o; }));
  RunFor(20ms);
  cancel.emit(asio::cancellation_type::terminal);
  RunFor(20ms);
  ASSERT_TRUE(outcome);
  EXPECT_EQ(outcome->kind, FailureKind::kRetryable);
  EXPECT_EQ(outcome->code, "not_delivered");
}

TEST_F(Fixture, CancellingADeliveredAttemptIsUnknownAndTheWorkerIsToldToStop) {
  queues.AddSession(1, "worker-principal", "w1", {}, {"send"});
  std::optional<AttemptOutcome> outcome;
  asio::cancellation_signal cancel;
  asio::co_spawn(io, queues.RunAttempt(Attempt()),
                 asio::bind_cancellation_slot(cancel.slot(), [&](std::exception_ptr,
                                                                 AttemptOutcome o) { outcome = o; }));
  auto task = PollTool(1);
  ASSERT_TRUE(task);
  cancel.emit(asio::cancellation_type::terminal);
  RunFor(20ms);
  ASSERT_TRUE(outcome);
  EXPECT_EQ(outcome->kind, FailureKind::kUnknown);
  EXPECT_EQ(outcome->code, "deadline_exceeded");
  EXPECT_EQ(queues.Heartbeat(1, {task->token}), std::vector<std::uint64_t>{task->token});
}

// The batch's pending events are the new ones (a batch with one activation).
ActivationRequest Activation(const std::vector<storage::Event>& events, bool full) {
  return ActivationRequest{{"wf-1", "r1"}, "refund", events, full, 1, events};
}

storage::Event SignalEvent(std::int64_t seq) {
  return storage::Event{seq, 0, storage::SignalReceived{"s" + std::to_string(seq), "null"}};
}

// A coroutine function, not a lambda: its arguments live in its frame.
asio::awaitable<void> ActivateInto(TaskQueues& queues, std::vector<storage::Event> events,
                                   bool full, std::optional<Result<std::vector<Command>>>* out) {
  auto activation = Activation(events, full);
  auto done = queues.Activate(activation);
  out->emplace(co_await std::move(done));
}

TEST_F(Fixture, StickyRunsGetNewEventsOthersGetTheFullHistory) {
  queues.AddSession(1, "worker-principal", "w1", {"refund"}, {});
  queues.AddSession(2, "worker-principal", "w2", {"refund"}, {});
  auto activate = [&](std::vector<storage::Event> events, bool full,
                      std::optional<Result<std::vector<Command>>>& out) {
    asio::co_spawn(io, ActivateInto(queues, std::move(events), full, &out), asio::detached);
    RunFor(10ms);
  };
  auto poll = [&](SessionId session) {
    std::optional<WorkflowTaskView> got;
    asio::co_spawn(io, queues.PollWorkflowTask(session, 100ms),
                   [&](std::exception_ptr, std::optional<WorkflowTaskView> t) { got = t; });
    RunFor(20ms);
    return got;
  };
  std::optional<Result<std::vector<Command>>> first, second;
  activate({SignalEvent(1)}, true, first);
  auto t1 = poll(1);
  ASSERT_TRUE(t1);
  EXPECT_TRUE(t1->full_history);
  ASSERT_TRUE(queues.CompleteWorkflowTask(1, t1->token, std::vector<Command>{}));
  RunFor(10ms);
  ASSERT_TRUE(first && first->has_value());
  // The batch commits, and the engine records events the code never sees (its own command's).
  journal = {SignalEvent(1), storage::Event{2, 0, storage::TimerStarted{"t", 5}}};

  // w2 polls first, but the run is sticky to w1: w1 gets only the new event.
  activate({SignalEvent(3)}, false, second);
  EXPECT_FALSE(poll(2)) << "a sticky task waits for its session first";
  auto t2 = poll(1);
  ASSERT_TRUE(t2);
  EXPECT_FALSE(t2->full_history);
  ASSERT_EQ(t2->events.size(), 1u);
  EXPECT_EQ(t2->events[0].seq, 3);
  // w1 lost its cache: the task comes back with the full history, under a new token.
  ASSERT_TRUE(queues.CompleteWorkflowTask(1, t2->token,
                                          Err(Errc::kFailedPrecondition, "not cached")));
  auto t3 = poll(2);
  ASSERT_TRUE(t3);
  EXPECT_TRUE(t3->full_history);
  // The full history is the journal's (with the event the code never saw) plus the batch.
  ASSERT_EQ(t3->events.size(), 3u);
  EXPECT_EQ(t3->events[1].seq, 2);
  EXPECT_TRUE(std::holds_alternative<storage::TimerStarted>(t3->events[1].body));
  EXPECT_EQ(t3->events[2].seq, 3);
  EXPECT_NE(t3->token, t2->token);
  EXPECT_FALSE(queues.CompleteWorkflowTask(1, t2->token, std::vector<Command>{}))
      << "a reply to the earlier delivery is refused";
  ASSERT_TRUE(queues.CompleteWorkflowTask(2, t3->token, std::vector<Command>{}));
  RunFor(10ms);
  ASSERT_TRUE(second && second->has_value());
}

TEST_F(Fixture, AWorkflowTaskOfADisconnectedWorkerGoesToAnother) {
  queues.AddSession(1, "worker-principal", "w1", {"refund"}, {});
  queues.AddSession(2, "worker-principal", "w2", {"refund"}, {});
  std::optional<Result<std::vector<Command>>> out;
  asio::co_spawn(io, ActivateInto(queues, {SignalEvent(1)}, true, &out), asio::detached);
  std::optional<WorkflowTaskView> t1, t2;
  asio::co_spawn(io, queues.PollWorkflowTask(1, 100ms),
                 [&](std::exception_ptr, std::optional<WorkflowTaskView> t) { t1 = t; });
  RunFor(20ms);
  ASSERT_TRUE(t1);
  queues.RemoveSession(1);
  asio::co_spawn(io, queues.PollWorkflowTask(2, 100ms),
                 [&](std::exception_ptr, std::optional<WorkflowTaskView> t) { t2 = t; });
  RunFor(20ms);
  ASSERT_TRUE(t2);
  EXPECT_TRUE(t2->full_history);
  ASSERT_TRUE(queues.CompleteWorkflowTask(2, t2->token, std::vector<Command>{}));
  RunFor(10ms);
  ASSERT_TRUE(out && out->has_value());
}

}  // namespace
}  // namespace reckon::api
