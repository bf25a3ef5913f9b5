// `reckon query WORKFLOW NAME [ARGS_JSON]` and `reckon update WORKFLOW NAME [ARGS_JSON]
// [--update-id ID]`: ask a running workflow (ctx.OnQuery; nothing is journaled) and instruct it
// (ctx.OnUpdate; validated, journaled, answered once its handler returned). An update without
// --update-id gets one chosen here and printed, so that a caller whose wait ran out can ask
// again with it and get the same answer (the update never runs twice).
#pragma once

#include <CLI/CLI.hpp>

#include "reckon/api/cli/command.h"

namespace reckon::cli {

void AddUpdateCommands(CLI::App& app, CommandEnv& env);

}  // namespace reckon::cli
