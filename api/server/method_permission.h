// The one permission each protocol method needs (auth/role.h; docs/SECURITY.md holds the
// same table for people). A method this build does not know needs a permission nobody
// has, so a newer client's request is refused rather than let through.
//
// Plain functions.
#pragma once

#include <optional>
#include <string_view>

#include "reckon/protocol/reckon.capnp.h"
#include "reckon/auth/role.h"

namespace reckon::api {

// nullopt for a method this build does not know (refused).
std::optional<auth::Permission> PermissionOf(wire::Request::Method::Which method);

// The method's name as in reckon.capnp ("startWorkflow"), for logs and refusals.
std::string_view MethodName(wire::Request::Method::Which method);

}  // namespace reckon::api
