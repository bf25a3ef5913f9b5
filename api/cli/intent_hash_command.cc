#include "reckon/api/cli/intent_hash_command.h"

#include <ostream>
#include <string>
#include <vector>

#include "reckon/base/intent_hash.h"
#include "reckon/base/jcs.h"

namespace reckon::cli {
namespace {

Result<void> RunIntentHash(CommandEnv& env, const std::vector<std::string>& secrets) {
  RECKON_TRY(const std::string input, ReadAll(env.in));
  RECKON_TRY(const boost::json::value value, ParseStrictJson(input));
  RECKON_TRY(const std::string hash, IntentHash(value, secrets));
  if (!(env.out << hash << "\n").flush()) {
    return Err(Errc::kUnavailable, "cannot write to standard output");
  }
  return Ok();
}

}  // namespace

void AddIntentHashCommand(CLI::App& app, CommandEnv& env) {
  CLI::App* command = app.add_subcommand(
      "intent-hash", "Print the intent hash (SHA-256 of the canonical JSON) of the JSON on stdin");
  command->alias("fingerprint");  // its name before release 0.2
  // The option owns its values; the callback reads them after parsing. Both live in `command`.
  CLI::Option* secrets =
      command
          ->add_option("--secret",
                       "Dotted path of a secret field to leave out of the hash (repeatable)")
          ->type_name("FIELD")
          ->take_all();
  command->callback([&env, secrets] {
    if (Result<void> result = RunIntentHash(env, secrets->results()); !result) {
      ReportError(env, "intent-hash", result.error());
    }
  });
}

}  // namespace reckon::cli
