// Roles and permissions of server mode (docs/SECURITY.md has the table and the threat model).
//
// Every protocol method needs exactly one Permission (api/server/methods.h, the method table,
// says which); each of a principal's roles grants a fixed set of them, deny by default:
//   admin     manage_principals                 (tokens: create, list, revoke)
//   operator  start, signal, cancel, read
//   approver  approve (approve and deny), resolve, read; optionally scoped to tool names
//   reader    read                              (list, show, history, trace, contracts, watch)
//   worker    work                              (register, poll, complete, heartbeat); scoped
//                                               to the workflow types and tools it may host
// Operators and approvers read too: an approver must see the intent it approves, an operator
// the run it started. Admin holds nothing else: it runs no workflow and approves nothing
// (though it can create a token that does: the threat model says so). A principal may hold
// several roles ("operator,approver": a person who starts runs and approves others' runs);
// separation of duties then keeps them from approving their own (engine/decider.h).
//
// Plain values; no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reckon/base/error.h"

namespace reckon::auth {

enum class Role { kAdmin, kOperator, kApprover, kReader, kWorker };

enum class Permission {
  kManagePrincipals,
  kStart,
  kSignal,
  kCancel,
  kApprove,
  kResolve,
  kRead,
  kWork,
};

// "admin", "operator", "approver", "reader", "worker".
std::string_view RoleName(Role role);
std::optional<Role> ParseRole(std::string_view name);
// "operator,approver" -> the roles, in the order given, without repeats. Errc::
// kInvalidArgument naming an unknown role, or for an empty list.
Result<std::vector<Role>> ParseRoles(std::string_view text);
// The roles as ParseRoles reads them: "operator,approver".
std::string RolesText(const std::vector<Role>& roles);

// "manage_principals", "start", "signal", "cancel", "approve", "resolve", "read", "work".
std::string_view PermissionName(Permission permission);

bool RoleGrants(Role role, Permission permission);

// The roles that grant `permission`, derived from RoleGrants, for refusal messages:
// "operator", "operator, approver or reader".
std::string RolesGranting(Permission permission);

}  // namespace reckon::auth
