#include "reckon/auth/role.h"

namespace reckon::auth {

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kAdmin: return "admin";
    case Role::kOperator: return "operator";
    case Role::kApprover: return "approver";
    case Role::kReader: return "reader";
    case Role::kWorker: return "worker";
  }
  return "unknown_role";
}

std::optional<Role> ParseRole(std::string_view name) {
  for (Role role : {Role::kAdmin, Role::kOperator, Role::kApprover, Role::kReader, Role::kWorker}) {
    if (RoleName(role) == name) return role;
  }
  return std::nullopt;
}

Result<std::vector<Role>> ParseRoles(std::string_view text) {
  std::vector<Role> roles;
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view name = text.substr(0, comma);
    auto role = ParseRole(name);
    if (!role) {
      return Err(Errc::kInvalidArgument,
                 "role '" + std::string(name) +
                     "' is not one of admin, operator, approver, reader, worker (several: "
                     "operator,approver)");
    }
    bool seen = false;
    for (Role r : roles) seen = seen || r == *role;
    if (!seen) roles.push_back(*role);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return roles;
}

std::string RolesText(const std::vector<Role>& roles) {
  std::string out;
  for (Role role : roles) {
    if (!out.empty()) out += ',';
    out += RoleName(role);
  }
  return out;
}

std::string_view PermissionName(Permission permission) {
  switch (permission) {
    case Permission::kManagePrincipals: return "manage_principals";
    case Permission::kStart: return "start";
    case Permission::kSignal: return "signal";
    case Permission::kCancel: return "cancel";
    case Permission::kApprove: return "approve";
    case Permission::kResolve: return "resolve";
    case Permission::kRead: return "read";
    case Permission::kWork: return "work";
  }
  return "unknown_permission";
}

bool RoleGrants(Role role, Permission permission) {
  switch (role) {
    case Role::kAdmin:
      return permission == Permission::kManagePrincipals;
    case Role::kOperator:
      return permission == Permission::kStart || permission == Permission::kSignal ||
             permission == Permission::kCancel || permission == Permission::kRead;
    case Role::kApprover:
      return permission == Permission::kApprove || permission == Permission::kResolve ||
             permission == Permission::kRead;
    case Role::kReader:
      return permission == Permission::kRead;
    case Role::kWorker:
      return permission == Permission::kWork;
  }
  return false;
}

std::string RolesGranting(Permission permission) {
  std::vector<std::string_view> names;
  for (Role role : {Role::kAdmin, Role::kOperator, Role::kApprover, Role::kReader, Role::kWorker}) {
    if (RoleGrants(role, permission)) names.push_back(RoleName(role));
  }
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out.empty() ? "no role" : out;
}

}  // namespace reckon::auth
