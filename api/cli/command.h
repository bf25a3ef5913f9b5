// What every `reckon` subcommand shares: the process's streams, the exit code it leaves
// behind, and how an Error becomes a message and an exit code.
//
// A subcommand is registered by a function `void AddXCommand(CLI::App& app, CommandEnv& env)`
// in its own file pair (jcs_command.h, ...); main() owns the CommandEnv and the CLI::App, and
// the env outlives the app. Callbacks run on main's thread inside CLI::App::parse.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include "reckon/base/error.h"

namespace reckon::cli {

// Exit codes of reckon subcommands (CLI11 uses its own non-zero codes for usage errors).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;   // an I/O failure or a bug; retrying may help
inline constexpr int kExitBadInput = 2;  // the input is wrong; retrying unchanged will not help

struct CommandEnv {
  std::istream& in;
  std::ostream& out;
  std::ostream& err;
  int exit_code = kExitOk;  // set by the subcommand that ran
};

// Writes `text` on env.out and flushes it; kUnavailable when standard output is gone.
Result<void> WriteOut(CommandEnv& env, std::string_view text);

// Reads `in` to its end. Returns kFailedPrecondition if the stream reports a read error.
Result<std::string> ReadAll(std::istream& in);

// Prints "reckon <command>: <message>" on env.err and sets env.exit_code: kExitBadInput for
// errors whose action is kDoNotRetry, kExitFailure for the rest (whose code is printed too).
void ReportError(CommandEnv& env, std::string_view command, const Error& error);

}  // namespace reckon::cli
