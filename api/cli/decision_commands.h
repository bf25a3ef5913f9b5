// `reckon approve | deny | resolve`: a person's decisions, sent to a server.
//
// approve/deny bind to one operation (or approval id) and, with --intent-hash, to the intent
// hash the person saw: if the operation's intent changed since, the server refuses.
// resolve settles a needs_human operation: --committed with the provider's reference, or
// --not-committed (a new attempt with the same operation id, if the contract allows one).
#pragma once

#include <CLI/CLI.hpp>

#include "reckon/api/cli/command.h"

namespace reckon::cli {

void AddDecisionCommands(CLI::App& app, CommandEnv& env);

}  // namespace reckon::cli
