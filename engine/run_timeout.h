// Run timeouts: how long one run may take (Engine::Start's StartOptions::run_timeout,
// `reckon start --run-timeout`), journaled in its WorkflowStarted as a deadline, and what the
// run becomes when the deadline passes (docs/ARCHITECTURE.md, decision 46).
//
// The rule is Decider::Cancel's, applied by the clock instead of a person:
//   - operations that have not acted (prepared, awaiting approval, retry scheduled) are
//     rejected with code run_timeout (an approval request is denied);
//   - once no operation may have acted, the run fails with code run_timeout;
//   - an operation that may have acted (in flight, outcome unknown, reconciling, needs a
//     person) is never forgotten: it goes on to a known outcome under its contract, no new
//     attempt of any operation starts after the deadline (a retry, a new call, a restart's
//     re-issue: rejected with run_timeout), and the check is repeated every
//     kRunTimeoutRecheck until the run can fail (or the code finished first).
// The deadline is armed as an engine timer under the reserved id kRunTimeoutTimer, re-armed by
// recovery from WorkflowStarted, so it fires after a restart too; a run that continues as new
// gets a deadline of its own, the same duration from its start.
#pragma once

#include <chrono>
#include <string_view>

namespace reckon {

inline constexpr std::string_view kRunTimeoutTimer = "$run_timeout";
inline constexpr std::string_view kRunTimeoutCode = "run_timeout";
inline constexpr std::chrono::seconds kRunTimeoutRecheck{1};

}  // namespace reckon
