// Commands: what workflow code asks the engine to do, returned by an activation
// (engine/workflow_host.h). The engine turns each command into journal events before acting.
// Plain value types.
#pragma once

#include <boost/json/value.hpp>

#include <cstdint>
#include <string>
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

// A value the code drew from the world (now, random) that replay must see again.
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
