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

// The first operation (by id) in a state of `kind`'s, if any.
std::string FirstOperation(const RunState& state, bool (*matches)(OperationState)) {
  for (const auto& [id, op] : state.operations()) {
    if (matches(op.state)) return id;
  }
  return {};
}

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

}  // namespace

RunWait WaitOf(const RunState& state, std::string_view stuck_reason, bool engine_busy) {
  if (!stuck_reason.empty()) return {WaitKind::kStopped, std::string(stuck_reason)};
  if (engine_busy) return {WaitKind::kWorking, ""};
  if (state.terminal()) return {WaitKind::kNothing, ""};
  if (auto op = FirstOperation(state, EngineDriven); !op.empty()) return {WaitKind::kWorking, op};
  if (auto op = FirstOperation(state, NeedsPerson); !op.empty()) return {WaitKind::kPerson, op};
  if (auto op = FirstOperation(state, AwaitsApproval); !op.empty()) {
    return {WaitKind::kApproval, op};
  }
  if (auto op = FirstOperation(state, AwaitsCompletion); !op.empty()) {
    const OperationRecord& record = state.operations().at(op);
    return {WaitKind::kCompletion, op, record.due_at_us};
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
