// Commands: what workflow code asks the engine to do, returned by an activation
// (engine/workflow_host.h). The engine turns each command into journal events before acting.
// Plain value types.
#pragma once

#include <boost/json/value.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "reckon/contract/call_overrides.h"

namespace reckon {

// Call a tool at a step. `replayed` marks a call that the code issued again while replaying a
// step already in the history: nothing new is scheduled, but the engine re-learns the full
// input (the journal holds it only without its secret fields) and checks it still matches.
struct ScheduleCall {
  std::string step_id;
  std::string tool;
  boost::json::value input;
  bool replayed = false;
  CallOverrides overrides;
};

struct StartTimer {
  std::string timer_id;
  std::int64_t fire_at_us = 0;
};

// The kind of the marker WorkflowContext::WaitSignal records: its value is the signal's name
// as a JSON string, its step id "signal:<name>#<k>" for the k-th wait on that name (a count of
// its own, so the step ids of calls, timers and other markers are what they were before waits
// were recorded). RunState folds these into the signals a run still waits for.
inline constexpr std::string_view kWaitSignalMarker = "wait_signal";

// A value the code drew from the world (now, random) that replay must see again, or a fact
// about the code worth keeping (kWaitSignalMarker).
struct RecordMarker {
  std::string step_id;
  std::string kind;
  std::string value_json;
};

struct CompleteWorkflow {
  std::string result_json;
};

struct FailWorkflow {
  std::string code;
  std::string message;
};

using Command =
    std::variant<ScheduleCall, StartTimer, RecordMarker, CompleteWorkflow, FailWorkflow>;

}  // namespace reckon
