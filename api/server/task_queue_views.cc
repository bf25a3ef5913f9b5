// TaskQueues: what the queues show of themselves (task_queues.h: BuildOf, Workers,
// WaitingForBuild, queue_stats), for `reckon workers`, `reckon show` and the metrics. Reads only.
#include <algorithm>
#include <map>

#include "reckon/api/server/task_queues.h"

namespace reckon::api {

std::optional<std::string> TaskQueues::BuildOf(const std::string& workflow_id) const {
  auto it = runs_.find(workflow_id);
  return it == runs_.end() ? std::nullopt : it->second.build;
}

std::vector<TaskQueues::WorkerView> TaskQueues::Workers() const {
  std::vector<WorkerView> out;
  for (const auto& [id, session] : sessions_) {
    WorkerView view;
    view.worker_id = session.worker_id;
    view.principal = session.principal;
    view.build = session.build;
    view.workflow_types = session.workflow_types;
    view.tools = session.tools;
    view.connected_since_us = session.connected_since_us;
    for (const auto& [token, task] : workflow_tasks_) {
      if (task.leased_to == id) view.workflow_tasks.push_back(task.run.workflow_id);
    }
    // Tool leases belong to the worker id (they outlive a reconnect), not to the connection.
    for (const auto& [token, task] : tool_tasks_) {
      if (task.leased_to == 0 || task.cancelled || task.worker_id != session.worker_id) continue;
      view.tool_tasks.push_back(
          {task.view.run.workflow_id, task.view.operation_id, task.view.tool, task.view.attempt});
    }
    out.push_back(std::move(view));
  }
  std::sort(out.begin(), out.end(),
            [](const WorkerView& a, const WorkerView& b) { return a.worker_id < b.worker_id; });
  return out;
}

std::vector<TaskQueues::WaitingRun> TaskQueues::WaitingForBuild() const {
  std::vector<WaitingRun> out;
  for (const auto& [token, task] : workflow_tasks_) {
    if (task.leased_to != 0) continue;
    auto cache = runs_.find(task.run.workflow_id);
    if (cache == runs_.end() || !cache->second.build || cache->second.build->empty()) continue;
    const bool served = std::any_of(sessions_.begin(), sessions_.end(), [&](const auto& entry) {
      return entry.second.workflow_types.count(task.workflow_type) != 0 &&
             CanServe(entry.second.build, cache->second.build);
    });
    if (!served) out.push_back({task.run, task.workflow_type, *cache->second.build});
  }
  return out;
}

std::vector<TaskQueues::QueueStats> TaskQueues::queue_stats() const {
  std::map<std::pair<std::string, std::string>, QueueStats> by_queue;
  auto stats = [&by_queue](const std::string& kind, const std::string& queue) -> QueueStats& {
    QueueStats& s = by_queue[{kind, queue}];
    s.kind = kind;
    s.queue = queue;
    return s;
  };
  for (const auto& [type, queue] : workflow_queues_) {
    QueueStats& s = stats("workflow", type);
    for (std::uint64_t token : queue) {
      auto t = workflow_tasks_.find(token);
      if (t != workflow_tasks_.end() && t->second.leased_to == 0) ++s.queued;
    }
  }
  for (const auto& [tool, queue] : tool_queues_) {
    QueueStats& s = stats("tool", tool);
    for (std::uint64_t token : queue) {
      auto t = tool_tasks_.find(token);
      if (t != tool_tasks_.end() && t->second.leased_to == 0 && !t->second.cancelled) ++s.queued;
    }
  }
  for (const auto& [key, lost] : leases_lost_) stats(key.first, key.second).leases_lost = lost;
  std::vector<QueueStats> out;
  out.reserve(by_queue.size());
  for (auto& [key, s] : by_queue) out.push_back(std::move(s));
  return out;
}

}  // namespace reckon::api
