#include "tests/sim/sim_checker.h"

#include <type_traits>
#include <variant>

#include "reckon/engine/run_state.h"

namespace reckon::sim {

namespace {

std::string OperationIdOf(const storage::EventBody& body) {
  return std::visit(
      [](const auto& e) -> std::string {
        if constexpr (requires { e.operation_id; }) {
          return e.operation_id;
        } else {
          return "";
        }
      },
      body);
}

}  // namespace

void SimChecker::Violation(const std::string& what) {
  if (!seen_.insert(what).second) return;  // the final re-check finds live violations again
  const std::string line = "t=" + std::to_string(now_()) + "us " + what;
  if (log_) log_("VIOLATION " + line);
  if (violations_.size() < 20) violations_.push_back(line);
}

void SimChecker::RecordGrant(const std::string& workflow_id, const std::string& operation_id,
                             const std::string& intent_hash) {
  grants_.emplace(workflow_id, operation_id, intent_hash);
}

void SimChecker::OnCommitted(const RunState& run, std::span<const storage::Event> events) {
  ++batches_;
  const std::string& workflow_id = run.ref().workflow_id;
  for (const storage::Event& event : events) {
    acked_[workflow_id][event.seq] = storage::EventTypeNumber(event.body);
    if (log_) {
      std::string op = OperationIdOf(event.body);
      log_("commit " + workflow_id + " #" + std::to_string(event.seq) + " " +
           std::string(storage::EventTypeName(event.body)) + (op.empty() ? "" : " " + op));
    }
    Apply(workflow_id, event);
  }
}

void SimChecker::Apply(const std::string& workflow_id, const storage::Event& event) {
  const std::string op_id = OperationIdOf(event.body);
  if (op_id.empty()) return;
  auto& ops = ops_[workflow_id];
  if (const auto* prepared = std::get_if<storage::OperationPrepared>(&event.body)) {
    if (ops.count(op_id) != 0) {
      Violation(workflow_id + " prepares operation " + op_id + " a second time");
    }
    ops[op_id] = Op{OperationState::kPrepared, prepared->intent_hash, prepared->side_effect};
    return;
  }
  auto it = ops.find(op_id);
  if (it == ops.end()) {
    if (InputOf(event.body)) {
      Violation(workflow_id + " event " + std::string(storage::EventTypeName(event.body)) +
                " for operation " + op_id + ", which was never prepared");
    }
    return;
  }
  Op& op = it->second;
  if (const auto* granted = std::get_if<storage::ApprovalGranted>(&event.body)) {
    if (granted->intent_hash != op.intent_hash) {
      Violation(workflow_id + " operation " + op_id + " was granted for intent " +
                granted->intent_hash + " but its intent is " + op.intent_hash);
    }
    if (grants_.count({workflow_id, op_id, granted->intent_hash}) == 0) {
      Violation(workflow_id + " operation " + op_id + " consumed a grant for intent " +
                granted->intent_hash.substr(0, 12) +
                "... that no person granted to this operation");
    }
  }
  std::optional<OperationInput> input = InputOf(event.body);
  if (!input) return;
  Result<OperationState> next = Transition(op.state, *input);
  if (!next) {
    Violation(workflow_id + " operation " + op_id + ": illegal transition " +
              std::string(OperationStateName(op.state)) + " --" +
              std::string(OperationInputName(*input)) + "-->");
    return;
  }
  op.state = next.value();
}

Result<std::vector<storage::Event>> SimChecker::History(storage::Journal& journal,
                                                        const std::string& workflow_id) {
  RECKON_TRY(auto run, journal.FindLatestRun(workflow_id));
  if (!run) return std::vector<storage::Event>{};
  return journal.ReadEvents(run->ref, 1);
}

void SimChecker::Reopened(storage::Journal& journal) {
  std::set<std::string> workflows;
  for (const auto& [id, seqs] : acked_) workflows.insert(id);
  for (const auto& [id, ops] : ops_) workflows.insert(id);
  auto runs = journal.ListRuns(std::nullopt);
  if (!runs) {
    Violation("the journal cannot list its runs after a restart: " + runs.error().ToString());
    return;
  }
  for (const auto& row : runs.value()) workflows.insert(row.ref.workflow_id);
  ops_.clear();
  for (const std::string& workflow_id : workflows) {
    auto history = History(journal, workflow_id);
    if (!history) {
      Violation("reading " + workflow_id + " after a restart: " + history.error().ToString());
      continue;
    }
    std::map<std::int64_t, int> on_disk;
    for (const storage::Event& event : history.value()) {
      on_disk[event.seq] = storage::EventTypeNumber(event.body);
      Apply(workflow_id, event);
    }
    for (const auto& [seq, type] : acked_[workflow_id]) {
      auto found = on_disk.find(seq);
      if (found == on_disk.end() || found->second != type) {
        Violation(workflow_id + " lost acknowledged event #" + std::to_string(seq));
      }
    }
  }
}

void SimChecker::Finish(storage::Journal& journal, const SimProvider& provider) {
  Reopened(journal);  // the last life's acknowledged events, and the final states
  for (const auto& [workflow_id, ops] : ops_) {
    for (const auto& [op_id, op] : ops) {
      if (op.side_effect == SideEffect::kReadOnly) continue;
      const int effects = provider.effects(op_id);
      if (op.state == OperationState::kCommitted && effects == 0) {
        Violation(workflow_id + " operation " + op_id +
                  " is committed in the journal but the provider has no effect");
      }
      const bool proves_absence = op.side_effect == SideEffect::kDeduplicatedWrite ||
                                  op.side_effect == SideEffect::kNonRepeatableWrite;
      if (proves_absence && op.state == OperationState::kRejected && effects > 0) {
        Violation(workflow_id + " operation " + op_id +
                  " is rejected in the journal but the provider holds its effect: "
                  "an effect was forgotten");
      }
    }
  }
}

}  // namespace reckon::sim
