#include "reckon/api/server/http/http_json.h"

#include <algorithm>

#include "reckon/protocol/wire_convert.h"
#include "reckon/protocol/wire_json.h"
#include "reckon/auth/role.h"

namespace reckon::api {

namespace json = boost::json;

Result<std::string> StringField(const json::object& body, std::string_view name) {
  const json::value* value = body.if_contains(name);
  if (value == nullptr || value->is_null()) return std::string();
  if (!value->is_string()) {
    return Err(Errc::kInvalidArgument, "\"" + std::string(name) + "\" must be a string");
  }
  return std::string(value->as_string());
}

std::string JsonField(const json::object& body, std::string_view name) {
  const json::value* value = body.if_contains(name);
  return value == nullptr ? "" : json::serialize(*value);
}

json::object DetailJson(wire::WorkflowDetail::Reader d) {
  json::array operations;
  for (auto o : d.getOperations()) operations.push_back(OperationJson(o));
  json::array children;
  for (auto c : d.getChildren()) {
    children.push_back(json::object{{"step_id", Str(c.getStepId())},
                                    {"workflow_id", Str(c.getWorkflowId())},
                                    {"workflow_type", Str(c.getWorkflowType())},
                                    {"policy", Str(c.getPolicy())},
                                    {"status", Str(c.getStatus())}});
  }
  json::object out{{"summary", SummaryJson(d.getSummary())},
                   {"input", ParsedJsonField(Str(d.getInputJson()))},
                   {"result", ParsedJsonField(Str(d.getResultJson()))},
                   {"started_by", Str(d.getStartedBy())},
                   {"operations", std::move(operations)},
                   {"children", std::move(children)}};
  if (d.hasParent() && d.getParent().getWorkflowId().size() > 0) {
    out["parent"] = json::object{{"workflow_id", Str(d.getParent().getWorkflowId())},
                                 {"run_id", Str(d.getParent().getRunId())},
                                 {"close_policy", Str(d.getParentClosePolicy())}};
  }
  if (d.getCancelRequested()) {
    // Cancelling: the code was told and cleans up before it closes the run.
    out["cancel_requested"] = json::object{{"reason", Str(d.getCancelReason())}};
  }
  return out;
}

json::object PrincipalJson(wire::PrincipalInfo::Reader p) {
  json::array roles, permissions, tools, types;
  const std::string role_text = Str(p.getRole());
  auto parsed = auth::ParseRoles(role_text);
  if (parsed) {
    for (auth::Role role : parsed.value()) roles.emplace_back(auth::RoleName(role));
    for (int i = 0; i <= static_cast<int>(auth::Permission::kWork); ++i) {
      const auto permission = static_cast<auth::Permission>(i);
      if (std::any_of(parsed.value().begin(), parsed.value().end(),
                      [&](auth::Role role) { return auth::RoleGrants(role, permission); })) {
        permissions.emplace_back(auth::PermissionName(permission));
      }
    }
  }
  for (auto t : p.getTools()) tools.emplace_back(Str(t));
  for (auto t : p.getWorkflowTypes()) types.emplace_back(Str(t));
  return json::object{{"name", Str(p.getName())},       {"roles", std::move(roles)},
                      {"permissions", std::move(permissions)}, {"tools", std::move(tools)},
                      {"workflow_types", std::move(types)},
                      {"expires_at_us", p.getExpiresAtUs()}};
}

Result<json::array> EventsJson(capnp::List<wire::HistoryEvent>::Reader events) {
  json::array out;
  for (auto e : events) {
    RECKON_TRY(json::value fields, EventFieldsJson(e.getPayload()));
    out.push_back(json::object{{"seq", e.getSeq()},
                               {"recorded_at_us", e.getRecordedAtUs()},
                               {"type", Str(e.getType())},
                               {"event", std::move(fields)}});
  }
  return out;
}

}  // namespace reckon::api
