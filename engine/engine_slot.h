// Engine::Slot: the engine's per-run record (engine/engine.h), shared by the engine's
// translation units: engine.cc drives runs, engine_waiters.cc answers queries and waiters.
// Internal to the engine library: no user code needs it. Same threading as the Engine.
#pragma once

#include <boost/asio/cancellation_signal.hpp>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "reckon/engine/engine.h"

namespace reckon {

struct Engine::Slot {
  Slot(storage::RunRef ref, std::uint64_t serial) : state(std::move(ref)), serial(serial) {}
  RunState state;
  const std::uint64_t serial;  // unique in this engine: what completions and timers name
  std::deque<Queued> inbox;
  bool busy = false;
  // The first activation replays the whole history (a new run: just WorkflowStarted).
  bool needs_full_history = true;
  std::vector<storage::Event> replay_history;  // set by Recover(), consumed by the first activation
  std::string start_type;             // what Start() was called with, for idempotent restarts
  std::string start_input_json;
  std::string stuck;  // why the engine stopped driving this run
  bool released = false;  // let go to another server (cluster mode); in retired_
  struct RunningAttempt {
    std::uint32_t attempt = 0;
    std::shared_ptr<boost::asio::cancellation_signal> cancel;
  };
  std::map<std::string, RunningAttempt> attempts;  // by operation id
  // Work that may still report on the run after it finished (DropIfFinished): attempts and
  // lookups in flight, and due times armed while an operation is not terminal.
  int lookups = 0;       // reconciliation lookups in flight
  int dues_armed = 0;    // ArmDueAction timers not fired yet
  int timers_armed = 0;  // workflow timers not fired yet (on a finished run they change nothing)
  bool warned_history = false;  // the soft history limit was logged
  // Why the run should be cancelled, while a cancel was refused (an operation that may have
  // acted): asked again after each batch that changed something, until it is accepted. Set
  // when a parent closes under policy cancel (engine/child_workflow.h).
  std::string cancel_wanted;
};

}  // namespace reckon
