// refund-agent: the refund sample on the embedded engine. Starts (or resumes) workflows
// refund-0 .. refund-(N-1), where refund-i refunds payment pay-i, and exits when every one is
// terminal. Killed at any moment and started again with the same arguments, it resumes them
// from the journal and starts no new ones.
//
//   refund-agent --journal PATH --provider URL --count N --seed S [--approve-all]
//                [--trace PATH] [--quiet]
//
// Exit codes: 0 all workflows terminal; 3 the rest wait for a person (an approval or a
// needs_human operation; see the printed list); 1 the engine stopped (restart it); 2 bad usage.
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
#include <set>

#include "engine/engine.h"
#include "samples/common/http_url.h"
#include "samples/refund/refund_tools.h"
#include "samples/refund/refund_workflow.h"
#include "storage/journal.h"
#include "worker/local_worker.h"

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

// Approves every pending approval when --approve-all is set, as a person would from the CLI.
asio::awaitable<void> ApprovePending(Engine& engine, std::set<std::string>& approved) {
  for (const RunSummary& run : engine.Runs()) {
    for (const OperationView& op : run.operations) {
      if (op.state != OperationState::kAwaitingApproval || approved.count(op.approval_id)) {
        continue;
      }
      approved.insert(op.approval_id);
      ApprovalDecision decision;
      decision.approval_id = op.approval_id;
      decision.expected_intent_hash = op.fingerprint;
      decision.granted = true;
      decision.decided_by = "refund-agent --approve-all";
      auto result = co_await engine.DecideApproval(run.ref.workflow_id, std::move(decision));
      if (!result) spdlog::warn("approval {} refused: {}", op.approval_id, result.error().ToString());
    }
  }
}

asio::awaitable<int> RunAgent(Engine& engine, storage::Journal& journal, const Options& options) {
  auto executor = co_await asio::this_coro::executor;
  auto recovered = co_await engine.Recover();
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
  std::set<std::string> approved;
  asio::steady_timer tick(executor);
  while (!engine.failed()) {
    if (options.approve_all) co_await ApprovePending(engine, approved);
    if (engine.BusyRuns() == 0) break;
    tick.expires_after(std::chrono::milliseconds(5));
    co_await tick.async_wait(asio::use_awaitable);
  }
  if (engine.failed()) co_return 1;
  int done = 0, waiting = 0;
  for (const RunSummary& run : engine.Runs()) {
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
    for (const OperationView& op : run.operations) {
      if (IsTerminal(op.state)) continue;
      std::printf("%-12s waiting    %s %s (%s)\n", run.ref.workflow_id.c_str(),
                  op.operation_id.c_str(), std::string(OperationStateName(op.state)).c_str(),
                  op.state == OperationState::kAwaitingApproval ? op.approval_id.c_str()
                                                                  : op.failure_message.c_str());
    }
    if (!run.stuck_reason.empty()) std::printf("%-12s stopped    %s\n", run.ref.workflow_id.c_str(), run.stuck_reason.c_str());
  }
  // Workflows that finished in an earlier life of the agent are only in the journal (the
  // engine reads the journal on this same thread, so this read does not race its commits).
  for (int i = 0; i < options.count; ++i) {
    const std::string id = "refund-" + std::to_string(i);
    if (engine.Describe(id)) continue;
    auto run = journal.FindLatestRun(id);
    if (!run || !run.value()) continue;
    ++done;
    if (!options.quiet) {
      std::printf("%-12s %-10s (finished before this run of the agent)\n", id.c_str(),
                  std::string(storage::RunStatusName(run.value()->status)).c_str());
    }
  }
  std::printf("%d terminal, %d waiting for a person\n", done, waiting);
  co_return waiting == 0 ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"refund-agent: the refund sample on the embedded Reckon engine"};
  Options options;
  app.add_option("--journal", options.journal, "SQLite journal file")->required();
  app.add_option("--provider", options.provider, "payments provider, http://127.0.0.1:PORT")->required();
  app.add_option("--count", options.count, "workflows refund-0 .. refund-(N-1)")->check(CLI::Range(1, 1000000));
  app.add_option("--seed", options.seed, "seed for reasons and card tokens");
  app.add_flag("--approve-all", options.approve_all, "approve every approval request");
  app.add_option("--trace", options.trace, "JSON-lines effect trace (default: JOURNAL.trace.jsonl)");
  app.add_flag("--quiet", options.quiet, "print only the summary line");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  auto provider = samples::ParseHttpUrl(options.provider);
  if (!provider) {
    std::fprintf(stderr, "refund-agent: --provider: %s\n", provider.error().message().c_str());
    return 2;
  }
  auto logger = spdlog::stderr_color_mt("trace");
  logger->set_pattern("%H:%M:%S.%e %v");
  if (options.quiet) logger->set_level(spdlog::level::warn);
  auto journal = storage::Journal::Open(options.journal);
  if (!journal) {
    std::fprintf(stderr, "refund-agent: %s\n", journal.error().ToString().c_str());
    return 1;
  }
  auto trace = EffectTrace::Create(logger, options.trace.empty() ? options.journal + ".trace.jsonl"
                                                                 : options.trace);
  if (!trace) {
    std::fprintf(stderr, "refund-agent: %s\n", trace.error().ToString().c_str());
    return 1;
  }
  ToolRegistry tools;
  WorkflowRegistry workflows;
  refund::CardVault vault(options.seed);
  if (auto registered = refund::RegisterRefundTools(tools, provider.value(), vault); !registered) {
    std::fprintf(stderr, "refund-agent: %s\n", registered.error().ToString().c_str());
    return 1;
  }
  (void)workflows.Register(refund::kRefundWorkflow, refund::RefundWorkflow);
  asio::io_context io;
  SystemClock clock;
  LocalWorker worker(workflows, tools);
  Engine engine(io.get_executor(), *journal.value(), tools.contracts(), worker, worker, clock,
                trace.value().get());
  int exit_code = 1;
  asio::co_spawn(io, RunAgent(engine, *journal.value(), options), [&](std::exception_ptr e, int code) {
    exit_code = e ? 1 : code;
    io.stop();
  });
  io.run();
  return exit_code;
}
