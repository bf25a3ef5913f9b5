// BindCommand: runs `run(env, *args)` when the CLI11 subcommand `command` is chosen, and reports
// its error (ReportError, under `name`) if it fails. `args` is shared with the options that
// fill it; `env` must outlive the CLI app.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>

#include "reckon/api/cli/command.h"

namespace reckon::cli {

template <class Args, class Run>
void BindCommand(CLI::App* command, CommandEnv& env, std::shared_ptr<Args> args,
                 const char* name, Run run) {
  command->callback([&env, args, name, run] {
    if (Result<void> result = run(env, *args); !result) ReportError(env, name, result.error());
  });
}

}  // namespace reckon::cli
