// The side-effect classes: what one successful call of a tool does to the world, in increasing
// order of danger. The vocabulary is shared by contracts (contract/contract.h), the journal
// (storage/event.h, storage/rows.h) and the wire; inside, it is always this enum, and its name
// appears only where it is stored, sent or shown. Stateless and thread-safe.
#pragma once

#include <string_view>

#include "reckon/base/error.h"

namespace reckon {

enum class SideEffect {
  kReadOnly,            // no effect: any failure may be retried
  kIdempotentWrite,     // repeating with the same operation id has no further effect
  kDeduplicatedWrite,   // the provider drops repeats of a key, but only inside dedup_window
  kNonRepeatableWrite,  // a repeat is a second effect: an unknown outcome is reconciled
};

// "read_only", "idempotent_write", "deduplicated_write", "non_repeatable_write".
std::string_view SideEffectName(SideEffect side_effect);
// Errc::kInvalidArgument naming `name` when it is none of the four.
Result<SideEffect> ParseSideEffect(std::string_view name);
bool IsWrite(SideEffect side_effect);

}  // namespace reckon
