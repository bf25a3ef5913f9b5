#include "tests/card/card_run.h"

#include <boost/json.hpp>

#include <variant>

#include "reckon/contract/contract_card.h"
#include "reckon/contract/field_path.h"
#include "reckon/worker/workflow_context.h"

namespace reckon::testing {
namespace {

namespace json = boost::json;

Task<WorkflowOutcome> CallOne(WorkflowContext& ctx, json::value input) {
  const json::object& in = input.as_object();
  CallOptions options;
  options.step_id = std::string(in.at("step").as_string());
  std::string tool(in.at("tool").as_string());
  json::value call_input = in.at("input");
  // Secret values may not travel in a workflow's input (the engine refuses them there): the
  // workflow puts them into the call, as code that fetched them would.
  if (const json::value* secrets = in.if_contains("secrets")) {
    for (const auto& [path, value] : secrets->as_object()) SetField(call_input, path, value);
  }
  CallResult result = co_await ctx.Call(std::move(tool), std::move(call_input), options);
  if (!result) co_return result.error();
  co_return json::value(result.value().provider_ref);
}

}  // namespace

void SetField(json::value& input, std::string_view path, const json::value& value) {
  json::value* at = &input;
  for (const std::string& segment : SplitFieldPath(path)) {
    if (!at->is_object()) *at = json::object{};
    at = &at->as_object()[segment];
  }
  *at = value;
}

json::object CardFacts(const ToolContract& contract, const std::string& key) {
  const json::value card = ContractCardJson(contract);
  for (const json::value& q : card.at("questions").as_array()) {
    if (q.at("key").as_string() == key) return q.at("facts").as_object();
  }
  return {};
}

std::unique_ptr<testkit::TestEnv> MakeCardEnv() {
  testkit::TestEnvOptions options;
  options.auto_skip = false;
  options.engine.decider.id_namespace = kCardNamespace;
  auto env = std::make_unique<testkit::TestEnv>(std::move(options));
  if (auto registered = env->workflows().Register("call_one", CallOne); !registered) {
    throw std::runtime_error(registered.error().ToString());
  }
  return env;
}

Result<CardRun> RunCallOne(testkit::TestEnv& env, const std::string& workflow_id,
                           const std::string& tool, const std::string& step, json::value input,
                           json::object secrets) {
  json::object start{{"tool", tool}, {"step", step}, {"input", std::move(input)},
                     {"secrets", std::move(secrets)}};
  RECKON_TRY(storage::RunRef ref, env.Start(workflow_id, "call_one", std::move(start)));
  RECKON_TRY(RunSummary summary, env.RunUntilSettled(workflow_id));
  if (summary.status != storage::RunStatus::kCompleted) {
    return Err(Errc::kFailedPrecondition, "run " + workflow_id + " did not complete: " +
                                              std::string(RunStatusName(summary.status)) + " " +
                                              summary.result_json + summary.stuck_reason);
  }
  RECKON_TRY(testkit::RunHistory history, env.History(workflow_id));
  CardRun run{ref, {}, {}};
  for (const storage::Event& event : history.events) {
    if (const auto* started = std::get_if<storage::WorkflowStarted>(&event.body)) {
      run.started = *started;
    } else if (const auto* prepared = std::get_if<storage::OperationPrepared>(&event.body)) {
      run.prepared = *prepared;
    }
  }
  return run;
}

}  // namespace reckon::testing
