// `reckon jcs`: reads JSON on stdin and writes its RFC 8785 canonical form to stdout, exactly
// the canonical bytes (no newline added). Bad input: a message naming the problem and its byte
// offset on stderr, exit code 2.
#pragma once

#include <CLI/CLI.hpp>

#include "reckon/api/cli/command.h"

namespace reckon::cli {

// Registers the subcommand on `app`. `env` must outlive `app`.
void AddJcsCommand(CLI::App& app, CommandEnv& env);

}  // namespace reckon::cli
