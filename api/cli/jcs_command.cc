#include "reckon/api/cli/jcs_command.h"

#include <ostream>

#include "reckon/base/jcs.h"

namespace reckon::cli {
namespace {

Result<void> RunJcs(CommandEnv& env) {
  RECKON_TRY(const std::string input, ReadAll(env.in));
  RECKON_TRY(const std::string canonical, CanonicalizeJson(std::string_view(input)));
  if (!env.out.write(canonical.data(), static_cast<std::streamsize>(canonical.size())).flush()) {
    return Err(Errc::kUnavailable, "cannot write to standard output");
  }
  return Ok();
}

}  // namespace

void AddJcsCommand(CLI::App& app, CommandEnv& env) {
  CLI::App* command =
      app.add_subcommand("jcs", "Write the RFC 8785 canonical form of the JSON on stdin to stdout");
  command->callback([&env] {
    if (Result<void> result = RunJcs(env); !result) ReportError(env, "jcs", result.error());
  });
}

}  // namespace reckon::cli
