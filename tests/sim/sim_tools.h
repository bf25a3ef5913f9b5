// The simulation's tools and workflow: one tool per side-effect class and reconciliation
// route, and an agent-like workflow that calls them in groups (the calls of a group are issued
// together and run in parallel), sometimes sleeping between groups.
//
//   sim.read        read_only
//   sim.idem        idempotent_write      (retried on unknown)
//   sim.dedup       deduplicated_write    (reconciled by lookup)
//   sim.pay         non_repeatable_write  (reconciled by lookup)
//   sim.pay_manual  non_repeatable_write  (an unknown outcome goes to a person)
//   sim.approve     non_repeatable_write  needing a person's approval (decided within 1 s or
//                   rejected), reconciled by lookup
//
// A group may first sleep, or wait up to a few hundred ms for signal "go" (people send it, at
// any time, and a client retries a send its server's crash cut off, so one may arrive twice).
// Timings are the engine tests' fast ones (host/testing/fast_contracts.h): 100 ms attempt
// deadline, 30 ms lookup grace. The tools' code is never run by the engine's process: the
// SimFleet's workers carry attempts out (tests/sim/sim_fleet.h); the registry holds the
// contracts the engine decides by. Plain functions.
#pragma once

#include <boost/json/value.hpp>

#include <string>

#include "reckon/contract/contract.h"
#include "reckon/worker/tool.h"
#include "reckon/worker/workflow_registry.h"
#include "tests/sim/sim_rng.h"

namespace reckon::sim {

inline constexpr char kSimAgent[] = "sim.agent";

void RegisterSimTools(ToolRegistry& tools);
void RegisterSimWorkflows(WorkflowRegistry& workflows);
SideEffect SideEffectOfSimTool(const std::string& tool);

// A random input for sim.agent: 1-4 groups of 1-2 calls, `run` making the inputs distinct.
boost::json::value RandomAgentInput(SimRng& rng, int run);

}  // namespace reckon::sim
