#include "samples/agent/agent_loop.h"

#include <boost/json.hpp>

#include "reckon/base/jcs.h"
#include "reckon/plan/plan.h"
#include "samples/agent/propose_tool.h"
#include "reckon/worker/plan_workflow.h"

namespace reckon::agent {
namespace json = boost::json;

std::string SystemPrompt() {
  return "You are a refunds agent. Reach the user's goal by proposing plan fragments. Reply "
         "with JSON only: either {\"steps\": [...]} where each step is {\"id\", \"tool\", "
         "\"input\", \"depends_on\"?, \"condition\"?} and an input value may be "
         "{\"$ref\": \"steps.<id>.output.<field>\"} of a step of the same fragment, or "
         "{\"done\": true, \"summary\": \"...\"} when the goal is reached. Tools: "
         "lookup_payment {payment_id} -> {payment_id, amount_cents, currency, status}; "
         "send_refund {payment_id, amount_cents, reason} -> {refund_id, ...} (refunds above "
         "10000 cents wait for a person's approval). You will get each fragment's results.";
}

namespace {

json::object Message(const char* role, std::string content) {
  return json::object{{"role", role}, {"content", std::move(content)}};
}

}  // namespace

Task<WorkflowOutcome> AgentLoopWorkflow(WorkflowContext& ctx, json::value input) {
  const json::object* in = input.if_object();
  const json::value* goal = in != nullptr ? in->if_contains("goal") : nullptr;
  if (goal == nullptr || !goal->is_string()) {
    co_return CallFailure{"invalid_input", "the agent loop needs {\"goal\": string}"};
  }
  std::int64_t max_rounds = 8;
  if (const json::value* m = in->if_contains("max_rounds"); m != nullptr && m->is_int64()) {
    max_rounds = std::clamp<std::int64_t>(m->as_int64(), 1, 100);
  }
  std::int64_t rounds_per_run = kRoundsPerRun;
  if (const json::value* m = in->if_contains("rounds_per_run"); m != nullptr && m->is_int64()) {
    rounds_per_run = std::clamp<std::int64_t>(m->as_int64(), 1, 100);
  }
  json::array messages{Message("system", SystemPrompt()),
                       Message("user", std::string(goal->as_string()))};
  json::object results;
  std::int64_t first_round = 1;
  // A run that continues an earlier one picks the conversation up where that one left it.
  if (const json::value* carry = in->if_contains("carry"); carry != nullptr) {
    const json::object* c = carry->if_object();
    const json::value* round = c != nullptr ? c->if_contains("round") : nullptr;
    const json::value* carried_messages = c != nullptr ? c->if_contains("messages") : nullptr;
    const json::value* carried_results = c != nullptr ? c->if_contains("results") : nullptr;
    if (round == nullptr || !round->is_int64() || carried_messages == nullptr ||
        !carried_messages->is_array() || carried_results == nullptr ||
        !carried_results->is_object()) {
      co_return CallFailure{"invalid_input",
                            "the agent loop's \"carry\" needs {\"round\": int, \"messages\": "
                            "[...], \"results\": {...}}"};
    }
    first_round = round->as_int64() + 1;
    messages = carried_messages->as_array();
    results = carried_results->as_object();
  }
  // A person can ask the running agent how far it got (query "progress"), and give it a new
  // instruction and get its answer back (update "instruct"); see the header.
  std::int64_t round_now = first_round - 1;  // the round under way (0 before the first)
  std::int64_t instructions = 0;             // instructions this run accepted
  bool closing = false;  // the run is about to hand over or finish: no new instructions
  ctx.OnQuery("progress", [&](const json::value&) -> Result<json::value> {
    json::value last_reply = nullptr;
    for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
      if (it->as_object().at("role") == "assistant") {
        last_reply = it->as_object().at("content");
        break;
      }
    }
    return json::value(json::object{{"round", round_now},
                                    {"max_rounds", max_rounds},
                                    {"rounds_per_run", rounds_per_run},
                                    {"messages", messages.size()},
                                    {"instructions", instructions},
                                    {"closing", closing},
                                    {"last_reply", std::move(last_reply)}});
  });
  auto validate = [&closing](const json::value& args) -> Result<void> {
    const json::object* a = args.if_object();
    const json::value* text = a != nullptr ? a->if_contains("instruction") : nullptr;
    if (text == nullptr || !text->is_string() || text->as_string().empty() ||
        text->as_string().size() > 4000) {
      return Err(Errc::kInvalidArgument,
                 "instruct takes {\"instruction\": a text of 1 to 4000 bytes}");
    }
    if (closing) {
      return Err(Errc::kUnavailable,
                 "the agent is handing over to its next run or finishing; send the "
                 "instruction again in a moment");
    }
    return Ok();
  };
  auto instruct = [&ctx, &messages, &instructions](json::value args) -> Task<WorkflowOutcome> {
    ++instructions;
    const std::string text(args.at("instruction").as_string());
    messages.push_back(Message("user", "New instruction from a person: " + text +
                                           " Take it into account from now on, and reply to "
                                           "it as you would to the goal."));
    CallOptions options;
    options.step_id = "instruct-model";  // "update:<update id>/instruct-model"
    auto ask = ctx.Call(kProposeTool, json::object{{"messages", messages}}, options);
    CallResult reply = co_await ask;
    if (!reply) co_return reply.error();
    std::string content(reply.value().output.at("content").as_string());
    messages.push_back(Message("assistant", content));
    co_return json::value(json::object{{"answer", std::move(content)}});
  };
  ctx.OnUpdate("instruct", validate, instruct);
  for (std::int64_t round = first_round; round <= max_rounds; ++round) {
    round_now = round;
    if (round > first_round && (round - 1) % rounds_per_run == 0) {
      // Every rounds_per_run rounds the run hands over to a new one, so that no history grows
      // without bound; the conversation so far is the next run's input. Instructions accepted
      // by this run are answered by it first; new ones are refused meanwhile.
      closing = true;
      co_await ctx.AllUpdatesDone();
      json::object next = *in;
      next["carry"] = json::object{
          {"round", round - 1}, {"messages", messages}, {"results", results}};
      co_return ctx.ContinueAsNew(std::move(next));
    }
    const std::string prefix = "r" + std::to_string(round);
    CallOptions options;
    options.step_id = prefix + "-model";
    auto ask = ctx.Call(kProposeTool, json::object{{"messages", messages}}, options);
    CallResult reply = co_await ask;
    if (!reply) co_return reply.error();
    const std::string content(reply.value().output.at("content").as_string());
    messages.push_back(Message("assistant", content));

    auto parsed = ParseStrictJson(content);
    const json::object* fragment = parsed ? parsed.value().if_object() : nullptr;
    if (fragment == nullptr) {
      messages.push_back(Message("user", "Your reply was not a JSON object (" +
                                             (parsed ? std::string("wrong type")
                                                     : parsed.error().message()) +
                                             "). Reply with {\"steps\": [...]} or "
                                             "{\"done\": true, \"summary\": \"...\"}."));
      continue;
    }
    if (const json::value* done = fragment->if_contains("done");
        done != nullptr && done->is_bool() && done->as_bool()) {
      closing = true;
      co_await ctx.AllUpdatesDone();
      const json::value* summary = fragment->if_contains("summary");
      co_return json::object{
          {"summary", summary != nullptr && summary->is_string() ? *summary : json::value("")},
          {"rounds", round},
          {"results", results}};
    }
    json::object plan_json{{"plan_id", ctx.workflow_id() + "-" + prefix}};
    if (const json::value* steps = fragment->if_contains("steps")) plan_json["steps"] = *steps;
    auto plan = ParsePlanJson(plan_json);
    if (!plan) {
      messages.push_back(Message("user", "That fragment is invalid; nothing ran. " +
                                             plan.error().message()));
      continue;
    }
    auto run = RunPlanSteps(ctx, std::move(plan).value(), prefix + "-");
    PlanOutcome outcome = co_await std::move(run);
    results[prefix] = outcome.steps;
    messages.push_back(Message("user", "Results of your fragment: " + json::serialize(outcome.steps)));
  }
  co_return CallFailure{"max_rounds", "the model did not reach the goal in " +
                                          std::to_string(max_rounds) + " rounds"};
}

}  // namespace reckon::agent
