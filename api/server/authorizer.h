// Authorizer: who a request comes from and whether they may make it (docs/SECURITY.md).
//
// Authenticate maps a request's credential (an API token, auth/token.h) to a Principal: it
// hashes the token and finds the principal in the PrincipalStore, refusing a missing,
// malformed, unknown, expired or revoked token with Errc::kUnauthenticated (the message never
// repeats the token). Found principals are cached for `cache_ttl`; a revocation made through
// this server takes effect at once, one made through another server that shares the store
// within the ttl. Check then tests the method's permission against the role.
//
// Withdrawals: a credential that stops being valid while connections may still present it is
// handed, once, to the OnWithdrawn handler, which ends those connections and their workers'
// polls (api/server/credential_watch.h). That happens when it is revoked through this server,
// when a reload of the cache finds it revoked, expired or gone, and when Recheck (which the
// server calls every second with the credentials of its open connections) finds the same: a
// revocation through another server within the ttl, an expiry at once.
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

// Who a request comes from, and the credential that says so.
struct Authenticated {
  auth::Principal principal;
  std::string token_hash;  // the SHA-256 of its token; empty for the development principal
};

// A credential that stopped being valid: the connections that presented it must end.
struct Withdrawal {
  std::string token_hash;
  std::string principal;
  Error reason;  // Errc::kUnauthenticated: why, and what to do
};

struct CreatedToken {
  storage::PrincipalRow principal;
  std::string token;  // shown once
};

class Authorizer {
 public:
  Authorizer(storage::PrincipalStore& store, Clock& clock, AuthOptions options);

  // The principal whose token `credential` is, with the token's hash. A refusal of a token
  // admitted before (revoked, expired) also withdraws it (OnWithdrawn), once.
  Result<Authenticated> Authenticate(std::string_view credential);

  // `handler` is told of each credential that stops being valid (see the top of this file),
  // once per credential, on the calling thread; it may not call back into the Authorizer. An
  // empty function: nobody is told.
  void OnWithdrawn(std::function<void(const Withdrawal&)> handler) {
    on_withdrawn_ = std::move(handler);
  }
  // Looks at each of `token_hashes` (credentials still in use) again: reloads those whose
  // cache entry is older than the ttl, and withdraws those now revoked, expired or unknown. A
  // store that cannot be read withdraws nothing (logged).
  void Recheck(const std::vector<std::string>& token_hashes);

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
    bool withdrawn = false;  // the handler was told
  };
  Result<auth::Principal> Admit(const Cached& cached, std::int64_t now_us) const;
  // The cache entry of `token_hash`, reloaded from the store when older than the ttl; null
  // for a token the store does not know (then no entry is kept).
  Result<Cached*> Lookup(const std::string& token_hash, std::int64_t now_us);
  // Tells the handler, unless it was told about this credential already.
  void Withdraw(const std::string& token_hash, const std::string& principal, Error reason);
  Result<CreatedToken> CreateWithToken(const auth::Principal& by, const NewToken& request,
                                       std::string token);

  storage::PrincipalStore& store_;
  Clock& clock_;
  AuthOptions options_;
  std::unordered_map<std::string, Cached> cache_;  // by token hash
  std::function<void(const Withdrawal&)> on_withdrawn_;
  std::string recheck_failure_;  // the store's failure Recheck last logged
};

// A principal as the store holds it, as a Principal. Errc::kCorruption for a row whose role or
// scopes this release does not know.
Result<auth::Principal> PrincipalOf(const storage::PrincipalRow& row);

}  // namespace reckon::api
