#include "reckon/api/cli/plan_commands.h"

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include <fstream>
#include <memory>
#include <sstream>

#include "reckon/api/cli/contract_source.h"
#include "reckon/host/plan_progress.h"
#include "reckon/api/cli/remote.h"
#include "reckon/protocol/wire_convert.h"
#include "reckon/contract/contract_json.h"
#include "reckon/plan/plan.h"
#include "reckon/storage/event_codec.h"
#include "reckon/api/cli/tool_sources.h"
#include "reckon/tools/http/http_tools_file.h"
#include "reckon/host/embedded_host.h"
#include "reckon/host/plan_runner.h"
#include "reckon/worker/plan_workflow.h"

namespace reckon::cli {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
namespace wire = api::wire;
using api::Str;
using namespace std::chrono_literals;

constexpr int kExitWaiting = 3;

struct PlanArgs {
  RemoteFlags remote;
  ContractSource contracts;  // validate: --contracts FILE, else the server's
  std::string file;
  bool no_wait = false;
  // run, embedded: the tools it hosts, its journal, and --approve-all.
  ToolSourceFlags sources;
  std::string journal;
  bool approve_all = false;
  bool server_given = false;  // --server named on the command line
};

void Print(CommandEnv& env, const std::string& line) { env.out << line << "\n" << std::flush; }

// --- validate -----------------------------------------------------------------------------

Result<void> RunValidate(CommandEnv& env, const PlanArgs& args) {
  RECKON_TRY(Plan plan, ParsePlanFile(args.file));
  RECKON_TRY(ContractRegistry contracts, LoadContracts(args.contracts, args.remote));
  RECKON_TRY(ValidatePlan(plan, contracts));
  Print(env, "plan " + plan.plan_id + " is valid: " + std::to_string(plan.steps.size()) +
                 " step(s), hash " + PlanHash(plan) + " (checked against " +
                 args.contracts.Describe(args.remote) + ")");
  for (const PlanStep& step : plan.steps) {
    std::string line = "  " + step.id + ": " + PlanStepAction(step);
    if (!step.depends_on.empty()) {
      line += " after";
      for (const auto& dep : step.depends_on) line += " " + dep;
    }
    if (step.condition) {
      line += ", if " + step.condition->ref.text + " " +
              std::string(ConditionOpName(step.condition->op));
      if (step.condition->op != ConditionOp::kExists) {
        line += " " + json::serialize(step.condition->value);
      }
    }
    if (step.overrides.max_attempts > 0) {
      line += ", at most " + std::to_string(step.overrides.max_attempts) + " attempt(s)";
    }
    if (step.overrides.require_approval) line += ", approval required";
    Print(env, line);
  }
  return Ok();
}

// A table of the plan's steps and how each ended, from the run's operations by step id.
void PrintSummary(CommandEnv& env, const Plan& plan, const std::map<std::string, std::string>& states,
                  const PlanProgress& progress) {
  std::vector<std::vector<std::string>> rows = {{"STEP", "TOOL", "STATE"}};
  for (const PlanStep& step : plan.steps) {
    auto it = states.find(step.id);
    const std::string state = it != states.end()                     ? it->second
                              : progress.published().count(step.id) ? "published"
                                                                     : "not run";
    rows.push_back({step.id, PlanStepAction(step), state});
  }
  env.out << "\n" << RenderTable(rows);
  env.out << "plan " << plan.plan_id << ": " << storage::RunStatusName(progress.status())
          << "\n";
  if (!progress.result_json().empty()) env.out << "result " << progress.result_json() << "\n";
  env.out << std::flush;
}

int ExitFor(const PlanProgress& progress) {
  if (progress.status() == storage::RunStatus::kCompleted) return kExitOk;
  if (progress.finished()) return kExitFailure;
  return kExitWaiting;
}

// --- run, on a server ---------------------------------------------------------------------

Result<void> RunOnServer(CommandEnv& env, const PlanArgs& args, const Plan& plan) {
  auto request = NewRequest();
  auto start = request->getRoot<wire::Request>().initMethod().initStartWorkflow();
  start.setWorkflowId(plan.plan_id);
  start.setWorkflowType(kPlanWorkflow);
  start.setInputJson(json::serialize(PlanToJson(plan)));
  start.setDefinitionHash(PlanHash(plan));
  auto started = CallServer(args.remote, std::move(request));
  if (!started) {
    if (started.error().code() == Errc::kAlreadyExists) {
      return Err(Errc::kAlreadyExists,
                 "plan id '" + plan.plan_id + "' was already run with a different plan (this one "
                 "hashes to " + PlanHash(plan) + "); give the new plan a new plan_id");
    }
    return started.error();
  }
  if (args.no_wait) {
    Print(env, "started plan " + plan.plan_id + "; follow it with `reckon show " + plan.plan_id + "`");
    return Ok();
  }
  PlanProgress progress(plan.plan_id);
  storage::EventDecoder decoder;
  std::int64_t seen = 0;
  std::string announced;
  while (!progress.finished()) {
    auto watch = NewRequest();
    auto w = watch->getRoot<wire::Request>().initMethod().initWatchWorkflow();
    w.setWorkflowId(plan.plan_id);
    w.setAfterSeq(seen);
    w.setWaitMs(20000);
    RECKON_TRY(api::Reply reply, CallServer(args.remote, std::move(watch), 30s));
    RECKON_TRY(auto events, api::EventsFromWire(reply.get().getResult().getHistory(), decoder));
    for (const storage::Event& event : events) {
      seen = event.seq;
      if (auto line = progress.Line(event)) Print(env, *line);
    }
    const std::string waiting = progress.WaitingCommands();
    if (!waiting.empty() && waiting != announced) {
      env.out << "waiting for a person; from another terminal:\n" << waiting << std::flush;
      announced = waiting;
    }
  }
  std::map<std::string, std::string> states;
  auto describe = NewRequest();
  describe->getRoot<wire::Request>().initMethod().initDescribeWorkflow().setWorkflowId(plan.plan_id);
  if (auto detail = CallServer(args.remote, std::move(describe))) {
    for (auto op : detail.value().get().getResult().getWorkflow().getOperations()) {
      states[Str(op.getStepId())] = Str(op.getState());
    }
  }
  PrintSummary(env, plan, states, progress);
  env.exit_code = ExitFor(progress);
  return Ok();
}

// --- run, embedded ------------------------------------------------------------------------

asio::awaitable<Result<int>> RunEmbedded(CommandEnv& env, EmbeddedHost& host, const PlanArgs& args,
                                         Plan plan) {
  RECKON_CO_TRY(co_await host.Recover());
  PlanRunOptions options;
  if (args.approve_all) options.approve_as = "reckon.plan-run.approve-all";
  CommandEnv* out = &env;
  options.on_line = [out](const std::string& line) { Print(*out, line); };
  RECKON_CO_TRY(PlanRunReport report, co_await RunPlan(host, plan, std::move(options)));
  PrintSummary(env, plan, report.states, report.progress);
  if (!report.progress.finished()) {
    env.out << "waiting for a person: run again with --approve-all, or serve the journal "
               "(`reckon server --journal " << args.journal << "`) and decide there:\n"
            << report.progress.WaitingCommands() << std::flush;
  }
  co_return ExitFor(report.progress);
}

Result<void> RunPlanEmbedded(CommandEnv& env, const PlanArgs& args, Plan plan) {
  if (args.journal.empty()) {
    return Err(Errc::kInvalidArgument, "embedded `plan run --tools` needs --journal PATH (the "
                                       "SQLite file the run is journaled in)");
  }
  // Tools first: a bad tools file stops everything before a journal is created.
  auto tools = std::make_unique<ToolRegistry>();
  RECKON_TRY(LoadToolSources(args.sources, *tools, tools::ProcessEnvironment()));
  spdlog::set_level(spdlog::level::warn);  // the progress lines are the output
  RECKON_TRY(std::unique_ptr<EmbeddedHost> host, EmbeddedHost::Open(args.journal));
  for (const Tool* tool : tools->All()) {
    RECKON_TRY(host->tools().Register(*tool));
  }
  // An MCP server's tools: listed and registered on the host's loop before it recovers; the
  // source is destroyed before the host.
  RECKON_TRY(std::unique_ptr<tools::McpToolSource> mcp,
             ConnectMcpToolSource(args.sources, host->io(), host->tools()));
  RECKON_TRY(RegisterPlanWorkflow(host->workflows()));
  Print(env, "plan " + plan.plan_id + " (" + std::to_string(plan.steps.size()) + " steps, hash " +
                 PlanHash(plan).substr(0, 16) + ") embedded, journal " + args.journal);
  RECKON_TRY(int code, host->Run(RunEmbedded(env, *host, args, std::move(plan))));
  env.exit_code = code;
  return Ok();
}

Result<void> RunPlanCommand(CommandEnv& env, const PlanArgs& args) {
  RECKON_TRY(Plan plan, ParsePlanFile(args.file));
  if (!args.sources.Empty()) {
    if (args.server_given) {
      return Err(Errc::kInvalidArgument,
                 "--tools runs the plan embedded; with --server the server's workers host the "
                 "tools (start them with `reckon worker --tools FILE`): give one or the other");
    }
    return RunPlanEmbedded(env, args, std::move(plan));
  }
  RECKON_TRY(ContractRegistry contracts, LoadContracts(ContractSource{}, args.remote));
  RECKON_TRY(ValidatePlan(plan, contracts));
  Print(env, "plan " + plan.plan_id + " (" + std::to_string(plan.steps.size()) +
                 " steps, hash " + PlanHash(plan).substr(0, 16) + ") on the server at " +
                 args.remote.server);
  return RunOnServer(env, args, plan);
}

}  // namespace

