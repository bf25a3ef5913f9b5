#include "reckon/api/server/authorizer.h"

#include <boost/json.hpp>

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

Result<Principal> Authorizer::Authenticate(std::string_view credential) {
  if (credential.empty()) {
    if (options_.insecure_dev) return Principal{"dev", {}, {}, {}, 0, true};
    return Err(Errc::kUnauthenticated,
               "the request carries no API token: pass --token-file FILE (or set "
               "RECKON_TOKEN_FILE); an admin creates tokens with `reckon auth token create`");
  }
  if (!auth::LooksLikeToken(credential)) {
    return Err(Errc::kUnauthenticated,
               "the request's credential is not a Reckon API token (\"rk1_\" and 64 hex digits)");
  }
  const std::int64_t now = clock_.NowMicros();
  const std::string hash = auth::TokenHash(credential);
  const std::int64_t ttl_us =
      std::chrono::duration_cast<std::chrono::microseconds>(options_.cache_ttl).count();
  if (auto it = cache_.find(hash); it != cache_.end() && now - it->second.loaded_at_us < ttl_us) {
    return Admit(it->second, now);
  }
  RECKON_TRY(auto row, store_.FindByTokenHash(hash));
  if (!row) {
    cache_.erase(hash);
    return Err(Errc::kUnauthenticated,
               "the API token is not known to this server (a typo, or a token of another "
               "server); ask an admin for a token");
  }
  RECKON_TRY(Principal principal, PrincipalOf(*row));
  Cached cached{std::move(principal), row->revoked_at_us, now};
  auto admitted = Admit(cached, now);
  cache_[hash] = std::move(cached);
  return admitted;
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
  cache_.erase(row.token_hash);
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
