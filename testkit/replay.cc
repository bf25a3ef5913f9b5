#include "reckon/testkit/replay.h"

#include <type_traits>
#include <variant>

#include "reckon/worker/workflow_instance.h"

namespace reckon::testkit {

namespace {

// Whether the history's last event ended the run (completed, failed, continued as new, ...):
// then the code must end it too.
bool EndsTheRun(const std::vector<storage::Event>& events) {
  if (events.empty()) return false;
  return std::visit(
      [](const auto& body) {
        using T = std::decay_t<decltype(body)>;
        return std::is_same_v<T, storage::WorkflowCompleted> ||
               std::is_same_v<T, storage::WorkflowFailed> ||
               std::is_same_v<T, storage::WorkflowContinuedAsNew>;
      },
      events.back().body);
}

}  // namespace

Result<void> ReplayHistory(const WorkflowRegistry& workflows, const RunHistory& history) {
  const std::string name = "run '" + history.run.workflow_id + "' (" + history.run.run_id + ")";
  if (history.events.empty() ||
      !std::holds_alternative<storage::WorkflowStarted>(history.events.front().body)) {
    return Err(Errc::kInvalidArgument,
               name + ": the history does not begin with WorkflowStarted; pass a whole run");
  }
  const std::string& type =
      std::get<storage::WorkflowStarted>(history.events.front().body).workflow_type;
  const WorkflowFunction* function = workflows.Find(type);
  if (function == nullptr) {
    return Err(Errc::kNotFound, name + ": no workflow type '" + type +
                                    "' is registered; register it before replaying");
  }
  WorkflowInstance instance(*function, history.run.workflow_id, history.run.run_id);
  // The time a resumed worker would see: the history's last moment.
  RECKON_TRY(instance.Activate(history.events, history.events.back().recorded_at_us));
  if (EndsTheRun(history.events) && !instance.finished()) {
    return Err(Errc::kNondeterminism,
               name + ": the history ends the run, but the code blocked before its end; it no "
                      "longer takes the path the run took (guard the change with ctx.Patched)");
  }
  return Ok();
}

}  // namespace reckon::testkit
