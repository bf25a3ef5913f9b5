// `reckon plan validate FILE` and `reckon plan run FILE`: agent plans (plan/plan.h,
// docs/PLANS.md) from the command line.
//
//   validate  parses the plan and checks it against the tools' contracts: the built-in catalog
//             (the refund sample's tools), or a server's with --server. Exit 0 valid, 2 not
//             (every problem listed, each naming its step and field).
//   run       validates, then runs it as a durable workflow, printing a line per step event and
//             a summary. Embedded by default (an engine in this process over --journal, with
//             the built-in tools talking to --provider); with --server, on a reckon server
//             whose workers host the "plan" workflow and the tools. Nothing is journaled for an
//             invalid plan. Rerunning the same plan resumes it (the plan id is the workflow id);
//             a different plan under a used plan id is refused.
//             Exit 0 completed; 1 failed or could not run; 2 invalid plan; 3 waiting for a
//             person (embedded, without --approve-all).
#pragma once

#include <CLI/CLI.hpp>

#include "reckon/api/cli/command.h"

namespace reckon::cli {

void AddPlanCommands(CLI::App& app, CommandEnv& env);

}  // namespace reckon::cli
