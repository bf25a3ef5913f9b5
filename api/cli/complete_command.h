// `reckon complete OPERATION_ID --delivery-id ID (--succeeded [--output JSON] | --failed --code
// CODE [--kind definitive|retryable|unknown] [--message TEXT]) [--workflow ID]
// [--provider-ref REF]`: delivers a provider's completion of an operation that answered
// "accepted" (asynchronous completion, docs/TOOLS.md), as the server's HTTP endpoint
// POST /api/v1/operations/{id}/completion does. Applied once per delivery id: repeating the
// command changes nothing. Needs a worker token (the tool's side reports completions).
// Exit 0 delivered (or a repeat); non-zero when refused, as every command (the message says
// why: an unknown operation, a token without the work permission, bad usage).
#pragma once

#include <CLI/CLI.hpp>

#include "reckon/api/cli/command.h"

namespace reckon::cli {

void AddCompleteCommand(CLI::App& app, CommandEnv& env);

}  // namespace reckon::cli
