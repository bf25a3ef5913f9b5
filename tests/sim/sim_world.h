// The deterministic simulation of Reckon (docs/TESTING.md, "Deterministic simulation"): one
// seed, one thread, one world. The real engine (engine/engine.h) with its real decider,
// timers, group commit and SQLite journal runs on an io_context this world drives by hand;
// around it everything is simulated and drawn from the seed:
//   - the clock (a ManualClock: time moves only when the world moves it);
//   - the network between the server and its workers, and the workers (tests/sim/sim_fleet.h);
//   - the provider (tests/sim/sim_provider.h), whose ledger is the ground truth;
//   - the disk's failures (storage/testing/faulty_journal.h: a commit that fails, a sync that
//     fails after writing, a slow commit);
//   - crashes of the server (everything not committed is lost; the next life recovers from
//     the journal) and of workers, and workers that pause past their lease;
//   - people, who grant, deny, let approvals expire, sometimes grant what they reviewed for
//     another operation, and resolve operations that need a person from the provider's truth.
// Faults stop after the fault window; then every run must end, or wait for a person.
//
// Determinism: nothing in the world reads the wall clock or another thread, so a seed replays
// exactly (RunSeed twice gives the same digest). The invariants are SimChecker's plus the
// provider's (one effect per non-repeatable operation), checked after every step.
//
// Mutants (engine/decider.h, DeciderMutant) break the engine on purpose; the simulator must
// catch each within a few seeds (tests/sim/sim_test.cc).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "reckon/engine/decider.h"
#include "tests/sim/sim_faults.h"

namespace reckon::sim {

struct SimOptions {
  std::uint64_t seed = 1;
  DeciderMutant mutant = DeciderMutant::kNone;
  std::ostream* log = nullptr;  // non-null: every step of the world, one line each
};

struct SimReport {
  std::uint64_t seed = 0;
  std::vector<std::string> violations;  // empty: every invariant held
  SimCounts counts;                     // "fault.*": injected faults; the rest: what happened
  std::int64_t faults = 0;              // sum of the "fault.*" counts
  int runs = 0;
  int server_lives = 0;
  std::int64_t batches = 0;       // engine batches committed
  std::int64_t steps = 0;         // world steps
  std::int64_t simulated_us = 0;  // simulated time at the end
  std::uint64_t digest = 0;       // of the final journal and ledger: equal on a replay
  std::string Summary() const;
};

SimReport RunSeed(const SimOptions& options);

}  // namespace reckon::sim
