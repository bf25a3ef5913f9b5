#include "reckon/api/server/authorizer.h"

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include "reckon/auth/token.h"
#include "reckon/base/identifier.h"

namespace reckon::api {

using auth::Principal;
using auth::Role;

Result<Principal> PrincipalOf(const storage::PrincipalRow& row) {
  auto roles = auth::ParseRoles(row.role);
  if (!roles) {
    return Err(Errc::kCorruption, "principal '" + row.name + "': " + roles.error().message());
  }
  Principal principal{row.name, std::move(roles).value(), {}, {}, row.expires_at_us};
  if (auto scoped = ApplyScopes(row.scopes, principal); !scoped) {
    return Err(Errc::kCorruption, scoped.error().message());
  }
  return principal;
}

Authorizer::Authorizer(storage::PrincipalStore& store, Clock& clock, AuthOptions options)
    : store_(store), clock_(clock), options_(options) {}

Result<Principal> Authorizer::Admit(const Cached& cached, std::int64_t now_us) const {
  const Principal& principal = cached.principal;
  if (cached.revoked_at_us != 0) {
    return Err(Errc::kUnauthenticated, "the token of principal '" + principal.name +
                                           "' was revoked; ask an admin for a new one");
  }
  if (principal.expires_at_us != 0 && now_us >= principal.expires_at_us) {
    return Err(Errc::kUnauthenticated, "the token of principal '" + principal.name +
                                           "' has expired; ask an admin for a new one");
  }
  return principal;
}

namespace {

Error UnknownToken() {
  return Err(Errc::kUnauthenticated,
             "the API token is not known to this server (a typo, or a token of another "
             "server); ask an admin for a token");
}

}  // namespace

Result<Authorizer::Cached*> Authorizer::Lookup(const std::string& token_hash,
                                               std::int64_t now_us) {
  const std::int64_t ttl_us =
      std::chrono::duration_cast<std::chrono::microseconds>(options_.cache_ttl).count();
  auto it = cache_.find(token_hash);
  if (it != cache_.end() && now_us - it->second.loaded_at_us < ttl_us) return &it->second;
  RECKON_TRY(auto row, store_.FindByTokenHash(token_hash));
  if (!row) {
    if (it != cache_.end()) {
      // Known before, gone now (a store restored from a backup, say): nobody may use it.
      Withdraw(token_hash, it->second.principal.name, UnknownToken());
      cache_.erase(it);
    }
    return nullptr;
  }
  RECKON_TRY(Principal principal, PrincipalOf(*row));
  Cached& entry = cache_[token_hash];
  entry.principal = std::move(principal);
  entry.revoked_at_us = row->revoked_at_us;
  entry.loaded_at_us = now_us;
  return &entry;
}

void Authorizer::Withdraw(const std::string& token_hash, const std::string& principal,
                          Error reason) {
  auto it = cache_.find(token_hash);
  if (it != cache_.end()) {
    if (it->second.withdrawn) return;
    it->second.withdrawn = true;
  }
  if (on_withdrawn_) on_withdrawn_(Withdrawal{token_hash, principal, std::move(reason)});
}

Result<Authenticated> Authorizer::Authenticate(std::string_view credential) {
  if (credential.empty()) {
    if (options_.insecure_dev) return Authenticated{Principal{"dev", {}, {}, {}, 0, true}, ""};
    return Err(Errc::kUnauthenticated,
               "the request carries no API token: pass --token-file FILE (or set "
               "RECKON_TOKEN_FILE); an admin creates tokens with `reckon auth token create`");
  }
  if (!auth::LooksLikeToken(credential)) {
    return Err(Errc::kUnauthenticated,
               "the request's credential is not a Reckon API token (\"rk1_\" and 64 hex digits)");
  }
  const std::int64_t now = clock_.NowMicros();
  std::string hash = auth::TokenHash(credential);
  RECKON_TRY(Cached* cached, Lookup(hash, now));
  if (cached == nullptr) return UnknownToken();
  auto admitted = Admit(*cached, now);
  if (!admitted) {
    Withdraw(hash, cached->principal.name, admitted.error());
    return admitted.error();
  }
  return Authenticated{std::move(admitted).value(), std::move(hash)};
}

void Authorizer::Recheck(const std::vector<std::string>& token_hashes) {
  const std::int64_t now = clock_.NowMicros();
  for (const std::string& hash : token_hashes) {
    auto cached = Lookup(hash, now);
    if (!cached) {
      // Logged once while it lasts: a revocation through another server goes unnoticed here
      // until the store answers again.
      if (cached.error().message() != recheck_failure_) {
        spdlog::warn("cannot recheck the credentials of open connections (a revocation "
                     "through another server takes effect here once the store answers): {}",
                     cached.error().ToString());
        recheck_failure_ = cached.error().message();
      }
      return;
    }
    recheck_failure_.clear();
    if (cached.value() == nullptr) continue;  // withdrawn by Lookup
    if (auto admitted = Admit(*cached.value(), now); !admitted) {
      Withdraw(hash, cached.value()->principal.name, admitted.error());
    }
  }
}

Result<void> Authorizer::Check(const Principal& principal, auth::Permission permission,
                               std::string_view method) {
  if (principal.Grants(permission)) return Ok();
  return Err(Errc::kPermissionDenied,
             "principal '" + principal.name + "' (role " + auth::RolesText(principal.roles) +
                 ") may not call " + std::string(method) + ": it needs the permission " +
                 std::string(auth::PermissionName(permission)) + ", which the role " +
                 auth::RolesGranting(permission) + " has");
}

Result<CreatedToken> Authorizer::CreateToken(const Principal& by, const NewToken& request) {
  RECKON_TRY(std::string token, auth::GenerateToken());
  return CreateWithToken(by, request, std::move(token));
}

Result<CreatedToken> Authorizer::CreateWithToken(const Principal& by, const NewToken& request,
                                                 std::string token) {
  RECKON_TRY(ValidatePrincipalName(request.name, "name"));
  for (const std::string& tool : request.tools) {
    RECKON_TRY(ValidateId(IdKind::kToolName, tool, "tools"));
  }
  for (const std::string& type : request.workflow_types) {
    RECKON_TRY(ValidateId(IdKind::kWorkflowType, type, "workflowTypes"));
  }
  Principal principal{request.name, request.roles, request.tools, request.workflow_types, 0};
  if (principal.roles.empty()) return Err(Errc::kInvalidArgument, "a principal needs a role");
  if ((!request.tools.empty() && !principal.Has(Role::kApprover) && !principal.Has(Role::kWorker)) ||
      (!request.workflow_types.empty() && !principal.Has(Role::kWorker))) {
    return Err(Errc::kInvalidArgument,
               "scopes narrow approvers (tools) and workers (tools and workflow types); the role " +
                   auth::RolesText(principal.roles) + " takes none");
  }
  const std::int64_t now = clock_.NowMicros();
  storage::PrincipalRow row;
  row.name = request.name;
  row.role = auth::RolesText(principal.roles);
  row.scopes = auth::ScopesOf(principal);
  row.token_hash = auth::TokenHash(token);
  row.created_at_us = now;
  row.created_by = by.name;
  if (request.expires_in.count() > 0) row.expires_at_us = now + request.expires_in.count() * 1000000;
  boost::json::array scopes;
  for (const std::string& scope : row.scopes) scopes.emplace_back(scope);
  const std::string detail = boost::json::serialize(boost::json::object{
      {"role", row.role}, {"scopes", scopes}, {"expires_at_us", row.expires_at_us}});
  RECKON_TRY(store_.Create(row, storage::AuditRow{now, by.name, "token_create", row.name, detail}));
  return CreatedToken{std::move(row), std::move(token)};
}

Result<storage::PrincipalRow> Authorizer::Revoke(const Principal& by, std::string_view name) {
  const std::int64_t now = clock_.NowMicros();
  RECKON_TRY(auto row, store_.Revoke(name, now, by.name,
                                     storage::AuditRow{now, by.name, "token_revoke",
                                                       std::string(name), "{}"}));
  if (auto it = cache_.find(row.token_hash); it != cache_.end()) {
    it->second.revoked_at_us = row.revoked_at_us;
  }
  Withdraw(row.token_hash, row.name,
           Err(Errc::kUnauthenticated, "the token of principal '" + row.name +
                                           "' was revoked; ask an admin for a new one"));
  return row;
}

Result<bool> Authorizer::Bootstrap(const std::function<Result<void>(std::string_view)>& keep) {
  RECKON_TRY(auto rows, store_.List());
  if (!rows.empty()) return false;
  RECKON_TRY(std::string token, auth::GenerateToken());
  // Kept before it is valid: a crash in between leaves a token file that grants nothing, and
  // the next start (still no principal) writes a new one.
  RECKON_TRY(keep(token));
  Principal server{"server", {Role::kAdmin}, {}, {}, 0};
  RECKON_TRY(CreateWithToken(server, NewToken{"admin", {Role::kAdmin}, {}, {}, {}}, std::move(token)));
  return true;
}

}  // namespace reckon::api
