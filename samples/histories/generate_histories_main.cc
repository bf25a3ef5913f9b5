// reckon-sample-histories: writes the saved histories that samples/histories/
// replay_histories_test.cc replays, one run per file (samples/histories/README.md says when
// to regenerate them). Each run goes on the embedded engine over a scratch journal, with stand-in
// tools that answer as samples/payments_provider does (a replay never calls tools, so only what
// they answered matters) and a clock that starts at a fixed time and moves 1 ms per reading, so
// the files come out the same each time the code is the same.
//
//   reckon-sample-histories --out samples/histories
//
// Runs: refund-completed, refund-awaiting-approval (over the 100.00 approval threshold, so it
// waits for a person: a run in flight), agent-loop-completed (the default script), and
// agent-loop-awaiting-approval (a script whose refund needs approval).
#include <CLI/CLI.hpp>
#include <boost/json.hpp>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "reckon/storage/history_file.h"
#include "reckon/host/embedded_host.h"
#include "samples/agent/agent_loop.h"
#include "samples/agent/default_script.h"
#include "samples/agent/propose_tool.h"
#include "samples/agent/scripted_model.h"
#include "samples/refund/refund_contracts.h"
#include "samples/refund/refund_workflow.h"

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace reckon;

// 2026-01-01T00:00:00Z, then 1 ms per reading.
class SteppingClock final : public Clock {
 public:
  std::int64_t NowMicros() override { return now_us_ += 1000; }

 private:
  std::int64_t now_us_ = 1767225600000000;
};

// The payments provider's answers: every payment is for `amount_cents` of its id's table entry.
std::int64_t AmountOf(const std::string& payment_id) {
  if (payment_id == "pay-big") return 25000;
  if (payment_id == "pay-8") return 1200;
  if (payment_id == "pay-9") return 3400;
  return 1500;
}

Result<void> RegisterStandInTools(ToolRegistry& tools) {
  auto lookup = [](json::value input, ToolCallContext) -> asio::awaitable<AttemptOutcome> {
    const std::string id(input.at("payment_id").as_string());
    co_return ToolSucceeded(json::object{{"payment_id", id},
                                         {"amount_cents", AmountOf(id)},
                                         {"currency", "usd"},
                                         {"status", "succeeded"}});
  };
  RECKON_TRY(tools.Register(Tool{refund::LookupPaymentContract(), std::move(lookup), {}}));
  auto refund = [](json::value input, ToolCallContext context) -> asio::awaitable<AttemptOutcome> {
    const std::string refund_id = "re_" + context.operation_id.substr(0, 12);
    co_return ToolSucceeded(json::object{{"refund_id", refund_id},
                                         {"payment_id", input.at("payment_id")},
                                         {"amount_cents", input.at("amount_cents")},
                                         {"status", "succeeded"}},
                            refund_id);
  };
  auto reconcile = [](json::value, ToolCallContext) -> asio::awaitable<ReconcileOutcome> {
    co_return ReconcileOutcome{ReconcileVerdict::kNotFound, nullptr, "", ""};
  };
  return tools.Register(
      Tool{refund::SendRefundContract(), std::move(refund), std::move(reconcile)});
}

struct Recording {
  std::string name;  // the file's name without .json
  std::string workflow_id;
  std::string type;
  json::value input;
  std::vector<std::string> script;  // the model's replies (agent loop)
};

asio::awaitable<Result<storage::HistoryFile>> Drive(EmbeddedHost& host, const Recording& r) {
  RECKON_CO_TRY(co_await host.Recover());
  auto start = host.engine().Start(r.workflow_id, r.type, r.input);
  RECKON_CO_TRY(storage::RunRef ref, co_await std::move(start));
  auto settle = host.UntilSettled(r.workflow_id);
  RECKON_CO_TRY(co_await std::move(settle));
  co_return storage::ReadLatestHistory(host.journal(), ref.workflow_id);
}

// One run on a host and journal of its own, so each agent loop has its own script.
Result<storage::HistoryFile> Record(const std::filesystem::path& scratch, const Recording& r) {
  SteppingClock clock;
  EmbeddedHostOptions options;
  options.clock = &clock;
  RECKON_TRY(auto host, EmbeddedHost::Open((scratch / (r.name + ".db")).string(), options));
  agent::ScriptedModel model(r.script);
  RECKON_TRY(RegisterStandInTools(host->tools()));
  RECKON_TRY(host->tools().Register(agent::ProposeTool(model)));
  RECKON_TRY(host->workflows().Register(refund::kRefundWorkflow, refund::RefundWorkflow));
  RECKON_TRY(host->workflows().Register(agent::kAgentLoopWorkflow, agent::AgentLoopWorkflow));
  return host->Run(Drive(*host, r));
}

std::vector<Recording> Recordings() {
  const json::object refund_input{{"payment_id", "pay-7"}, {"reason", "duplicate charge"}};
  const json::object big_input{{"payment_id", "pay-big"}, {"reason", "order never arrived"}};
  const json::object loop_input{{"goal", agent::kDefaultGoal}, {"max_rounds", 8}};
  const json::object big_loop_input{
      {"goal", "Customer pay-big was charged for an order that never arrived: refund it."},
      {"max_rounds", 8}};
  std::vector<std::string> big_script = {
      R"({"steps": [{"id": "lookup", "tool": "lookup_payment",
                     "input": {"payment_id": "pay-big"}}]})",
      R"({"steps": [{"id": "refund", "tool": "send_refund",
                     "input": {"payment_id": "pay-big", "amount_cents": 25000,
                               "reason": "order never arrived"}}]})",
      R"({"done": true, "summary": "Refunded 250.00 on pay-big."})"};
  return {
      {"refund-completed", "refund-pay-7", refund::kRefundWorkflow, refund_input, {}},
      {"refund-awaiting-approval", "refund-pay-big", refund::kRefundWorkflow, big_input, {}},
      {"agent-loop-completed", "agent-1", agent::kAgentLoopWorkflow, loop_input,
       agent::DefaultScript()},
      {"agent-loop-awaiting-approval", "agent-2", agent::kAgentLoopWorkflow, big_loop_input,
       big_script},
  };
}

}  // namespace

int main(int argc, char** argv) {
  std::string out;
  CLI::App app("reckon-sample-histories: record the sample runs' histories for the replay test",
               "reckon-sample-histories");
  app.add_option("--out", out, "directory to write the history files into")->required();
  CLI11_PARSE(app, argc, argv);
  std::error_code ec;
  const auto scratch = std::filesystem::temp_directory_path(ec) /
                       ("reckon-sample-histories-" + std::to_string(::getpid()));
  std::filesystem::create_directories(scratch, ec);
  if (ec) {
    std::fprintf(stderr, "reckon-sample-histories: cannot create %s: %s\n", scratch.c_str(),
                 ec.message().c_str());
    return 1;
  }
  int code = 0;
  for (const Recording& r : Recordings()) {
    auto history = Record(scratch, r);
    const std::string path = (std::filesystem::path(out) / (r.name + ".json")).string();
    Result<void> written = history ? storage::WriteHistoryFile(path, history.value())
                                   : Result<void>(history.error());
    if (!written) {
      std::fprintf(stderr, "reckon-sample-histories: %s: %s\n", r.name.c_str(),
                   written.error().ToString().c_str());
      code = 1;
      continue;
    }
    std::printf("wrote %s (%zu events)\n", path.c_str(), history.value().events.size());
  }
  std::filesystem::remove_all(scratch, ec);
  return code;
}
