#include "reckon/worker/testing/test_workflows.h"

#include <boost/json/object.hpp>

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

json::value CallOnceInput(const std::string& tool, json::value tool_input,
                          const std::string& step_id) {
  json::object input{{"tool", tool}, {"input", std::move(tool_input)}};
  if (!step_id.empty()) input["step"] = step_id;
  return input;
}

}  // namespace reckon::testing
