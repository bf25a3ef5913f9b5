// MetricsSink: the engine's durable events as Prometheus metrics (telemetry/metrics.h; the
// list with labels and meanings is in docs/OPERATIONS.md).
//
// Counters, from each committed batch: operation transitions by tool and kind (the event
// type), outcome_unknown by reason, reconciliation results by tool and result, runs started and
// finished, runs the engine stopped driving. Counters start at zero with the process, as
// Prometheus expects (rate() handles the reset).
//
// Gauges, computed at scrape from the sink's own table: operations of live (non-terminal)
// runs by state, approvals waiting, operations that need a person. The table is kept from
// the events, so it is correct after a restart only if the host seeds it from the journal
// first: Seed() reads every running run's operation rows (storage::Journal::ListOperations),
// which are exactly what Engine::Recover resumes. Operations of runs that have finished are
// not counted (a finished run's operations are history, not work).
//
// Commit latency and group size come from the engine's commit observer
// (EngineOptions::on_commit): ObserveCommit may be called from the commit thread.
//
// Threads: OnCommitted, OnRunStopped and Seed run on the engine's executor (engine/
// trace_sink.h), as must the registry's WriteText, since the gauge callbacks read the table.
// The sink registers its families and callbacks in `registry` at construction and removes the
// callbacks at destruction; the registry must outlive the sink.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>

#include "reckon/base/error.h"
#include "reckon/engine/operation_state.h"
#include "reckon/engine/trace_sink.h"
#include "reckon/storage/journal.h"
#include "reckon/telemetry/metrics.h"

namespace reckon {

class MetricsSink final : public TraceSink {
 public:
  explicit MetricsSink(MetricsRegistry& registry);
  ~MetricsSink() override;
  MetricsSink(const MetricsSink&) = delete;
  MetricsSink& operator=(const MetricsSink&) = delete;

  // Loads the states of the operations of every running run. Call once, before the engine
  // commits anything (before or right after Engine::Recover). Errors are the journal's.
  Result<void> Seed(storage::Journal& journal);

  void OnCommitted(const RunState& run, std::span<const storage::Event> events) override;
  void OnRunStopped(const RunState& run, std::string_view reason) override;

  // One group commit: how many appends it carried and how long the journal took. Thread-safe.
  void ObserveCommit(std::size_t group_size, std::chrono::nanoseconds latency);

  // Operations of live runs in `state` (what the gauge reports).
  std::int64_t operations_in(OperationState state) const {
    return by_state_[static_cast<std::size_t>(state)];
  }

 private:
  void SetState(const std::string& workflow_id, const std::string& operation_id,
                std::optional<OperationState> state);
  void DropRun(const std::string& workflow_id);
  // The transitions series of (tool, the event's type), looked up once and cached.
  MetricCounter& Transitions(const std::string& tool, const storage::EventBody& body);

  MetricsRegistry& registry_;
  CounterFamily& transitions_;
  CounterFamily& outcome_unknown_;
  CounterFamily& reconciliations_;
  CounterFamily& runs_started_;
  CounterFamily& runs_finished_;
  CounterFamily& runs_stopped_;
  HistogramFamily& commit_seconds_;
  HistogramFamily& commit_group_size_;
  MetricHistogram& commit_seconds_series_;
  MetricHistogram& commit_group_size_series_;

  // Live runs' operations: workflow id -> operation id -> state. Engine's executor only.
  std::map<std::string, std::map<std::string, OperationState>> live_;
  std::array<std::int64_t, kOperationStateCount> by_state_{};
  std::set<std::string> reasons_;
  using PerKind = std::array<MetricCounter*, std::variant_size_v<storage::EventBody>>;
  std::map<std::string, PerKind, std::less<>> transition_cache_;  // by tool; engine's executor  // outcome_unknown reasons that have a series
};

}  // namespace reckon
