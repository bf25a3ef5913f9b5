#include "reckon/host/testing/journal_view.h"

#include <stdexcept>

#include "reckon/storage/event_codec.h"

namespace reckon::testing {

using namespace storage;

std::string OperationOf(const Event& event) {
  return std::visit(
      [](const auto& body) -> std::string {
        if constexpr (requires { body.operation_id; }) {
          return body.operation_id;
        } else {
          return "";
        }
      },
      event.body);
}

std::string EventNames(const std::vector<Event>& events, const std::string& operation_id) {
  std::string names;
  for (const Event& event : events) {
    if (!operation_id.empty() && OperationOf(event) != operation_id) continue;
    if (!names.empty()) names += ' ';
    names += EventTypeName(event.body);
  }
  return names;
}

std::string OperationIdOfStep(const std::vector<Event>& events, const std::string& step_id) {
  for (const Event& event : events) {
    if (auto* prepared = std::get_if<OperationPrepared>(&event.body);
        prepared && prepared->step_id == step_id) {
      return prepared->operation_id;
    }
  }
  return "";
}

std::vector<std::string> JournalEntriesHolding(storage::Journal& journal,
                                               const std::string& needle) {
  std::vector<std::string> holding;
  auto runs = journal.ListRuns();
  if (!runs) throw std::runtime_error(runs.error().ToString());
  for (const storage::RunRow& run : runs.value()) {
    const std::string& id = run.ref.workflow_id;
    if (id.find(needle) != std::string::npos) holding.push_back(id + ": workflow id");
    if (run.workflow_type.find(needle) != std::string::npos) holding.push_back(id + ": type");
    auto events = journal.ReadEvents(run.ref);
    if (!events) throw std::runtime_error(events.error().ToString());
    for (const storage::Event& event : events.value()) {
      if (storage::EncodeEventBody(event.body).find(needle) != std::string::npos) {
        holding.push_back(id + "#" + std::to_string(event.seq));
      }
    }
  }
  return holding;
}

Result<IdScope> LatestIdScope(storage::Journal& journal, const std::string& workflow_id) {
  RECKON_TRY(auto run, journal.FindLatestRun(workflow_id));
  if (!run) return Err(Errc::kNotFound, "no run of workflow '" + workflow_id + "' in the journal");
  RECKON_TRY(auto events, journal.ReadEvents(run->ref, 1));
  const auto* started =
      events.empty() ? nullptr : std::get_if<storage::WorkflowStarted>(&events.front().body);
  if (started == nullptr) {
    return Err(Errc::kCorruption, "run '" + workflow_id + "' does not begin with WorkflowStarted");
  }
  return IdScope{started->id_version, started->id_namespace, workflow_id, run->ref.run_id};
}

}  // namespace reckon::testing
