// SimChecker: the invariants of the simulation, checked as the world runs.
//
// After every batch the engine reports durable (it is the engine's TraceSink):
//   - each operation's events follow engine/operation_state.cc's table, from its
//     OperationPrepared on (Transition);
//   - an ApprovalGranted carries the operation's own intent hash, and a person granted exactly
//     that operation and that intent (the people's decisions are the ground truth:
//     RecordGrant), so no grant is consumed by another operation or for a changed intent.
// After every restart (Reopened, before the new engine reads the journal):
//   - every event the engine reported durable is in the journal at its sequence number, of
//     the same type: no acknowledged event is lost;
//   - the operation table is rebuilt from the journal and checked again, so events a failed
//     commit kept without acknowledging them are judged too.
// At the end (Finish): the journal agrees with the provider: a committed write has an effect
// at the provider, and a rejected deduplicated or non-repeatable write has none.
// (The provider's own check, one effect per non-repeatable operation, is SimProvider's.)
//
// The first violations are kept with the simulated time they were seen at. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "reckon/engine/operation_state.h"
#include "reckon/engine/trace_sink.h"
#include "reckon/storage/journal.h"
#include "tests/sim/sim_provider.h"

namespace reckon::sim {

class SimChecker final : public TraceSink {
 public:
  // `now` gives the simulated time for reports; `log` (may be empty) hears every event.
  SimChecker(std::function<std::int64_t()> now, std::function<void(const std::string&)> log)
      : now_(std::move(now)), log_(std::move(log)) {}

  void OnCommitted(const RunState& run, std::span<const storage::Event> events) override;

  // A person granted `operation_id` of `workflow_id` having reviewed `intent_hash`.
  void RecordGrant(const std::string& workflow_id, const std::string& operation_id,
                   const std::string& intent_hash);
  // After a crash, before the next life: acknowledged events are on disk; rebuilds the
  // operation states from the journal.
  void Reopened(storage::Journal& journal);
  // At the end, over the journal of the last life.
  void Finish(storage::Journal& journal, const SimProvider& provider);

  void Violation(const std::string& what);
  const std::vector<std::string>& violations() const { return violations_; }
  std::int64_t batches() const { return batches_; }

 private:
  struct Op {
    OperationState state = OperationState::kPrepared;
    std::string intent_hash;
    SideEffect side_effect = SideEffect::kReadOnly;
  };
  void Apply(const std::string& workflow_id, const storage::Event& event);
  Result<std::vector<storage::Event>> History(storage::Journal& journal,
                                              const std::string& workflow_id);

  std::function<std::int64_t()> now_;
  std::function<void(const std::string&)> log_;
  std::map<std::string, std::map<std::int64_t, int>> acked_;  // workflow -> seq -> type
  std::map<std::string, std::map<std::string, Op>> ops_;      // workflow -> operation
  std::set<std::tuple<std::string, std::string, std::string>> grants_;
  std::vector<std::string> violations_;
  std::set<std::string> seen_;
  std::int64_t batches_ = 0;
};

}  // namespace reckon::sim
