// Principal: who a request comes from, as the server established it from the request's
// credential (api/server/authorizer.h): a name, its roles, and the scopes that narrow it.
//
// Scopes: an approver may be limited to tool names; a worker to the workflow types and tools
// it may host. An empty list means no limit of that kind. Stored as "tool:NAME" and
// "workflow:NAME" (storage::PrincipalRow::scopes).
//
// Plain values; no I/O.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "reckon/auth/role.h"
#include "reckon/base/error.h"

namespace reckon::auth {

struct Principal {
  std::string name;
  std::vector<Role> roles;
  std::vector<std::string> tools;           // empty: any tool
  std::vector<std::string> workflow_types;  // empty: any workflow type
  std::int64_t expires_at_us = 0;           // 0: never
  // The development principal of a server started with --insecure-dev: every permission.
  bool development = false;

  bool Has(Role role) const { return std::find(roles.begin(), roles.end(), role) != roles.end(); }
  // Whether one of its roles grants `permission` (the development principal holds them all).
  bool Grants(Permission permission) const {
    if (development) return true;
    for (Role role : roles) {
      if (RoleGrants(role, permission)) return true;
    }
    return false;
  }
  bool AllowsTool(const std::string& tool) const {
    return tools.empty() || std::find(tools.begin(), tools.end(), tool) != tools.end();
  }
  bool AllowsWorkflowType(const std::string& type) const {
    return workflow_types.empty() ||
           std::find(workflow_types.begin(), workflow_types.end(), type) != workflow_types.end();
  }
};

// Scopes as stored ("tool:send_refund", "workflow:refund") and back. Errc::kInvalidArgument
// for a stored scope of another kind.
std::vector<std::string> ScopesOf(const Principal& principal);
Result<void> ApplyScopes(const std::vector<std::string>& scopes, Principal& principal);

}  // namespace reckon::auth
