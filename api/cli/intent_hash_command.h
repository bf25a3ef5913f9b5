// `reckon intent-hash [--secret FIELD]...` (alias: `fingerprint`): reads a tool input (JSON)
// on stdin and prints its intent hash (base/intent_hash.h) as 64 hex characters and a newline.
// Each --secret names a dotted path ("card.number") left out of the hash. Bad input: message on stderr, exit code 2.
#pragma once

#include <CLI/CLI.hpp>

#include "reckon/api/cli/command.h"

namespace reckon::cli {

// Registers the subcommand on `app`. `env` must outlive `app`.
void AddIntentHashCommand(CLI::App& app, CommandEnv& env);

}  // namespace reckon::cli
