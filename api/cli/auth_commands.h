// `reckon auth ...`: principals and their API tokens (docs/SECURITY.md). All go to a server and
// need an admin token, except whoami (any token).
//
//   reckon auth token create --name NAME --role ROLE [--tools T,..] [--workflow-types W,..]
//                            [--expires 30d] [--out FILE]
//     Creates a principal and prints its token once (or writes it to FILE, mode 0600, and
//     prints where; FILE, if it exists, must be a regular file of yours that nobody else may
//     access, else nothing is created: base/private_file.h). The server keeps only the token's
//     SHA-256.
//   reckon auth token list [--json]      every principal, revoked ones too; never a token
//   reckon auth token revoke NAME        the token stops working at once on this server
//   reckon auth whoami [--json]          the principal your token stands for
//
// Exit codes as every subcommand (command.h): 2 for bad input or a refusal, 1 for failures.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <string_view>

#include "reckon/api/cli/command.h"
#include "reckon/base/error.h"

namespace reckon::cli {

void AddAuthCommands(CLI::App& app, CommandEnv& env);

// "30d", "12h", "15m", "90s" as seconds. Errc::kInvalidArgument naming the text otherwise.
Result<std::chrono::seconds> ParseDuration(std::string_view text);

}  // namespace reckon::cli
