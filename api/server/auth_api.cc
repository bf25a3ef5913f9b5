#include "reckon/api/server/auth_api.h"

#include <spdlog/spdlog.h>

#include "reckon/protocol/wire_convert.h"
#include "reckon/api/server/request_fields.h"

namespace reckon::api {
namespace {

using Method = wire::Request::Method;

void SetTexts(const std::vector<std::string>& texts, capnp::List<capnp::Text>::Builder out) {
  for (unsigned i = 0; i < texts.size(); ++i) out.set(i, texts[i]);
}

std::vector<std::string> Texts(capnp::List<capnp::Text>::Reader in) {
  std::vector<std::string> out;
  for (auto text : in) out.push_back(Str(text));
  return out;
}

}  // namespace

void ToWire(const storage::PrincipalRow& row, wire::PrincipalInfo::Builder out) {
  auth::Principal principal;
  principal.name = row.name;
  (void)auth::ApplyScopes(row.scopes, principal);
  out.setName(row.name);
  out.setRole(row.role);
  SetTexts(principal.tools, out.initTools(principal.tools.size()));
  SetTexts(principal.workflow_types, out.initWorkflowTypes(principal.workflow_types.size()));
  out.setCreatedAtUs(row.created_at_us);
  out.setCreatedBy(row.created_by);
  out.setExpiresAtUs(row.expires_at_us);
  out.setRevokedAtUs(row.revoked_at_us);
  out.setRevokedBy(row.revoked_by);
}

Result<void> AuthApi::Handle(const auth::Principal& caller, Method::Reader method,
                             wire::Response::Builder out) {
  switch (method.which()) {
    case Method::CREATE_TOKEN:
      return Create(caller, method.getCreateToken(), out);
    case Method::LIST_TOKENS: {
      RECKON_TRY(auto rows, authorizer_.List());
      auto list = out.initResult().initTokens(rows.size());
      for (unsigned i = 0; i < rows.size(); ++i) ToWire(rows[i], list[i]);
      return Ok();
    }
    case Method::REVOKE_TOKEN: {
      RECKON_TRY(std::string name, RequiredText(method.getRevokeToken().getName(), "name"));
      RECKON_TRY(auto row, authorizer_.Revoke(caller, name));
      spdlog::info("audit: principal '{}' revoked the token of '{}'", caller.name, row.name);
      ToWire(row, out.initResult().initPrincipal());
      return Ok();
    }
    case Method::WHO_AM_I: {
      storage::PrincipalRow row;
      row.name = caller.name;
      row.role = caller.development ? "dev" : auth::RolesText(caller.roles);
      row.scopes = auth::ScopesOf(caller);
      row.expires_at_us = caller.expires_at_us;
      ToWire(row, out.initResult().initPrincipal());
      return Ok();
    }
    default:
      return Err(Errc::kUnimplemented, "not a principal method");
  }
}

Result<void> AuthApi::Create(const auth::Principal& caller, wire::CreateToken::Reader in,
                             wire::Response::Builder out) {
  NewToken request;
  RECKON_TRY(request.name, RequiredText(in.getName(), "name"));
  RECKON_TRY(std::string role_names, RequiredText(in.getRole(), "role"));
  RECKON_TRY(request.roles, auth::ParseRoles(role_names));
  request.tools = Texts(in.getTools());
  request.workflow_types = Texts(in.getWorkflowTypes());
  request.expires_in = std::chrono::seconds(in.getExpiresInS());
  RECKON_TRY(CreatedToken created, authorizer_.CreateToken(caller, request));
  spdlog::info("audit: principal '{}' created a token for '{}' (role {})", caller.name,
               created.principal.name, created.principal.role);
  auto result = out.initResult().initCreatedToken();
  ToWire(created.principal, result.initPrincipal());
  result.setToken(created.token);
  return Ok();
}

}  // namespace reckon::api
