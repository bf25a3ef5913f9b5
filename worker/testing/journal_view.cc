#include "reckon/worker/testing/journal_view.h"

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

}  // namespace reckon::testing
