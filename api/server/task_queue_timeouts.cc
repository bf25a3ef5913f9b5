// TaskQueues: the per-tool timeouts of tool tasks (task_queues.h, "Per-tool timeouts").
#include <spdlog/spdlog.h>

#include "reckon/api/server/task_queues.h"

namespace reckon::api {

void TaskQueues::StartHeartbeatClock(ToolTask& task, Clock::time_point now) {
  if (task.heartbeat_timeout.count() > 0) task.heartbeat_expires = now + task.heartbeat_timeout;
}

void TaskQueues::ExpireToolTimeouts(Clock::time_point now) {
  std::vector<std::uint64_t> silent, unstarted;
  for (const auto& [token, task] : tool_tasks_) {
    if (task.cancelled || task.view.kind != ToolTaskKind::kAttempt) continue;
    if (task.leased_to != 0) {
      if (task.heartbeat_timeout.count() > 0 && task.heartbeat_expires <= now) {
        silent.push_back(token);
      }
    } else if (task.start_by && *task.start_by <= now) {
      unstarted.push_back(token);
    }
  }
  for (std::uint64_t token : silent) {
    const ToolTask& task = tool_tasks_.at(token);
    ++heartbeat_timeouts_;
    spdlog::warn("heartbeat timeout: {} of {} (attempt {}) on worker {} did not heartbeat for "
                 "{} ms; its outcome is unknown",
                 task.view.operation_id, task.view.tool, task.view.attempt, task.worker_id,
                 task.heartbeat_timeout.count());
    AttemptOutcome lost;
    lost.kind = FailureKind::kUnknown;
    lost.code = std::string(kHeartbeatTimeoutCode);
    lost.message = "the tool stopped heartbeating for " +
                   std::to_string(task.heartbeat_timeout.count()) +
                   " ms (the contract's heartbeat_timeout); it may still be running";
    // The task leaves the table: the worker's next heartbeat is told to stop the tool.
    FinishToolTask(token, std::move(lost), std::nullopt);
  }
  for (std::uint64_t token : unstarted) {
    const ToolTask& task = tool_tasks_.at(token);
    ++schedule_to_start_timeouts_;
    spdlog::warn("schedule-to-start timeout: no worker took {} of {} (attempt {}); it is "
                 "withdrawn, known not to have started",
                 task.view.operation_id, task.view.tool, task.view.attempt);
    AttemptOutcome withdrawn;
    withdrawn.kind = FailureKind::kRetryable;
    withdrawn.code = std::string(kScheduleToStartTimeoutCode);
    withdrawn.message = "no worker took the attempt within the contract's "
                        "schedule_to_start_timeout; it never started";
    withdrawn.not_started = true;
    // Erased from the table, so no poll can take it any more (TakeToolTask skips the token
    // still in the queue); a poll that took it first made it leased, and it is not here.
    FinishToolTask(token, std::move(withdrawn), std::nullopt);
  }
}

}  // namespace reckon::api
