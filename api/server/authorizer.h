// Authorizer: who a request comes from and whether they may make it (docs/SECURITY.md).
//
// Authenticate maps a request's credential (an API token, auth/token.h) to a Principal: it
// hashes the token and finds the principal in the PrincipalStore, refusing a missing,
// malformed, unknown, expired or revoked token with Errc::kUnauthenticated (the message never
// repeats the token). Found principals are cached for `cache_ttl`; a revocation made through
// this server drops its entry at once, one made through another server that shares the store
// takes effect within the ttl. Check then tests the method's permission against the role.
//
// Development mode (`insecure_dev`): a request without a credential is taken as the
// principal "dev", which holds every permission; a request with one is checked as usual.
// ServerHost allows it only on a loopback address and warns at every start.
//
// Token management (admin): CreateToken, List, Revoke write the store with an audit row each.
// Bootstrap creates the first admin when the store has no principal at all.
//
// Ownership: references the store and the clock, which outlive it. Threads: one thread (the
// server's executor).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "reckon/auth/principal.h"
#include "reckon/base/error.h"
#include "reckon/engine/clock.h"
#include "reckon/storage/principal_store.h"

namespace reckon::api {

struct AuthOptions {
  bool insecure_dev = false;
  std::chrono::milliseconds cache_ttl{5000};
  // --client-ca: a request that needs the worker permission must come over a connection whose
  // client certificate the server verified (a worker token alone is not enough).
  bool workers_need_client_certificate = false;
};

struct NewToken {
  std::string name;
  std::vector<auth::Role> roles;
  std::vector<std::string> tools;
  std::vector<std::string> workflow_types;
  std::chrono::seconds expires_in{0};  // 0: never
};

struct CreatedToken {
  storage::PrincipalRow principal;
  std::string token;  // shown once
};

class Authorizer {
 public:
  Authorizer(storage::PrincipalStore& store, Clock& clock, AuthOptions options);

  Result<auth::Principal> Authenticate(std::string_view credential);

  // Errc::kPermissionDenied naming the principal, its role, the method and the roles that
  // may call it, unless `principal` holds `permission`.
  static Result<void> Check(const auth::Principal& principal, auth::Permission permission,
                            std::string_view method);

  Result<CreatedToken> CreateToken(const auth::Principal& by, const NewToken& request);
  Result<std::vector<storage::PrincipalRow>> List() { return store_.List(); }
  Result<storage::PrincipalRow> Revoke(const auth::Principal& by, std::string_view name);

  // When the store holds no principal yet: creates the admin "admin", handing its token to
  // `keep` first (which writes it where the operator finds it; a failure creates nothing), and
  // returns true; otherwise false.
  Result<bool> Bootstrap(const std::function<Result<void>(std::string_view token)>& keep);

  bool insecure_dev() const { return options_.insecure_dev; }
  bool workers_need_client_certificate() const {
    return options_.workers_need_client_certificate;
  }

 private:
  struct Cached {
    auth::Principal principal;
    std::int64_t revoked_at_us = 0;
    std::int64_t loaded_at_us = 0;
  };
  Result<auth::Principal> Admit(const Cached& cached, std::int64_t now_us) const;
  Result<CreatedToken> CreateWithToken(const auth::Principal& by, const NewToken& request,
                                       std::string token);

  storage::PrincipalStore& store_;
  Clock& clock_;
  AuthOptions options_;
  std::unordered_map<std::string, Cached> cache_;  // by token hash
};

// A principal as the store holds it, as a Principal. Errc::kCorruption for a row whose role or
// scopes this release does not know.
Result<auth::Principal> PrincipalOf(const storage::PrincipalRow& row);

}  // namespace reckon::api
