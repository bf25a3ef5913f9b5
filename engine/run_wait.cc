#include "reckon/engine/run_wait.h"

#include <algorithm>
#include <ctime>
#include <vector>

namespace reckon {

std::string_view WaitKindName(WaitKind kind) {
  switch (kind) {
    case WaitKind::kNothing: return "nothing";
    case WaitKind::kWorking: return "working";
    case WaitKind::kTimer: return "timer";
    case WaitKind::kSignal: return "signal";
    case WaitKind::kApproval: return "approval";
    case WaitKind::kPerson: return "person";
    case WaitKind::kStopped: return "stopped";
    case WaitKind::kChild: return "child";
    case WaitKind::kCompletion: return "completion";
  }
  return "working";
}

bool Settled(const RunWait& wait) {
  return wait.kind != WaitKind::kWorking && wait.kind != WaitKind::kTimer;
}

namespace {

// The first operation (by id) of each kind a run can wait on, found in one pass over the
// operations (the engine asks after every batch of a run someone waits for: one pass keeps a
// long run's cost at one scan, not four).
struct FirstOperations {
  const std::string* engine_driven = nullptr;
  const std::string* needs_person = nullptr;
  const std::string* awaits_approval = nullptr;
  const std::string* awaits_completion = nullptr;
};

bool EngineDriven(OperationState s) {
  return !IsTerminal(s) && s != OperationState::kAwaitingApproval &&
         s != OperationState::kNeedsHuman && s != OperationState::kAwaitingCompletion;
}
bool AwaitsCompletion(OperationState s) { return s == OperationState::kAwaitingCompletion; }
bool NeedsPerson(OperationState s) { return s == OperationState::kNeedsHuman; }
bool AwaitsApproval(OperationState s) { return s == OperationState::kAwaitingApproval; }

std::string JoinNames(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined;
}

FirstOperations FindFirstOperations(const RunState& state) {
  FirstOperations first;
  for (const auto& [id, op] : state.operations()) {
    const OperationState s = op.state;
    if (EngineDriven(s)) {
      first.engine_driven = &id;
      break;  // what the run waits on then: the others do not matter
    }
    if (!first.needs_person && NeedsPerson(s)) first.needs_person = &id;
    if (!first.awaits_approval && AwaitsApproval(s)) first.awaits_approval = &id;
    if (!first.awaits_completion && AwaitsCompletion(s)) first.awaits_completion = &id;
  }
  return first;
}

}  // namespace

RunWait WaitOf(const RunState& state, std::string_view stuck_reason, bool engine_busy) {
  if (!stuck_reason.empty()) return {WaitKind::kStopped, std::string(stuck_reason)};
  if (engine_busy) return {WaitKind::kWorking, ""};
  if (state.terminal()) return {WaitKind::kNothing, ""};
  const FirstOperations first = FindFirstOperations(state);
  if (first.engine_driven) return {WaitKind::kWorking, *first.engine_driven};
  if (first.needs_person) return {WaitKind::kPerson, *first.needs_person};
  if (first.awaits_approval) return {WaitKind::kApproval, *first.awaits_approval};
  if (first.awaits_completion) {
    const OperationRecord& record = state.operations().at(*first.awaits_completion);
    return {WaitKind::kCompletion, *first.awaits_completion, record.due_at_us};
  }
  if (auto names = state.OutstandingSignalWaits(); !names.empty()) {
    return {WaitKind::kSignal, JoinNames(names)};
  }
  if (!state.pending_timers().empty()) {
    std::int64_t earliest = state.pending_timers().begin()->second;
    for (const auto& [id, at] : state.pending_timers()) earliest = std::min(earliest, at);
    return {WaitKind::kTimer, FormatUtc(earliest), earliest};
  }
  std::vector<std::string> children;
  for (const auto& [step, child] : state.children()) {
    if (!child.closed && !child.child_run_id.empty()) children.push_back(child.child_workflow_id);
  }
  if (!children.empty()) return {WaitKind::kChild, JoinNames(children)};
  return {WaitKind::kSignal, ""};
}

std::string FormatUtc(std::int64_t micros) {
  std::time_t seconds = static_cast<std::time_t>(micros / 1000000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace reckon
