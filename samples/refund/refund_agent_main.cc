// refund-agent: the refund sample on the embedded engine. Starts (or resumes) workflows
// refund-0 .. refund-(N-1), where refund-i refunds payment pay-i, and exits when every one is
// terminal. Killed at any moment and started again with the same arguments, it resumes them
// from the journal and starts no new ones.
//
//   refund-agent --journal PATH --provider URL --count N --seed S [--approve-all]
//                [--trace PATH] [--quiet]
//   refund-agent plan FILE --journal PATH --provider URL [--seed S] [--approve-all]
//
// `plan FILE` runs an agent plan (docs/PLANS.md) over the refund tools on the embedded engine
// (host/plan_runner.h): one progress line per step event, a summary table at the end.
//
// Exit codes: 0 all workflows terminal (a plan: completed); 3 the rest wait for a person (an
// approval or a needs_human operation; see the printed list); 1 the engine stopped (restart
// it), or a plan failed; 2 bad usage or an invalid plan.
#include <CLI/CLI.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "reckon/plan/plan.h"
#include "samples/common/http_url.h"
#include "samples/refund/refund_tools.h"
#include "samples/refund/refund_workflow.h"
#include "reckon/telemetry/jsonl_trace_sink.h"
#include "reckon/telemetry/log_trace_sink.h"
#include "reckon/host/embedded_host.h"
#include "reckon/host/plan_runner.h"
#include "reckon/worker/plan_workflow.h"

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace reckon;

struct Options {
  std::string journal;
  std::string provider;
  int count = 1;
  std::uint64_t seed = 1;
  bool approve_all = false;
  std::string trace;
  bool quiet = false;
};

const char* kReasons[] = {"damaged in transit", "duplicate charge", "item not received",
                          "customer changed mind"};

json::value RefundInput(int i, std::uint64_t seed) {
  return json::object{{"payment_id", "pay-" + std::to_string(i)},
                      {"reason", kReasons[(seed + static_cast<std::uint64_t>(i)) % 4]}};
}

asio::awaitable<int> RunAgent(EmbeddedHost& host, const Options& options) {
  Engine& engine = host.engine();
  auto recovered = co_await host.Recover();
  if (!recovered) {
    spdlog::error("recovery failed: {}", recovered.error().ToString());
    co_return 1;
  }
  if (recovered.value() > 0) spdlog::info("resumed {} workflow(s) from the journal", recovered.value());
  for (int i = 0; i < options.count; ++i) {
    const std::string id = "refund-" + std::to_string(i);
    json::value input = RefundInput(i, options.seed);
    auto start = engine.Start(id, refund::kRefundWorkflow, std::move(input));
    auto started = co_await std::move(start);
    if (!started) {
      spdlog::error("cannot start {}: {}", id, started.error().ToString());
      co_return 1;
    }
  }
  std::optional<std::string> approve_as;
  if (options.approve_all) approve_as = "refund-agent.approve-all";
  if (auto settled = co_await host.Settle(approve_as); !settled) {
    spdlog::error("{}", settled.error().ToString());
    co_return 1;
  }
  int done = 0, waiting = 0;
  std::set<std::string> held;
  for (const RunSummary& run : engine.Runs()) {
    held.insert(run.ref.workflow_id);
    if (storage::IsTerminal(run.status)) {
      ++done;
      if (!options.quiet) {
        std::printf("%-12s %-10s %s\n", run.ref.workflow_id.c_str(),
                    std::string(storage::RunStatusName(run.status)).c_str(),
                    run.result_json.c_str());
      }
      continue;
    }
    ++waiting;
    for (const OperationRecord& op : run.operations) {
      if (IsTerminal(op.state)) continue;
      std::printf("%-12s waiting    %s %s (%s)\n", run.ref.workflow_id.c_str(),
                  op.operation_id.c_str(), std::string(OperationStateName(op.state)).c_str(),
                  op.state == OperationState::kAwaitingApproval ? op.approval_id.c_str()
                                                                  : op.failure_message.c_str());
    }
    if (!run.stuck_reason.empty()) std::printf("%-12s stopped    %s\n", run.ref.workflow_id.c_str(), run.stuck_reason.c_str());
  }
  // Finished workflows are only in the journal (the engine keeps no memory of a finished
  // run): Describe reads them there, on this same thread, so the read does not race commits.
  for (int i = 0; i < options.count; ++i) {
    const std::string id = "refund-" + std::to_string(i);
    if (held.count(id) != 0) continue;
    auto run = engine.Describe(id);
    if (!run) continue;
    ++done;
    if (!options.quiet) {
      std::printf("%-12s %-10s %s\n", id.c_str(),
                  std::string(storage::RunStatusName(run->status)).c_str(),
                  run->result_json.c_str());
    }
  }
  std::printf("%d terminal, %d waiting for a person\n", done, waiting);
  co_return waiting == 0 ? 0 : 3;
}

