#include "tests/sim/sim_tools.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <optional>
#include <stdexcept>

#include "reckon/host/testing/fast_contracts.h"
#include "reckon/worker/workflow_context.h"

namespace reckon::sim {

namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

struct SimTool {
  const char* name;
  SideEffect side_effect;
};
constexpr SimTool kTools[] = {
    {"sim.read", SideEffect::kReadOnly},
    {"sim.idem", SideEffect::kIdempotentWrite},
    {"sim.dedup", SideEffect::kDeduplicatedWrite},
    {"sim.pay", SideEffect::kNonRepeatableWrite},
    {"sim.pay_manual", SideEffect::kNonRepeatableWrite},
    {"sim.approve", SideEffect::kNonRepeatableWrite},
};

boost::asio::awaitable<AttemptOutcome> NotHere(json::value, ToolCallContext) {
  co_return ToolFailed(FailureKind::kDefinitive, "not_here",
                       "simulated tools run on the SimFleet's workers");
}
boost::asio::awaitable<ReconcileOutcome> NotHereLookup(json::value, ToolCallContext) {
  co_return ReconcileOutcome{};
}

ToolContract ContractOf(const SimTool& tool) {
  ToolContract c = testing::FastContract(tool.name, tool.side_effect);
  if (std::string(tool.name) == "sim.pay_manual") {
    c.reconcile = {.mode = ReconcileMode::kNeedsHuman};
  }
  if (std::string(tool.name) == "sim.approve") {
    c.approval.kind = ApprovalKind::kAlways;
    c.approval.grant_ttl = 60s;
    c.approval.wait_deadline = 1s;
  }
  return c;
}

// One group's call: the tool and its input.
WorkflowContext::CallAwaiter Issue(WorkflowContext& ctx, const json::value& call) {
  const json::object& c = call.as_object();
  return ctx.Call(std::string(c.at("tool").as_string()), c.at("input"));
}

Task<WorkflowOutcome> SimAgent(WorkflowContext& ctx, json::value input) {
  std::int64_t ok = 0;
  std::int64_t failed = 0;
  std::int64_t signalled = 0;
  for (const json::value& group : input.at("groups").as_array()) {
    const json::object& g = group.as_object();
    if (const json::value* sleep = g.if_contains("sleep_ms")) {
      co_await ctx.Sleep(std::chrono::milliseconds(sleep->as_int64()));
    }
    if (const json::value* wait = g.if_contains("wait_signal_ms")) {
      std::optional<std::string> got =
          co_await ctx.WaitSignal("go", std::chrono::milliseconds(wait->as_int64()));
      if (got) ++signalled;
    }
    const json::array& calls = g.at("calls").as_array();
    auto first = Issue(ctx, calls.at(0));
    std::optional<WorkflowContext::CallAwaiter> second;
    if (calls.size() > 1) second.emplace(Issue(ctx, calls.at(1)));
    CallResult a = co_await first;
    (a ? ok : failed) += 1;
    if (second) {
      CallResult b = co_await *second;
      (b ? ok : failed) += 1;
    }
  }
  co_return json::object{{"ok", ok}, {"failed", failed}, {"signalled", signalled}};
}

}  // namespace

void RegisterSimTools(ToolRegistry& tools) {
  for (const SimTool& tool : kTools) {
    ToolContract contract = ContractOf(tool);
    const bool lookup = contract.reconcile.mode == ReconcileMode::kLookup;
    auto registered = tools.Register(
        Tool{std::move(contract), NotHere, lookup ? ToolReconcile(NotHereLookup) : nullptr});
    if (!registered) {
      throw std::logic_error("sim tool " + std::string(tool.name) + ": " +
                             registered.error().ToString());
    }
  }
}

void RegisterSimWorkflows(WorkflowRegistry& workflows) {
  auto registered = workflows.Register(kSimAgent, SimAgent);
  if (!registered) throw std::logic_error(registered.error().ToString());
}

SideEffect SideEffectOfSimTool(const std::string& tool) {
  for (const SimTool& t : kTools) {
    if (tool == t.name) return t.side_effect;
  }
  throw std::logic_error("no sim tool " + tool);
}

json::value RandomAgentInput(SimRng& rng, int run) {
  // Weighted towards the writes whose promise is at stake.
  static constexpr int kWeights[] = {1, 1, 2, 4, 2, 2};
  int total = 0;
  for (int w : kWeights) total += w;
  json::array groups;
  const int group_count = static_cast<int>(rng.Between(1, 4));
  for (int g = 0; g < group_count; ++g) {
    json::object group;
    if (rng.Chance(0.2)) group["sleep_ms"] = rng.Between(1, 200);
    if (rng.Chance(0.2)) group["wait_signal_ms"] = rng.Between(20, 400);
    json::array calls;
    const int call_count = static_cast<int>(rng.Between(1, 2));
    for (int c = 0; c < call_count; ++c) {
      int pick = static_cast<int>(rng.Below(static_cast<std::uint64_t>(total)));
      std::size_t tool = 0;
      while (pick >= kWeights[tool]) pick -= kWeights[tool++];
      calls.push_back(json::object{
          {"tool", kTools[tool].name},
          {"input", testing::FastInput("acct-" + std::to_string(run), 100 * (g + 1) + c)}});
    }
    group["calls"] = std::move(calls);
    groups.push_back(std::move(group));
  }
  return json::object{{"groups", std::move(groups)}};
}

}  // namespace reckon::sim
