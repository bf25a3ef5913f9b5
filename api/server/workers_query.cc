#include "reckon/api/server/workers_query.h"

#include "reckon/protocol/wire_convert.h"

namespace reckon::api {

namespace {

template <class Range>
void SetTexts(capnp::List<capnp::Text>::Builder list, const Range& texts) {
  unsigned i = 0;
  for (const std::string& text : texts) list.set(i++, Text(text));
}

}  // namespace

Result<void> ListWorkers(const TaskQueues& tasks, wire::Response::Builder out) {
  const auto workers = tasks.Workers();
  const auto waiting = tasks.WaitingForBuild();
  auto list = out.initResult().initWorkers();
  auto wl = list.initWorkers(static_cast<unsigned>(workers.size()));
  for (unsigned i = 0; i < workers.size(); ++i) {
    const TaskQueues::WorkerView& w = workers[i];
    auto o = wl[i];
    o.setWorkerId(Text(w.worker_id));
    o.setPrincipal(Text(w.principal));
    o.setBuildId(Text(w.build.build_id));
    SetTexts(o.initCompatibleBuilds(static_cast<unsigned>(w.build.compatible.size())),
             w.build.compatible);
    SetTexts(o.initWorkflowTypes(static_cast<unsigned>(w.workflow_types.size())),
             w.workflow_types);
    SetTexts(o.initTools(static_cast<unsigned>(w.tools.size())), w.tools);
    o.setConnectedSinceUs(w.connected_since_us);
    SetTexts(o.initWorkflowTasks(static_cast<unsigned>(w.workflow_tasks.size())),
             w.workflow_tasks);
    auto held = o.initToolTasks(static_cast<unsigned>(w.tool_tasks.size()));
    for (unsigned j = 0; j < w.tool_tasks.size(); ++j) {
      held[j].setWorkflowId(Text(w.tool_tasks[j].workflow_id));
      held[j].setOperationId(Text(w.tool_tasks[j].operation_id));
      held[j].setTool(Text(w.tool_tasks[j].tool));
      held[j].setAttempt(w.tool_tasks[j].attempt);
    }
  }
  auto wr = list.initWaiting(static_cast<unsigned>(waiting.size()));
  for (unsigned i = 0; i < waiting.size(); ++i) {
    wr[i].setWorkflowId(Text(waiting[i].run.workflow_id));
    wr[i].setRunId(Text(waiting[i].run.run_id));
    wr[i].setWorkflowType(Text(waiting[i].workflow_type));
    wr[i].setBuildId(Text(waiting[i].build_id));
  }
  return Ok();
}

void NoteBuildWait(const TaskQueues& tasks, const std::string& workflow_id,
                   wire::Response::Builder out) {
  if (!out.getResult().isWorkflow()) return;
  auto summary = out.getResult().getWorkflow().getSummary();
  for (const TaskQueues::WaitingRun& waiting : tasks.WaitingForBuild()) {
    if (waiting.run.workflow_id != workflow_id || Str(summary.getRunId()) != waiting.run.run_id) {
      continue;
    }
    summary.setWaitsOn("worker");
    summary.setWaitDetail(Text(waiting.build_id));
    summary.setWaitUntilUs(0);
    return;
  }
}

}  // namespace reckon::api
