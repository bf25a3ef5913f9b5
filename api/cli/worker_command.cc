#include "reckon/api/cli/worker_command.h"

#include <boost/asio/io_context.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <string>
#include <vector>

#include "reckon/api/cli/tool_sources.h"
#include "reckon/protocol/tls_flags.h"
#include "reckon/tools/http/http_tools_file.h"
#include "reckon/worker/plan_workflow.h"
#include "reckon/worker/remote_worker_fleet.h"

namespace reckon::cli {
namespace {

namespace asio = boost::asio;

struct WorkerArgs {
  std::vector<std::string> servers;
  std::string token_file;
  ToolSourceFlags sources;
  RemoteWorkerOptions options;
};

// Runs one RemoteWorker per server until a signal, or until one is refused (then all stop).
int RunWorkers(CommandEnv& env, const WorkerArgs& args, const WorkflowRegistry& workflows,
               ToolRegistry& tools) {
  asio::io_context io(1);
  // An MCP server's tools are listed and registered on this loop, before the workers register
  // the tools with the servers; the source outlives the workers.
  auto mcp = ConnectMcpToolSource(args.sources, io, tools);
  if (!mcp) {
    env.err << "reckon worker: " << mcp.error().message() << "\n";
    return mcp.error().code() == Errc::kInvalidArgument ? kExitBadInput : kExitFailure;
  }
  if (mcp.value()) {
    for (const std::string& name : mcp.value()->pairing()->refused) {
      spdlog::warn("MCP tool '{}' has no contract in {}: not hosted", name, args.sources.mcp_contracts);
    }
    std::string names;
    for (const Tool* tool : tools.All()) names += " " + tool->contract.name;
    spdlog::info("hosting {} tool(s) with the MCP server's:{}", tools.All().size(), names);
  }
  const int code = RunRemoteWorkerFleet(io, workflows, tools, args.options, args.servers,
                                        [&env](const std::string& message) {
                                          env.err << "reckon worker: " << message << "\n"
                                                  << std::flush;
                                        });
  return code == 0 ? kExitOk : kExitFailure;
}

void RunWorkerCommand(CommandEnv& env, WorkerArgs& args) {
  if (args.sources.Empty()) {
    env.err << "reckon worker: no tools to host; name a tools file with --tools FILE, or an MCP "
               "server with --mcp 'COMMAND ARGS' | --mcp-url URL and --contracts FILE\n";
    env.exit_code = kExitBadInput;
    return;
  }
  ToolRegistry tools;
  WorkflowRegistry workflows;
  if (auto loaded = LoadToolSources(args.sources, tools, tools::ProcessEnvironment()); !loaded) {
    env.err << "reckon worker: " << loaded.error().message() << "\n";
    env.exit_code = kExitBadInput;
    return;
  }
  if (auto registered = RegisterPlanWorkflow(workflows); !registered) {
    ReportError(env, "worker", registered.error());
    return;
  }
  api::ApplyTlsEnvironment(args.options.connection.tls);
  if (auto token = LoadWorkerToken(args.options, args.token_file); !token) {
    env.err << "reckon worker: " << token.error().ToString() << "\n";
    env.exit_code = kExitBadInput;
    return;
  }
  if (!spdlog::get("reckon-worker")) {
    spdlog::set_default_logger(spdlog::stderr_color_mt("reckon-worker"));
  }
  std::string names;
  for (const Tool* tool : tools.All()) names += " " + tool->contract.name;
  spdlog::info("hosting the plan workflow and {} tool(s):{}", tools.All().size(), names);
  env.exit_code = RunWorkers(env, args, workflows, tools);
}

}  // namespace

void AddWorkerCommand(CLI::App& app, CommandEnv& env) {
  auto args = std::make_shared<WorkerArgs>();
  CLI::App* c = app.add_subcommand(
      "worker", "Host agent plans and the tools of tools files for reckon servers (server mode)");
  c->add_option("--server", args->servers,
                "reckon server address, HOST:PORT; repeat it for every server of a cluster")
      ->required();
  c->add_option("--token-file", args->token_file,
                "file with the worker's API token (default $RECKON_TOKEN_FILE, then "
                "~/.config/reckon/token)");
  AddToolSourceFlags(c, args->sources);
  c->add_option("--id", args->options.worker_id, "worker id (default: <hostname>-<pid>)");
  c->add_option("--tool-slots", args->options.tool_slots, "tool calls run at once")
      ->check(CLI::Range(1, 1024));
  c->add_option("--workflow-slots", args->options.workflow_slots, "workflow task polls at once")
      ->check(CLI::Range(1, 64));
  c->add_option("--build-id", args->options.build_id,
                "the build of this worker's code; empty: unversioned");
  c->add_option("--compatible-with", args->options.compatible_builds,
                "a build whose runs this worker can replay; repeat it for several");
  api::AddTlsClientFlags(*c, args->options.connection.tls);
  c->callback([&env, args] { RunWorkerCommand(env, *args); });
}

}  // namespace reckon::cli
