// The mutants the simulator must catch (engine/decider.h, DeciderMutant), by name, for the
// tests and for `reckon-sim --mutant NAME`. Plain functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reckon/engine/decider.h"

namespace reckon::sim {

struct NamedMutant {
  const char* name;
  DeciderMutant mutant;
};

inline const std::vector<NamedMutant>& Mutants() {
  static const std::vector<NamedMutant> mutants = {
      {"reconcile_before_deadline", DeciderMutant::kReconcileBeforeDeadline},
      {"blind_retry_unknown", DeciderMutant::kBlindRetryUnknown},
      {"reuse_grant_across_intents", DeciderMutant::kReuseGrantAcrossIntents},
  };
  return mutants;
}

inline std::optional<DeciderMutant> ParseMutant(std::string_view name) {
  if (name == "none") return DeciderMutant::kNone;
  for (const NamedMutant& m : Mutants()) {
    if (name == m.name) return m.mutant;
  }
  return std::nullopt;
}

}  // namespace reckon::sim
