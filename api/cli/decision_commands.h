// `reckon approve | deny | resolve`: a person's decisions, sent to a server.
//
// approve/deny bind to one operation (or approval id) and to the intent hash the person saw
// (--fingerprint, required): if the operation's intent changed since, the server refuses.
// Who decides is the principal of the caller's token (docs/SECURITY.md), never a name typed
// here; --note adds free text journaled beside it. The principal that started the run may not
// decide or resolve its operations (separation of duties), unless the tool's contract allows.
// resolve settles a needs_human operation: --committed with the provider's reference, or
// --not-committed (a new attempt with the same operation id, if the contract allows one).
#pragma once

#include <CLI/CLI.hpp>

#include "reckon/api/cli/command.h"

namespace reckon::cli {

void AddDecisionCommands(CLI::App& app, CommandEnv& env);

}  // namespace reckon::cli
