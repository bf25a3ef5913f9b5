// Reading a run's journal in tests: event names, typed bodies, the operation of a step.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "reckon/engine/operation_id.h"
#include "reckon/storage/event.h"
#include "reckon/storage/journal.h"

namespace reckon::testing {

// The operation an event is about; empty for run-level events.
std::string OperationOf(const storage::Event& event);

// The type names of `events`, space-separated ("OperationPrepared AttemptStarted ..."); only
// those about `operation_id` when it is given.
std::string EventNames(const std::vector<storage::Event>& events,
                       const std::string& operation_id = "");

// The id scope (engine/operation_id.h) of the newest run of `workflow_id`, read from its
// WorkflowStarted: what the run's operation and message ids derive from. Errors: kNotFound.
Result<IdScope> LatestIdScope(storage::Journal& journal, const std::string& workflow_id);

// The operation id a step was prepared with (OperationPrepared); empty if none.
std::string OperationIdOfStep(const std::vector<storage::Event>& events,
                              const std::string& step_id);

// The events whose body is a T (about `operation_id`, when given), in journal order.
template <class T>
std::vector<storage::Event> EventsOf(const std::vector<storage::Event>& events,
                                     const std::string& operation_id = "") {
  std::vector<storage::Event> out;
  for (const storage::Event& event : events) {
    if (!std::holds_alternative<T>(event.body)) continue;
    if (!operation_id.empty() && OperationOf(event) != operation_id) continue;
    out.push_back(event);
  }
  return out;
}

// The bodies of type T, in journal order.
template <class T>
std::vector<T> BodiesOf(const std::vector<storage::Event>& events,
                        const std::string& operation_id = "") {
  std::vector<T> out;
  for (const storage::Event& event : EventsOf<T>(events, operation_id)) {
    out.push_back(std::get<T>(event.body));
  }
  return out;
}

// The first event of type T about `operation_id`, if any.
template <class T>
std::optional<storage::Event> FirstOf(const std::vector<storage::Event>& events,
                                      const std::string& operation_id = "") {
  auto found = EventsOf<T>(events, operation_id);
  if (found.empty()) return std::nullopt;
  return found.front();
}

// Where the journal holds `needle`, read through the Journal interface (so on any backend):
// "<workflow id>#<seq>" of every event of every run whose encoded body contains it, and
// "<workflow id>: <field>" of run rows. Tests that a secret or a refused value never landed
// use it; on SQLite they also scan the file's bytes. Errors of the reads throw.
std::vector<std::string> JournalEntriesHolding(storage::Journal& journal,
                                               const std::string& needle);

}  // namespace reckon::testing
