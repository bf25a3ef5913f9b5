#include "api/cli/plan_commands.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "api/cli/builtin_catalog.h"
#include "api/cli/plan_progress.h"
#include "api/cli/remote.h"
#include "api/protocol/wire_convert.h"
#include "engine/clock.h"
#include "engine/contract_json.h"
#include "engine/engine.h"
#include "engine/plan.h"
#include "storage/event_codec.h"
#include "worker/local_worker.h"
#include "worker/plan_workflow.h"

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
  bool use_server = false;  // --server given
  std::string file;
  std::string journal = "reckon-plans.db";
  std::string provider;
  std::uint64_t seed = 1;
  bool approve_all = false;
  bool no_wait = false;
};

Result<Plan> LoadPlan(const std::string& file) {
  std::ifstream in(file);
  if (!in) return Err(Errc::kInvalidArgument, "cannot read plan file '" + file + "'");
  std::ostringstream text;
  text << in.rdbuf();
  auto plan = ParsePlan(text.str());
  if (!plan) return plan.error().WithContext(file);
  return plan;
}

// The contracts of the server's tools, as its workers declared them.
Result<ContractRegistry> ServerContracts(const RemoteFlags& remote) {
  auto request = NewRequest();
  request->getRoot<wire::Request>().initMethod().setListContracts();
  RECKON_TRY(api::Reply reply, CallServer(remote, std::move(request)));
  ContractRegistry registry;
  for (auto c : reply.get().getResult().getContracts()) {
    RECKON_TRY(json::value value, api::JsonFromWire(c.getContractJson(), "contract"));
    RECKON_TRY(ToolContract contract, ContractFromJson(value));
    RECKON_TRY(registry.Register(std::move(contract)));
  }
  return registry;
}

Result<ContractRegistry> Contracts(const PlanArgs& args) {
  if (args.use_server) return ServerContracts(args.remote);
  ContractRegistry registry;
  RECKON_TRY(RegisterBuiltinContracts(registry));
  return registry;
}

void Print(CommandEnv& env, const std::string& line) { env.out << line << "\n" << std::flush; }

// --- validate -----------------------------------------------------------------------------