// `refund-agent plan FILE`: a plan over the refund tools, on the embedded engine.
asio::awaitable<int> RunPlanFile(EmbeddedHost& host, const Options& options, Plan plan) {
  if (auto recovered = co_await host.Recover(); !recovered) {
    spdlog::error("recovery failed: {}", recovered.error().ToString());
    co_return 1;
  }
  PlanRunOptions run_options;
  if (options.approve_all) run_options.approve_as = "refund-agent.plan.approve-all";
  run_options.on_line = [](const std::string& line) { std::printf("%s\n", line.c_str()); };
  auto ran = co_await RunPlan(host, plan, std::move(run_options));
  if (!ran) {
    std::fprintf(stderr, "refund-agent: plan %s: %s\n", plan.plan_id.c_str(),
                 ran.error().ToString().c_str());
    co_return ran.error().code() == Errc::kInvalidArgument ? 2 : 1;
  }
  const PlanRunReport& report = ran.value();
  std::printf("\n%-16s %-24s %s\n", "STEP", "TOOL", "STATE");
  for (const PlanStep& step : plan.steps) {
    auto it = report.states.find(step.id);
    const std::string state = it != report.states.end() ? it->second
                              : report.progress.published().count(step.id) ? "published"
                                                                           : "not run";
    std::printf("%-16s %-24s %s\n", step.id.c_str(), PlanStepAction(step).c_str(),
                state.c_str());
  }
  std::printf("plan %s: %s\n", plan.plan_id.c_str(),
              std::string(storage::RunStatusName(report.progress.status())).c_str());
  if (!report.progress.result_json().empty()) {
    std::printf("result %s\n", report.progress.result_json().c_str());
  }
  if (report.progress.status() == storage::RunStatus::kCompleted) co_return 0;
  if (report.progress.finished()) co_return 1;
  std::printf("waiting for a person (run again with --approve-all):\n%s",
              report.progress.WaitingCommands().c_str());
  co_return 3;
}

void AddCommonOptions(CLI::App& app, Options& options) {
  app.add_option("--journal", options.journal, "SQLite journal file")->required();
  app.add_option("--provider", options.provider, "payments provider, http://127.0.0.1:PORT")->required();
  app.add_option("--seed", options.seed, "seed for reasons and card tokens");
  app.add_flag("--approve-all", options.approve_all, "approve every approval request");
  app.add_option("--trace", options.trace, "JSON-lines effect trace (default: JOURNAL.trace.jsonl)");
  app.add_flag("--quiet", options.quiet, "print only the summary line");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"refund-agent: the refund sample on the embedded Reckon engine"};
  Options options;
  std::string plan_file;
  CLI::App* plan_command = app.add_subcommand("plan", "Run an agent plan over the refund tools");
  plan_command->add_option("file", plan_file, "plan file (JSON, docs/PLANS.md)")->required();
  AddCommonOptions(*plan_command, options);
  app.require_subcommand(0, 1);
  AddCommonOptions(app, options);
  app.add_option("--count", options.count, "workflows refund-0 .. refund-(N-1)")->check(CLI::Range(1, 1000000));
  try {
    if (argc > 1 && std::string(argv[1]) == "plan") {
      plan_command->parse(argc - 1, argv + 1);  // its own options only
    } else {
      app.parse(argc, argv);
    }
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  std::optional<Plan> plan;
  if (!plan_file.empty()) {
    auto loaded = ParsePlanFile(plan_file);
    if (!loaded) {
      std::fprintf(stderr, "refund-agent: %s\n", loaded.error().ToString().c_str());
      return 2;
    }
    plan = std::move(loaded).value();
    spdlog::set_level(spdlog::level::warn);  // progress lines are the output
  }
  auto provider = samples::ParseHttpUrl(options.provider);
  if (!provider) {
    std::fprintf(stderr, "refund-agent: --provider: %s\n", provider.error().message().c_str());
    return 2;
  }
  auto logger = spdlog::stderr_color_mt("trace");
  logger->set_pattern("%H:%M:%S.%e %v");
  if (options.quiet || plan) logger->set_level(spdlog::level::warn);
  auto host = EmbeddedHost::Open(options.journal);
  if (!host) {
    std::fprintf(stderr, "refund-agent: %s\n", host.error().ToString().c_str());
    return 1;
  }
  auto trace_file = JsonlTraceSink::Open(options.trace.empty() ? options.journal + ".trace.jsonl"
                                                                : options.trace);
  if (!trace_file) {
    std::fprintf(stderr, "refund-agent: %s\n", trace_file.error().ToString().c_str());
    return 1;
  }
  LogTraceSink trace_log(logger);
  EmbeddedHost& h = *host.value();
  h.AddSink(trace_log);
  h.AddSink(*trace_file.value());
  refund::CardVault vault(options.seed);
  if (auto registered = refund::RegisterRefundTools(h.tools(), provider.value(), vault); !registered) {
    std::fprintf(stderr, "refund-agent: %s\n", registered.error().ToString().c_str());
    return 1;
  }
  (void)h.workflows().Register(refund::kRefundWorkflow, refund::RefundWorkflow);
  (void)RegisterPlanWorkflow(h.workflows());
  auto ran = plan ? h.Run(RunPlanFile(h, options, std::move(*plan))) : h.Run(RunAgent(h, options));
  if (!ran) {
    std::fprintf(stderr, "refund-agent: %s\n", ran.error().ToString().c_str());
    return 1;
  }
  return ran.value();
}
