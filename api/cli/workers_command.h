// `reckon workers [--json]`: the workers connected to a server (listWorkers): worker id, build
// id, compatible builds, the queues it polls, the leases it holds and since when it is
// connected; then the runs that wait for a worker of their build (docs/VERSIONING.md, "Worker
// build ids"). Needs the read permission.
#pragma once

#include <CLI/CLI.hpp>

#include "reckon/api/cli/command.h"

namespace reckon::cli {

void AddWorkersCommand(CLI::App& app, CommandEnv& env);

}  // namespace reckon::cli
