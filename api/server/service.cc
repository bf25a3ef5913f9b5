#include "reckon/api/server/service.h"

#include <kj/exception.h>
#include <spdlog/spdlog.h>

#include "reckon/protocol/client.h"
#include "reckon/protocol/wire_convert.h"
#include "reckon/api/server/methods.h"
#include "reckon/api/server/request_fields.h"

namespace reckon::api {
namespace asio = boost::asio;
using std::chrono::milliseconds;

Service::Service(storage::Journal& journal, ContractRegistry& contracts, Engine& engine,
                 TaskQueues& tasks, Authorizer& authorizer, std::size_t max_reply_bytes,
                 const ShardRouter* router)
    : authorizer_(authorizer),
      router_(router),
      client_(journal, contracts, engine, tasks),
      worker_(journal, contracts, tasks, max_reply_bytes),
      auth_(authorizer) {}

Result<auth::Principal> Service::Admit(SessionState& session, wire::Request::Reader request) {
  const MethodRow* row = FindMethod(request.getMethod().which());
  const std::string_view method = row == nullptr ? "an unknown method" : row->name;
  auto refuse = [&](const Error& error) {
    const std::string reason = error.ToString();
    const std::string key =
        std::string(AuditLimiter::HostOf(session.peer)) + " " + std::string(method) + " " + reason;
    if (auto held = audit_.Admit(key, AuditLimiter::Clock::now())) {
      spdlog::warn("audit: refused {} from {} (session {}): {}{}", method, session.peer,
                   session.id, reason, AuditLimiter::Suppressed(*held, session.peer));
    }
    return error;
  };
  auto authenticated = authorizer_.Authenticate(Str(request.getCredential()));
  if (!authenticated) return refuse(authenticated.error());
  // The connection ends when this credential is withdrawn (revoked, expired).
  session.Authenticated(authenticated.value().token_hash);
  Result<auth::Principal> principal = std::move(authenticated.value().principal);
  if (row == nullptr) {
    return refuse(Err(Errc::kUnimplemented,
                      "this server does not know the request's method (a newer client?)"));
  }
  const auto permission = row->permission;
  if (!permission) return principal;  // whoAmI: any valid credential
  if (auto allowed = Authorizer::Check(principal.value(), *permission, method); !allowed) {
    return refuse(allowed.error());
  }
  if (*permission == auth::Permission::kWork && session.client_certificate.empty() &&
      authorizer_.workers_need_client_certificate()) {
    return refuse(Err(Errc::kUnauthenticated,
                      "this server requires workers to present a client certificate signed by "
                      "its --client-ca: start the worker with --cert and --key (or $RECKON_CERT "
                      "and $RECKON_KEY)"));
  }
  return principal;
}

asio::awaitable<void> Service::Handle(SessionState& session, wire::Request::Reader request,
                                      milliseconds timeout, wire::Response::Builder response) {
  Result<void> handled = Ok();
  try {
    auto dispatched = Dispatch(session, request, timeout, response);
    handled = co_await std::move(dispatched);
  } catch (const kj::Exception& e) {
    // Cap'n Proto throws when a reader meets a malformed or over-limit message.
    handled = Err(Errc::kInvalidArgument,
                  "malformed request: " + std::string(e.getDescription().cStr()));
  }
  if (!handled) ToWire(handled.error(), response.initResult().initError());
}

asio::awaitable<Result<void>> Service::Dispatch(SessionState& session,
                                                wire::Request::Reader request,
                                                milliseconds timeout,
                                                wire::Response::Builder response) {
  RECKON_CO_TRY(auth::Principal caller, Admit(session, request));
  auto method = request.getMethod();
  const MethodRow& row = *FindMethod(method.which());  // Admit refuses a method with no row
  if (row.api == MethodApi::kClient && Redirected(row, method, response)) co_return Ok();
  RECKON_CO_TRY(ValidateRequestFields(method));  // identifiers and texts (base/identifier.h)
  switch (row.api) {
    case MethodApi::kPrincipal:
      co_return auth_.Handle(caller, method, response);
    case MethodApi::kWorker: {
      auto handled = worker_.Handle(session, caller, method, timeout, response);
      co_return co_await std::move(handled);
    }
    case MethodApi::kClient: {
      auto handled = client_.Handle(caller, method, timeout, response);
      co_return co_await std::move(handled);
    }
  }
  co_return Err(Errc::kInternal, "the method table names an API the Service does not have");
}

bool Service::Redirected(const MethodRow& row, wire::Request::Method::Reader method,
                         wire::Response::Builder response) {
  if (router_ == nullptr || row.workflow_of == nullptr) return false;
  const std::string workflow_id = row.workflow_of(method);
  if (workflow_id.empty()) return false;
  const Route route = router_->RouteOf(workflow_id);
  if (route.local) return false;
  const Error refusal = route.owner_address.empty()
                            ? Err(Errc::kUnavailable, route.reason)
                            : Err(Errc::kNotOwner, route.reason).WithRedirect(route.owner_address);
  ToWire(refusal, response.initResult().initError());
  return true;
}

}  // namespace reckon::api
