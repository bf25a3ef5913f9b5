// mcp-agent: runs an agent plan on the tools of an MCP server, embedded: the engine, the
// journal and the MCP client in this one process (tools/mcp/mcp_tool_source.h). The sample of
// docs/TOOLS.md, section 3; samples/mcp/README.md has the commands.
//
//   mcp-agent PLAN --journal J --contracts samples/mcp/contracts.json
//             (--mcp 'python3 tests/mcp/refund_mcp_server.py --ledger L' | --mcp-url URL)
//             [--approve-all]
//
// Every tool the server lists is paired with its contract; a tool without one is refused. The
// plan is validated against the contracts, run, and followed until it ends or only a person can
// let it go on. Run it again after a crash: the same plan resumes from the journal.
//
// Exit codes: 0 the plan completed; 3 it waits for a person (or failed); 2 bad usage, a bad
// contracts file or plan, or tools that do not pair; 1 anything else.
#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>

#include "reckon/plan/plan.h"
#include "reckon/tools/mcp/mcp_tool_source.h"
#include "reckon/host/embedded_host.h"
#include "reckon/host/plan_runner.h"
#include "reckon/worker/plan_workflow.h"

namespace {

namespace asio = boost::asio;
using namespace reckon;
using namespace reckon::tools;

struct Options {
  std::string plan;
  std::string journal;
  std::string contracts;
  McpServerAddress server;
  bool approve_all = false;
};

asio::awaitable<int> RunPlanOnMcp(EmbeddedHost& host, const Options& options, Plan plan) {
  if (auto recovered = co_await host.Recover(); !recovered) {
    std::fprintf(stderr, "mcp-agent: recovery failed: %s\n", recovered.error().ToString().c_str());
    co_return 1;
  }
  PlanRunOptions run_options;
  if (options.approve_all) run_options.approve_as = "mcp-agent.approve-all";
  run_options.on_line = [](const std::string& line) { std::printf("%s\n", line.c_str()); };
  auto ran = co_await RunPlan(host, plan, std::move(run_options));
  if (!ran) {
    std::fprintf(stderr, "mcp-agent: plan %s: %s\n", plan.plan_id.c_str(),
                 ran.error().ToString().c_str());
    co_return ran.error().code() == Errc::kInvalidArgument ? 2 : 1;
  }
  const PlanRunReport& report = ran.value();
  std::printf("\n%-16s %-20s %s\n", "STEP", "TOOL", "STATE");
  for (const PlanStep& step : plan.steps) {
    auto it = report.states.find(step.id);
    std::printf("%-16s %-20s %s\n", step.id.c_str(), PlanStepAction(step).c_str(),
                it != report.states.end() ? it->second.c_str() : "not run");
  }
  std::printf("plan %s: %s\n", plan.plan_id.c_str(),
              std::string(storage::RunStatusName(report.progress.status())).c_str());
  if (report.progress.status() == storage::RunStatus::kCompleted) co_return 0;
  if (!report.progress.finished()) {
    std::printf("waiting for a person (run again with --approve-all):\n%s",
                report.progress.WaitingCommands().c_str());
  }
  co_return 3;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Run an agent plan on the tools of an MCP server, embedded"};
  Options options;
  app.add_option("plan", options.plan, "plan file (JSON, docs/PLANS.md)")->required();
  app.add_option("--journal", options.journal, "SQLite journal file (created if new)")->required();
  app.add_option("--contracts", options.contracts,
                 "the tools' contracts with their MCP bindings (docs/TOOLS.md, section 3)")->required();
  auto* mcp = app.add_option("--mcp", options.server.command,
                             "spawn the MCP server: 'COMMAND ARGS' (stdio)");
  auto* url = app.add_option("--mcp-url", options.server.url,
                             "an MCP server over Streamable HTTP: http://127.0.0.1:PORT/mcp");
  mcp->excludes(url);
  app.add_flag("--approve-all", options.approve_all, "approve every approval request");
  CLI11_PARSE(app, argc, argv);
  spdlog::set_default_logger(spdlog::stderr_color_mt("mcp-agent"));  // stdout is the report
  spdlog::set_level(spdlog::level::warn);

  // Every problem of the contracts file before anything opens or starts.
  if (auto contracts = LoadMcpContractsFile(options.contracts); !contracts) {
    std::fprintf(stderr, "mcp-agent: %s\n", contracts.error().message().c_str());
    return 2;
  }
  auto plan = ParsePlanFile(options.plan);
  if (!plan) {
    std::fprintf(stderr, "mcp-agent: %s\n", plan.error().ToString().c_str());
    return 2;
  }
  auto host = EmbeddedHost::Open(options.journal);
  if (!host) {
    std::fprintf(stderr, "mcp-agent: %s\n", host.error().ToString().c_str());
    return 1;
  }
  EmbeddedHost& h = *host.value();
  auto source = OpenMcpTools(h.io(), options.server, options.contracts, h.tools());
  if (!source) {
    std::fprintf(stderr, "mcp-agent: %s\n", source.error().message().c_str());
    return source.error().code() == Errc::kInvalidArgument ? 2 : 1;
  }
  for (const std::string& name : source.value()->pairing()->refused) {
    std::printf("refused %s: no contract in %s\n", name.c_str(), options.contracts.c_str());
  }
  (void)RegisterPlanWorkflow(h.workflows());
  auto ran = h.Run(RunPlanOnMcp(h, options, std::move(plan).value()));
  if (!ran) {
    std::fprintf(stderr, "mcp-agent: %s\n", ran.error().ToString().c_str());
    return 1;
  }
  return ran.value();
}