void AddPlanCommands(CLI::App& app, CommandEnv& env) {
  CLI::App* plan = app.add_subcommand("plan", "Validate and run agent plans (docs/PLANS.md)");
  plan->require_subcommand(1);
  for (const char* name : {"validate", "run"}) {
    auto args = std::make_shared<PlanArgs>();
    const bool run = std::string(name) == "run";
    CLI::App* c = plan->add_subcommand(
        name, run ? "Validate a plan, then run it as a durable workflow: embedded over the "
                    "tools of --tools files (journaled in --journal), or on a server whose "
                    "workers host the tools (`reckon worker`)"
                  : "Check a plan against the tools' contracts; nothing runs");
    c->add_option("file", args->file, "Plan file (JSON)")->required();
    AddRemoteFlags(c, args->remote, /*with_json=*/false);
    if (run) {
      c->add_flag("--no-wait", args->no_wait, "Start it and return");
      AddToolSourceFlags(c, args->sources);
      c->add_option("--journal", args->journal,
                    "with --tools: the journal (SQLite file) of the embedded run");
      c->add_flag("--approve-all", args->approve_all,
                  "with --tools: grant every approval the plan asks for");
    } else {
      AddContractSourceFlag(c, args->contracts);
    }
    c->callback([&env, args, run, c] {
      args->server_given = c->get_option("--server")->count() > 0;
      Result<void> result = run ? RunPlanCommand(env, *args) : RunValidate(env, *args);
      if (!result) ReportError(env, run ? "plan run" : "plan validate", result.error());
    });
  }
}

}  // namespace reckon::cli
