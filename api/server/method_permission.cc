#include "reckon/api/server/method_permission.h"

#include "reckon/api/server/methods.h"

namespace reckon::api {

std::optional<auth::Permission> PermissionOf(wire::Request::Method::Which method) {
  const MethodRow* row = FindMethod(method);
  return row == nullptr ? std::nullopt : row->permission;
}

std::string_view MethodName(wire::Request::Method::Which method) {
  const MethodRow* row = FindMethod(method);
  return row == nullptr ? "an unknown method" : row->name;
}

}  // namespace reckon::api
