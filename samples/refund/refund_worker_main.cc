// refund-worker: the refund sample's worker for server mode. It hosts the refund workflow, the
// plan workflow (agent plans over its tools) and the send_refund / lookup_payment tools, connects to a `reckon server`, and runs what the
// server hands it until SIGTERM/SIGINT. Start as many as you like against one server.
//
//   refund-worker --server HOST:PORT [--server HOST:PORT ...] --provider URL [--seed S]
//                 [--id NAME] [--tool-slots N] [--build-id ID [--compatible-with ID]...]
//
// --build-id names the build of this worker's code (docs/VERSIONING.md, "Worker build ids"): a
// run's workflow tasks go only to workers of the build that started it, or to workers that
// list that build with --compatible-with.
//
// A cluster (docs/DEPLOYMENT.md, "Several nodes on PostgreSQL"): name every server; the worker
// holds a connection to each (one RemoteWorker per server, same tools), and each server hands it
// the tasks of the runs it owns. --tool-slots and --workflow-slots apply per server.
//
// Exit codes: 0 stopped by a signal; 1 the server refused the registration (the message says
// why, e.g. a contract that differs from the one the server journaled); 2 bad usage.
#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "samples/common/http_url.h"
#include "samples/refund/refund_tools.h"
#include "samples/refund/refund_workflow.h"
#include "reckon/protocol/tls_flags.h"
#include "reckon/worker/plan_workflow.h"
#include "reckon/worker/remote_worker_fleet.h"

int main(int argc, char** argv) {
  using namespace reckon;
  namespace asio = boost::asio;
  RemoteWorkerOptions options;
  std::string provider_url;
  std::uint64_t seed = 1;
  CLI::App app("refund-worker: hosts the refund workflow and tools for a reckon server.",
               "refund-worker");
  std::vector<std::string> servers;
  app.add_option("--server", servers,
                 "reckon server address, HOST:PORT; repeat it for every server of a cluster")
      ->required();
  std::string token_file;
  app.add_option("--token-file", token_file,
                 "file with the worker's API token (default $RECKON_TOKEN_FILE, then "
                 "~/.config/reckon/token)");
  app.add_option("--provider", provider_url, "payments provider base URL")->required();
  app.add_option("--seed", seed, "card vault seed (as the embedded sample)");
  app.add_option("--id", options.worker_id, "worker id (default: <hostname>-<pid>)");
  app.add_option("--tool-slots", options.tool_slots, "tool calls run at once")
      ->check(CLI::Range(1, 1024));
  app.add_option("--workflow-slots", options.workflow_slots, "workflow task polls at once")
      ->check(CLI::Range(1, 64));
  app.add_option("--build-id", options.build_id,
                 "the build of this worker's code; empty: unversioned (takes new and "
                 "unversioned runs, and those of --compatible-with builds)");
  app.add_option("--compatible-with", options.compatible_builds,
                 "a build whose runs this worker can replay; repeat it for several");
  api::AddTlsClientFlags(app, options.connection.tls);
  CLI11_PARSE(app, argc, argv);
  api::ApplyTlsEnvironment(options.connection.tls);
  if (auto loaded = LoadWorkerToken(options, token_file); !loaded) {
    std::fprintf(stderr, "refund-worker: %s\n", loaded.error().ToString().c_str());
    return 2;
  }
  spdlog::set_default_logger(spdlog::stderr_color_mt("refund-worker"));

  auto provider = samples::ParseHttpUrl(provider_url);
  if (!provider) {
    std::fprintf(stderr, "refund-worker: --provider: %s\n", provider.error().message().c_str());
    return 2;
  }
  ToolRegistry tools;
  WorkflowRegistry workflows;
  refund::CardVault vault(seed);
  if (auto registered = refund::RegisterRefundTools(tools, provider.value(), vault); !registered) {
    std::fprintf(stderr, "refund-worker: %s\n", registered.error().ToString().c_str());
    return 1;
  }
  (void)workflows.Register(refund::kRefundWorkflow, refund::RefundWorkflow);
  (void)RegisterPlanWorkflow(workflows);  // agent plans over these tools (`reckon plan run`)

  asio::io_context io(1);
  // One worker refused (e.g. a contract that differs from the journaled one): all stop.
  return RunRemoteWorkerFleet(io, workflows, tools, options, servers,
                              [](const std::string& message) {
                                std::fprintf(stderr, "refund-worker: %s\n", message.c_str());
                              });
}
