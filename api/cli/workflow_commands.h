// `reckon start | list | show | history | trace | cancel | signal`: workflows on a server.
#pragma once

#include <CLI/CLI.hpp>

#include "reckon/api/cli/command.h"

namespace reckon::cli {

void AddWorkflowCommands(CLI::App& app, CommandEnv& env);

}  // namespace reckon::cli
