// SimProvider: the simulated provider (a payments API) the simulated workers call. It stands
// outside every simulated process, so its ledger survives every crash: it is the ground truth
// the invariants are checked against.
//
// Its ledger is keyed by the idempotency key the worker sends (the operation id). How a
// second call with a key the ledger holds is handled depends on the tool's class:
//   read_only           no effect at all;
//   idempotent_write    the same effect again (the ledger still holds one);
//   deduplicated_write  the provider returns the first effect;
//   non_repeatable_write a second effect: the provider does not deduplicate, so a second
//                        execution of one operation is visible (the invariant the engine
//                        must keep, SimProvider::double_effects()).
// Faults (SimFaults) decide per call whether the provider commits and loses the reply, fails
// before the ledger, refuses or rejects; a lookup answers the truth or, late, still_unknown.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "reckon/contract/contract.h"
#include "reckon/engine/tool_dispatcher.h"
#include "reckon/worker/tool.h"
#include "tests/sim/sim_faults.h"
#include "tests/sim/sim_rng.h"

namespace reckon::sim {

struct ProviderReply {
  AttemptOutcome outcome;
  bool reply_lost = false;  // the worker never hears back: it reports unknown
};

class SimProvider {
 public:
  SimProvider(SimRng& rng, const SimFaults& faults, SimCounts& counts)
      : rng_(rng), faults_(faults), counts_(counts) {}

  ProviderReply Execute(const std::string& key, SideEffect side_effect);
  ReconcileOutcome Lookup(const std::string& key);

  // Effects of one key (0 for a key never committed).
  int effects(const std::string& key) const;
  std::string ref_of(const std::string& key) const;
  // Keys of a non-repeatable tool with two effects or more: must stay empty.
  const std::vector<std::string>& double_effects() const { return double_effects_; }
  const std::map<std::string, int>& ledger_effects() const { return effects_; }

 private:
  std::string Commit(const std::string& key, SideEffect side_effect);

  SimRng& rng_;
  const SimFaults& faults_;
  SimCounts& counts_;
  std::map<std::string, int> effects_;
  std::map<std::string, std::string> refs_;
  std::vector<std::string> double_effects_;
  int next_ref_ = 1;
};

}  // namespace reckon::sim
