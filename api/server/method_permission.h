// The one permission each protocol method needs, and its name: two columns of the method
// table (methods.h), read by the Service's admission and its audit lines. A method this build
// does not know needs a permission nobody has, so a newer client's request is refused rather
// than let through.
//
// Plain functions.
#pragma once

#include <optional>
#include <string_view>

#include "reckon/protocol/reckon.capnp.h"
#include "reckon/auth/role.h"

namespace reckon::api {

// The row's permission; nullopt for whoAmI (any valid credential) and for a method this build
// does not know (refused: FindMethod in methods.h tells the two apart).
std::optional<auth::Permission> PermissionOf(wire::Request::Method::Which method);

// The method's name as in reckon.capnp ("startWorkflow"), for logs and refusals; "an unknown
// method" for one this build does not know.
std::string_view MethodName(wire::Request::Method::Which method);

}  // namespace reckon::api
