#include "reckon/host/testing/test_workflows.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

namespace reckon::testing {

namespace json = boost::json;

Task<WorkflowOutcome> CallOnce(WorkflowContext& ctx, json::value input) {
  const json::object& in = input.as_object();
  CallOptions options;
  if (const json::value* step = in.if_contains("step")) {
    options.step_id = std::string(step->as_string());
  }
  std::string tool(in.at("tool").as_string());
  auto call = ctx.Call(std::move(tool), in.at("input"), std::move(options));
  CallResult result = co_await call;
  if (!result) co_return result.error();
  co_return json::object{{"ref", result.value().provider_ref}, {"output", result.value().output}};
}

Task<WorkflowOutcome> StartChildOnce(WorkflowContext& ctx, json::value input) {
  const json::object& in = input.as_object();
  std::string type(in.at("type").as_string());
  std::string id(in.at("id").as_string());
  auto child = ctx.StartChild(std::move(type), std::move(id), in.at("input"));
  WorkflowOutcome result = co_await child;
  if (!result) co_return result.error();
  co_return json::object{{"child", result.value()}};
}

json::value CallOnceInput(const std::string& tool, json::value tool_input,
                          const std::string& step_id) {
  json::object input{{"tool", tool}, {"input", std::move(tool_input)}};
  if (!step_id.empty()) input["step"] = step_id;
  return input;
}

Task<WorkflowOutcome> SleepThenCall(WorkflowContext& ctx, json::value input) {
  const json::object& in = input.as_object();
  auto nap = ctx.Sleep(std::chrono::milliseconds(in.at("sleep_ms").to_number<std::int64_t>()));
  co_await nap;
  std::string tool(in.at("tool").as_string());
  auto call = ctx.Call(std::move(tool), in.at("input"));
  CallResult result = co_await call;
  if (!result) co_return result.error();
  co_return json::object{{"ref", result.value().provider_ref}, {"output", result.value().output}};
}

json::value SleepThenCallInput(std::chrono::milliseconds sleep, const std::string& tool,
                               json::value tool_input) {
  return json::object{
      {"sleep_ms", sleep.count()}, {"tool", tool}, {"input", std::move(tool_input)}};
}

Task<WorkflowOutcome> SignalThenCall(WorkflowContext& ctx, json::value input) {
  const json::object& in = input.as_object();
  std::string name(in.at("signal").as_string());
  auto signal = ctx.WaitSignal(std::move(name));
  std::string payload = co_await signal;
  std::string tool(in.at("tool").as_string());
  auto call = ctx.Call(std::move(tool), in.at("input"));
  CallResult result = co_await call;
  if (!result) co_return result.error();
  co_return json::object{{"signal", payload},
                         {"ref", result.value().provider_ref},
                         {"output", result.value().output}};
}

json::value SignalThenCallInput(const std::string& signal, const std::string& tool,
                                json::value tool_input) {
  return json::object{{"signal", signal}, {"tool", tool}, {"input", std::move(tool_input)}};
}

Task<WorkflowOutcome> UndoOnCancel(WorkflowContext& ctx, json::value input) {
  const json::object& in = input.as_object();
  const std::string tool(in.at("tool").as_string());
  auto call = ctx.Call(tool, in.at("input"));
  CallResult done = co_await call;
  if (!done) co_return done.error();
  bool cancelled = false;
  std::string payload;
  try {
    auto signal = ctx.WaitSignal(std::string(in.at("signal").as_string()));
    payload = co_await signal;
  } catch (const WorkflowCancelledError&) {
    cancelled = true;  // no co_await in a handler: undo below
  }
  if (!cancelled) co_return json::value(json::object{{"signal", payload}});
  auto undo = ctx.Call(tool, in.at("input"), CallOptions{.step_id = "undo"});
  CallResult undone = co_await undo;
  if (!undone) co_return undone.error();
  co_return ctx.Cancelled();
}

Task<WorkflowOutcome> ContinueN(WorkflowContext& ctx, json::value input) {
  const json::object& in = input.as_object();
  const std::int64_t n = in.at("n").as_int64();
  if (n >= in.at("rounds").as_int64()) co_return json::value(json::object{{"n", n}});
  json::object next{{"n", n + 1}, {"rounds", in.at("rounds")}};
  co_return ctx.ContinueAsNew(std::move(next));
}

Task<WorkflowOutcome> CallThenPublish(WorkflowContext& ctx, json::value input) {
  const json::object& in = input.as_object();
  std::string tool(in.at("tool").as_string());
  auto call = ctx.Call(std::move(tool), in.at("input"));
  CallResult result = co_await call;
  if (!result) co_return result.error();
  const std::string subject(in.at("subject").as_string());
  const json::value* count = in.if_contains("messages");
  const std::int64_t messages = count != nullptr ? count->to_number<std::int64_t>() : 1;
  json::array ids;
  for (std::int64_t n = 1; n <= messages; ++n) {
    const std::string payload = json::serialize(json::object{
        {"workflow", ctx.workflow_id()}, {"n", n}, {"ref", result.value().provider_ref}});
    auto published = ctx.Publish(subject, payload);
    if (!published) co_return CallFailure{"publish_failed", published.error().message()};
    ids.emplace_back(published.value());
  }
  co_return json::object{{"ref", result.value().provider_ref}, {"message_ids", std::move(ids)}};
}

json::value CallThenPublishInput(const std::string& tool, json::value tool_input,
                                 const std::string& subject, int messages) {
  return json::object{{"tool", tool},
                      {"input", std::move(tool_input)},
                      {"subject", subject},
                      {"messages", messages}};
}

Task<WorkflowOutcome> Ledger(WorkflowContext& ctx, json::value) {
  std::int64_t total = 0;
  ctx.OnQuery("total", [&total](const json::value&) -> Result<json::value> {
    return json::value(json::object{{"total", total}});
  });
  auto validate = [](const json::value& args) -> Result<void> {
    const json::object* in = args.if_object();
    const json::value* n = in == nullptr ? nullptr : in->if_contains("n");
    if (n == nullptr || !n->is_int64() || n->as_int64() <= 0) {
      return Err(Errc::kInvalidArgument,
                 "add takes {\"n\": a positive whole number}, not " + json::serialize(args));
    }
    return Ok();
  };
  auto add = [&ctx, &total](json::value args) -> Task<WorkflowOutcome> {
    const json::object& in = args.as_object();
    const std::int64_t n = in.at("n").as_int64();
    if (const json::value* hold = in.if_contains("hold"); hold && hold->is_bool() && hold->as_bool()) {
      auto release = ctx.WaitSignal("release");
      co_await release;
    }
    json::object charge_input{{"account", "acct-7"}, {"amount_cents", n}};
    auto charge = ctx.Call("charge", std::move(charge_input));
    CallResult charged = co_await charge;
    if (!charged) co_return charged.error();
    total += n;
    co_return json::value(json::object{{"total", total}});
  };
  ctx.OnUpdate("add", validate, add);
  auto stop = ctx.WaitSignal("stop");
  co_await stop;
  co_return json::value(json::object{{"total", total}});
}

Result<void> RegisterTestWorkflows(WorkflowRegistry& workflows) {
  RECKON_TRY(workflows.Register(kLedger, Ledger));
  RECKON_TRY(workflows.Register(kUndoOnCancel, UndoOnCancel));
  RECKON_TRY(workflows.Register(kContinueN, ContinueN));
  RECKON_TRY(workflows.Register(kCallOnce, CallOnce));
  RECKON_TRY(workflows.Register(kSleepThenCall, SleepThenCall));
  RECKON_TRY(workflows.Register(kCallThenPublish, CallThenPublish));
  RECKON_TRY(workflows.Register(kStartChild, StartChildOnce));
  return workflows.Register(kSignalThenCall, SignalThenCall);
}

}  // namespace reckon::testing
