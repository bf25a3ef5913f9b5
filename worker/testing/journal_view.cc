#include "reckon/worker/testing/journal_view.h"

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

}  // namespace reckon::testing
