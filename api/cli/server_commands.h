// `reckon server` (run the engine behind the wire protocol) and `reckon contracts` (the tool
// contracts a server knows).
#pragma once

#include <CLI/CLI.hpp>

#include "reckon/api/cli/command.h"

namespace reckon::cli {

void AddServerCommands(CLI::App& app, CommandEnv& env);

}  // namespace reckon::cli
