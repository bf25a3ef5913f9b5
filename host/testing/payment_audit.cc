#include "reckon/host/testing/payment_audit.h"

#include "reckon/host/testing/journal_view.h"

namespace reckon::testing {

std::string CheckEachPaymentOnce(storage::Journal& journal,
                                 const std::vector<std::string>& workflow_ids,
                                 const testkit::FakeProvider& provider) {
  for (const std::string& id : workflow_ids) {
    auto run = journal.FindLatestRun(id);
    if (!run || !run.value()) return id + " is not in the journal";
    auto events = journal.ReadEvents(run.value()->ref);
    if (!events) return events.error().ToString();
    const std::string names = EventNames(events.value());
    if (run.value()->status != storage::RunStatus::kCompleted) {
      return id + " did not complete: " + names;
    }
    auto committed = BodiesOf<storage::OperationCommitted>(events.value());
    if (committed.size() != 1) return id + " has no single commit: " + names;
    const int effects = provider.effects(committed[0].operation_id);
    if (effects != 1) {
      return id + "'s payment took effect " + std::to_string(effects) + " times: " + names;
    }
  }
  if (provider.total_effects() != static_cast<int>(workflow_ids.size())) {
    return std::to_string(provider.total_effects()) + " payments for " +
           std::to_string(workflow_ids.size()) + " runs";
  }
  return "";
}

int CountOutcomesLost(storage::Journal& journal, const std::vector<std::string>& workflow_ids,
                      const testkit::FakeProvider& provider) {
  int lost = 0;
  for (const std::string& id : workflow_ids) {
    auto run = journal.FindLatestRun(id);
    if (!run || !run.value()) continue;
    auto events = journal.ReadEvents(run.value()->ref);
    if (!events) continue;
    for (const auto& started : BodiesOf<storage::AttemptStarted>(events.value())) {
      if (provider.effects(started.operation_id) > 0 &&
          BodiesOf<storage::OperationCommitted>(events.value(), started.operation_id).empty()) {
        ++lost;
        break;
      }
    }
  }
  return lost;
}

}  // namespace reckon::testing
