#include "reckon/worker/run_inspection.h"

#include <boost/json/serialize.hpp>

#include "reckon/base/jcs.h"

namespace reckon {

namespace json = boost::json;

Result<std::string> InspectRun(const WorkflowFunction& function, const QueryRequest& request) {
  RECKON_TRY(json::value args, ParseStrictJson(request.args_json.empty() ? std::string("null")
                                                                        : request.args_json));
  WorkflowInstance instance(function, request.run.workflow_id, request.run.run_id);
  const std::int64_t now_us = request.history.empty() ? 0 : request.history.back().recorded_at_us;
  // The code's state after the history; the commands it would issue next are not kept.
  RECKON_TRY(instance.Activate(request.history, now_us));
  if (request.validate_update) {
    RECKON_TRY(instance.ValidateUpdate(request.name, args));
    return std::string("null");
  }
  RECKON_TRY(json::value reply, instance.Query(request.name, args));
  return CanonicalizeJson(reply);
}

}  // namespace reckon
