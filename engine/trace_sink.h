// TraceSink: where the engine reports what became durable. The engine calls every sink it was
// given after each committed batch, with the batch's events, and when it stops driving a run.
// The effect trace (telemetry/), the server's watchers, test harnesses and, later, metrics and
// OpenTelemetry exporters are sinks; the engine knows none of them.
//
// Contract for implementations: called on the engine's executor (its only thread), so a sink
// must be cheap and must not block; it must not call back into the engine synchronously (post
// instead). A sink never sees an event that is not durable. The RunState reference is valid
// only during the call.
//
// TraceFanOut hands each report to several sinks, in the order they were added. It does not
// own them: every sink must outlive it. Not thread-safe.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "reckon/engine/run_state.h"
#include "reckon/storage/event.h"

namespace reckon {

class TraceSink {
 public:
  virtual ~TraceSink() = default;

  // After a batch of `run` committed. `run` already includes `events` (non-empty, in order).
  virtual void OnCommitted(const RunState& run, std::span<const storage::Event> events) = 0;

  // When the engine stops driving `run` (a bug or nondeterminism in it). `reason` is the
  // error; nothing more is journaled for the run by this process.
  virtual void OnRunStopped(const RunState& run, std::string_view reason) {
    (void)run;
    (void)reason;
  }
};

class TraceFanOut final : public TraceSink {
 public:
  void Add(TraceSink& sink) { sinks_.push_back(&sink); }
  void Remove(TraceSink& sink) { std::erase(sinks_, &sink); }

  void OnCommitted(const RunState& run, std::span<const storage::Event> events) override {
    for (TraceSink* sink : sinks_) sink->OnCommitted(run, events);
  }
  void OnRunStopped(const RunState& run, std::string_view reason) override {
    for (TraceSink* sink : sinks_) sink->OnRunStopped(run, reason);
  }

 private:
  std::vector<TraceSink*> sinks_;  // not owned
};

}  // namespace reckon