Result<void> RunValidate(CommandEnv& env, const PlanArgs& args) {
  RECKON_TRY(Plan plan, LoadPlan(args.file));
  RECKON_TRY(ContractRegistry contracts, Contracts(args));
  RECKON_TRY(ValidatePlan(plan, contracts));
  Print(env, "plan " + plan.plan_id + " is valid: " + std::to_string(plan.steps.size()) +
                 " step(s), hash " + PlanHash(plan) + " (checked against " +
                 (args.use_server ? "the server's contracts" : "the built-in tools") + ")");
  for (const PlanStep& step : plan.steps) {
    std::string line = "  " + step.id + ": " + step.tool;
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
    rows.push_back({step.id, step.tool, it == states.end() ? "not run" : it->second});
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

// --- run, embedded ------------------------------------------------------------------------

// Approves what waits for approval; returns how many it approved.
asio::awaitable<int> ApproveAll(Engine& engine, const std::string& workflow_id,
                                std::set<std::string>& approved) {
  int count = 0;
  auto run = engine.Describe(workflow_id);
  if (!run) co_return 0;
  for (const OperationView& op : run->operations) {
    if (op.state != OperationState::kAwaitingApproval || approved.count(op.approval_id)) continue;
    approved.insert(op.approval_id);
    ApprovalDecision decision;
    decision.approval_id = op.approval_id;
    decision.expected_intent_hash = op.fingerprint;
    decision.granted = true;
    decision.decided_by = "reckon plan run --approve-all";
    auto decided = engine.DecideApproval(workflow_id, std::move(decision));
    (void)co_await std::move(decided);
    ++count;
  }
  co_return count;
}

Result<void> RunEmbedded(CommandEnv& env, const PlanArgs& args, const Plan& plan) {
  if (args.provider.empty()) {
    return Err(Errc::kInvalidArgument,
               "embedded mode runs the built-in tools, which need --provider URL (the payments "
               "provider); or run on a server with --server HOST:PORT");
  }
  RECKON_TRY(samples::HttpEndpoint provider, samples::ParseHttpUrl(args.provider));
  spdlog::set_level(spdlog::level::warn);  // progress lines are the output
  RECKON_TRY(auto journal, storage::Journal::Open(args.journal));
  ToolRegistry tools;
  refund::CardVault vault(args.seed);
  RECKON_TRY(RegisterBuiltinTools(tools, provider, vault));
  WorkflowRegistry workflows;
  RECKON_TRY(RegisterPlanWorkflow(workflows));
  asio::io_context io(1);
  SystemClock clock;
  LocalWorker worker(workflows, tools);
  Engine engine(io.get_executor(), *journal, tools.contracts(), worker, worker, clock, nullptr);
  PlanProgress progress(plan.plan_id);
  std::int64_t shown = 0;
  auto show_new = [&] {
    auto run = journal->FindLatestRun(plan.plan_id);
    if (!run || !run.value()) return;
    auto events = journal->ReadEvents(run.value()->ref, shown + 1);
    if (!events) return;
    for (const storage::Event& event : events.value()) {
      shown = event.seq;
      if (auto line = progress.Line(event)) Print(env, *line);
    }
  };
  // Commits are inline on this thread: between them the journal is free to read.
  engine.OnChange([&](const RunState& run, std::string_view) {
    if (run.ref().workflow_id == plan.plan_id) show_new();
  });
  std::optional<Error> failure;
  auto drive = [&]() -> asio::awaitable<void> {
    auto recovered = co_await engine.Recover();
    if (!recovered) {
      failure = recovered.error();
      co_return;
    }
    auto start = engine.Start(plan.plan_id, kPlanWorkflow, PlanToJson(plan), PlanHash(plan));
    auto started = co_await std::move(start);
    if (!started) {
      failure = started.error();
      co_return;
    }
    show_new();  // a plan finished in an earlier life shows its history now
    std::set<std::string> approved;
    asio::steady_timer tick(io);
    while (!engine.failed() && !progress.finished()) {
      int approved_now = 0;
      if (args.approve_all) approved_now = co_await ApproveAll(engine, plan.plan_id, approved);
      // Nothing left the engine can do by itself (only a person can go on: needs_human, or an
      // approval without --approve-all).
      if (engine.BusyRuns() == 0 && approved_now == 0) break;
      tick.expires_after(5ms);
      co_await tick.async_wait(asio::use_awaitable);
    }
  };
  asio::co_spawn(io, drive(), [&](std::exception_ptr thrown) {
    if (thrown) failure = Err(Errc::kInternal, "plan run stopped by an exception");
    io.stop();
  });
  io.run();
  if (failure) {
    if (failure->code() == Errc::kAlreadyExists) {
      return Err(Errc::kAlreadyExists,
                 "plan id '" + plan.plan_id + "' was already run with a different plan (this one "
                 "hashes to " + PlanHash(plan) + "); give the new plan a new plan_id");
    }
    return *failure;
  }
  if (engine.failed()) return Err(Errc::kUnavailable, "the engine stopped: " + engine.failure());
  std::map<std::string, std::string> states;
  if (auto run = engine.Describe(plan.plan_id)) {
    for (const OperationView& op : run->operations) {
      states[op.step_id] = std::string(OperationStateName(op.state));
    }
  } else if (auto row = journal->FindLatestRun(plan.plan_id); row && row.value()) {
    // Finished in an earlier life: the journal's operations table has the final states.
    if (auto ops = journal->ListOperations(row.value()->run_pk)) {
      for (const auto& op : ops.value()) states[op.step_id] = op.state;
    }
  }
  PrintSummary(env, plan, states, progress);
  if (!progress.finished()) {
    env.out << "waiting for a person; run again with --approve-all to approve as this user, or "
               "run the plan on a server and use `reckon approve`:\n"
            << progress.WaitingCommands() << std::flush;
  }
  env.exit_code = ExitFor(progress);
  return Ok();
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

Result<void> RunPlan(CommandEnv& env, const PlanArgs& args) {
  RECKON_TRY(Plan plan, LoadPlan(args.file));
  RECKON_TRY(ContractRegistry contracts, Contracts(args));
  RECKON_TRY(ValidatePlan(plan, contracts));
  Print(env, "plan " + plan.plan_id + " (" + std::to_string(plan.steps.size()) +
                 " steps, hash " + PlanHash(plan).substr(0, 16) + ") on " +
                 (args.use_server ? "the server at " + args.remote.server
                                  : "the embedded engine, journal " + args.journal));
  return args.use_server ? RunOnServer(env, args, plan) : RunEmbedded(env, args, plan);
}

}  // namespace

void AddPlanCommands(CLI::App& app, CommandEnv& env) {
  CLI::App* plan = app.add_subcommand("plan", "Validate and run agent plans (docs/PLANS.md)");
  plan->require_subcommand(1);
  for (const char* name : {"validate", "run"}) {
    auto args = std::make_shared<PlanArgs>();
    const bool run = std::string(name) == "run";
    CLI::App* c = plan->add_subcommand(
        name, run ? "Validate a plan, then run it as a durable workflow"
                  : "Check a plan against the tools' contracts; nothing runs");
    c->add_option("file", args->file, "Plan file (JSON)")->required();
    AddRemoteFlags(c, args->remote, /*with_json=*/false);
    CLI::Option* server = c->get_option("--server");
    if (run) {
      c->add_option("--journal", args->journal, "Embedded mode: the journal file")
          ->capture_default_str();
      c->add_option("--provider", args->provider,
                    "Embedded mode: base URL of the payments provider the built-in tools call");
      c->add_option("--seed", args->seed, "Embedded mode: card vault seed");
      c->add_flag("--approve-all", args->approve_all,
                  "Embedded mode: approve every approval the plan asks for, as this command");
      c->add_flag("--no-wait", args->no_wait, "Server mode: start it and return");
    }
    c->callback([&env, args, server, run] {
      args->use_server = server->count() > 0;
      Result<void> result = run ? RunPlan(env, *args) : RunValidate(env, *args);
      if (!result) ReportError(env, run ? "plan run" : "plan validate", result.error());
    });
  }
}

}  // namespace reckon::cli
