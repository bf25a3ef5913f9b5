// The `reckon` command-line tool: one CLI11 app, one subcommand per file pair.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>

#include "reckon/api/cli/admin_commands.h"
#include "reckon/api/cli/outbox_commands.h"
#include "reckon/api/cli/cluster_commands.h"
#include "reckon/api/cli/auth_commands.h"
#include "reckon/api/cli/command.h"
#include "reckon/api/cli/complete_command.h"
#include "reckon/api/cli/decision_commands.h"
#include "reckon/api/cli/intent_hash_command.h"
#include "reckon/api/cli/jcs_command.h"
#include "reckon/api/cli/plan_commands.h"
#include "reckon/api/cli/server_commands.h"
#include "reckon/api/cli/update_commands.h"
#include "reckon/api/cli/workflow_commands.h"
#include "reckon/api/cli/worker_command.h"
#include "reckon/api/cli/workers_command.h"

int main(int argc, char** argv) {
  reckon::cli::CommandEnv env{std::cin, std::cout, std::cerr};
  CLI::App app("Reckon: a durable workflow engine.", "reckon");
  // At most one; "none" is reported after parsing so that an unknown subcommand gets CLI11's
  // "not expected: frobnicate" rather than "A subcommand is required".
  app.require_subcommand(0, 1);
  reckon::cli::AddJcsCommand(app, env);
  reckon::cli::AddIntentHashCommand(app, env);
  reckon::cli::AddServerCommands(app, env);
  reckon::cli::AddWorkflowCommands(app, env);
  reckon::cli::AddUpdateCommands(app, env);
  reckon::cli::AddDecisionCommands(app, env);
  reckon::cli::AddPlanCommands(app, env);
  reckon::cli::AddAdminCommands(app, env);
  reckon::cli::AddOutboxCommands(app, env);
  reckon::cli::AddClusterCommands(app, env);
  reckon::cli::AddAuthCommands(app, env);
  reckon::cli::AddWorkersCommand(app, env);
  reckon::cli::AddWorkerCommand(app, env);
  reckon::cli::AddCompleteCommand(app, env);
  try {
    app.parse(argc, argv);  // runs the chosen subcommand's callback
  } catch (const CLI::ParseError& e) {
    return app.exit(e, env.out, env.err);
  } catch (const std::exception& e) {
    // The process boundary: an exception here is a bug, not bad input.
    env.err << "reckon: internal error: " << e.what() << "\n";
    return reckon::cli::kExitFailure;
  }
  if (app.get_subcommands().empty()) {
    env.err << "reckon: a subcommand is required\n\n" << app.help();
    return static_cast<int>(CLI::ExitCodes::RequiredError);
  }
  return env.exit_code;
}
