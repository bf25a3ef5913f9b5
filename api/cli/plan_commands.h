// `reckon plan validate FILE` and `reckon plan run FILE`: agent plans (plan/plan.h,
// docs/PLANS.md) from the command line.
//
//   validate  parses the plan and checks it against the tools' contracts: the built-in catalog
//             (the refund sample's tools), or a server's with --server. Exit 0 valid, 2 not
//             (every problem listed, each naming its step and field).
//   run       validates, then runs it as a durable workflow, printing a line per step event and
//             a summary. With --tools FILE (api/cli/tool_sources.h), embedded: an engine in
//             this process over --journal, hosting the tools of the tools files (and
//             --approve-all grants every approval). Otherwise on a reckon server (--server),
//             whose workers host the "plan" workflow and the tools (`reckon worker --tools`).
//             --tools with an explicit --server is refused. Nothing is journaled for an
//             invalid plan or a bad tools file. Rerunning the same plan resumes it (the plan
//             id is the workflow id); a different plan under a used plan id is refused.
//             Exit 0 completed; 1 failed or could not run; 2 invalid plan or tools file; 3
//             waiting for a person.
#pragma once

#include <CLI/CLI.hpp>

#include "reckon/api/cli/command.h"

namespace reckon::cli {

void AddPlanCommands(CLI::App& app, CommandEnv& env);

}  // namespace reckon::cli
