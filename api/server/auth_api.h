// AuthApi: the protocol methods about principals (protocol/reckon.capnp): createToken,
// listTokens and revokeToken (admin), and whoAmI (any valid credential). The Service (service.h)
// has authenticated and authorized the caller before it hands a request over.
//
// A created token appears in the reply once and nowhere else: not in a log, not in the store
// (only its SHA-256), not in the audit row.
//
// Ownership: references the Authorizer, which outlives it. Threads: the server's executor.
#pragma once

#include "reckon/protocol/reckon.capnp.h"
#include "reckon/api/server/authorizer.h"
#include "reckon/auth/principal.h"
#include "reckon/base/error.h"

namespace reckon::api {

class AuthApi {
 public:
  explicit AuthApi(Authorizer& authorizer) : authorizer_(authorizer) {}

  // Handles one of its methods (the rows of the method table, methods.h, whose API is
  // kPrincipal) for `caller`; any other is refused with Errc::kUnimplemented.
  Result<void> Handle(const auth::Principal& caller, wire::Request::Method::Reader method,
                      wire::Response::Builder out);

 private:
  Result<void> Create(const auth::Principal& caller, wire::CreateToken::Reader in,
                      wire::Response::Builder out);

  Authorizer& authorizer_;
};

// A principal on the wire.
void ToWire(const storage::PrincipalRow& row, wire::PrincipalInfo::Builder out);

}  // namespace reckon::api
