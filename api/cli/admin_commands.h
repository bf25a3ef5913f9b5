// `reckon admin ...`: operator commands that work on a journal file directly.
//
//   reckon admin check JOURNAL [--json]
//     Opens the journal read-only (no lock: it works while the journal's owner runs), runs the
//     full PRAGMA integrity_check and prints the schema version, the counts of runs, events
//     and operations, the current owner (if any) and the verdict. Exit 0 when the file is
//     sound; 1 when it is damaged (the problems are listed; restore it from a backup) or
//     cannot be read; 2 for bad usage or a missing file. With --json one JSON object goes to
//     stdout: {"journal", "schema_version", "runs", "events", "operations", "owner", "ok",
//     "problems"} (counts are -1 when they could not be read).
//
//   reckon admin archive ...  (api/cli/archive_command.h): retention by hand.
#pragma once

#include <CLI/CLI.hpp>

#include "reckon/api/cli/command.h"

namespace reckon::cli {

// Registers the subcommands on `app`. `env` must outlive `app`.
void AddAdminCommands(CLI::App& app, CommandEnv& env);

}  // namespace reckon::cli
