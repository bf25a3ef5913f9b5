// CallOverrides: per-call tightenings of a tool's contract (an agent plan's step overrides).
// They can only make a contract stricter: fewer attempts, approval required. The defaults
// change nothing. The engine journals them with the operation (OperationPrepared) and decides
// that operation under the tightened copy; replay checks them like the input.
#pragma once

#include <cstdint>

namespace reckon {

struct CallOverrides {
  std::uint32_t max_attempts = 0;  // 0: the contract's
  bool require_approval = false;
  friend bool operator==(const CallOverrides&, const CallOverrides&) = default;
};

}  // namespace reckon
