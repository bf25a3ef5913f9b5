// RunWait: what a run waits on, as a pure function of its state (a fold of its journal), the
// reason the engine stopped driving it (if it did) and whether the engine has a batch of it in
// hand. Engine::Describe/Runs fill RunSummary::wait with it; the server computes it from the
// journal for `reckon show` and `list`; an embedded host awaits Engine::UntilSettled.
//
// Kinds, and the first that holds wins (the precedence):
//   stopped   the engine stopped driving the run (nondeterminism, a bug); detail: the reason
//   working   the engine has the run's batch in hand (not yet durable)
//   nothing   the run finished (completed, failed, cancelled)
//   working   an operation the engine drives by itself: prepared, approved, in flight, a
//             retry or lookup due, reconciling; detail: its operation id
//   person    an operation needs a person to say what happened (needs_human); detail: op id
//   approval  an operation awaits approval; detail: its operation id
//   completion an operation waits for its provider's completion (a webhook; contract
//             completion); detail: its operation id; until_us: its completion deadline
//   signal    the code waits in WaitSignal; detail: the name (several: in name order, ", ")
//   timer     the code sleeps; detail: the earliest fire time, UTC; until_us: the same
//   signal    none of the above yet the run is running: the code can only be parked in a
//             WaitSignal that history did not record (written before waits were); detail ""
// So engine work comes before anything outside it, and of what needs the outside the most
// urgent comes first: a person for an effect whose outcome is unknown, then an approval,
// then a signal. A timer comes last: it needs nobody, the run moves on when it fires. Where
// several operations qualify, the detail names the first by operation id.
//
// Plain values; no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "reckon/engine/run_state.h"

namespace reckon {

// kChild: the run waits only on child workflows it started (their ids in `detail`).
enum class WaitKind {
  kNothing, kWorking, kTimer, kSignal, kApproval, kPerson, kStopped, kChild, kCompletion
};

struct RunWait {
  WaitKind kind = WaitKind::kWorking;
  std::string detail;
  std::int64_t until_us = 0;  // kTimer: the earliest fire time; otherwise 0
  friend bool operator==(const RunWait&, const RunWait&) = default;
};

// "nothing", "working", "timer", "signal", "approval", "person", "stopped", "child",
// "completion".
std::string_view WaitKindName(WaitKind kind);

// True when only something outside the engine can move the run on (a signal, an approval, a
// person, a fixed deploy) or nothing can because it finished: Engine::UntilSettled's test.
bool Settled(const RunWait& wait);

RunWait WaitOf(const RunState& state, std::string_view stuck_reason, bool engine_busy);

// `micros` (since the epoch) as "YYYY-MM-DDTHH:MM:SSZ".
std::string FormatUtc(std::int64_t micros);

}  // namespace reckon
