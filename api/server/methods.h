// The method table: one row per method of the protocol (the Request's method union in
// protocol/reckon.capnp), the one place that says what an operation of `reckon server` is.
// A row gives the method's name, the one permission it needs (auth/role.h; docs/SECURITY.md
// holds the same table for people), the fields checked before anything runs (identifiers and
// texts, base/identifier.h; the rules are in docs/PROTOCOL.md, "Identifiers and texts"), the
// workflow it is about (cluster mode routes by it, shard_router.h), the API object that handles
// it, the `reckon` command that sends it, and why the HTTP API has no route for it, if it has
// none (api/server/http/http_routes.h holds the routes).
//
// The Service (service.h) reads the row of every request: it refuses a method with no row (a
// newer client's) and a caller without the row's permission, routes by the row's workflow,
// checks the row's fields, and hands the request to the row's API. A new operation is a union
// member, a row here, a handler, a CLI command and (or a reason not to have) an HTTP route;
// api/server/method_table_test.cc fails until all of them exist.
//
// Immutable data and pure functions; thread-safe.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "reckon/protocol/reckon.capnp.h"
#include "reckon/auth/role.h"
#include "reckon/base/error.h"

namespace reckon::api {

// Which API object handles a method (its Handle function).
enum class MethodApi {
  kClient,     // ClientApi (client_api.h): runs, approvals, queries, watches
  kWorker,     // WorkerApi (worker_api.h): registration, polls, reports, heartbeats
  kPrincipal,  // AuthApi (auth_api.h): tokens, whoAmI
};

struct MethodRow {
  wire::Request::Method::Which which;
  std::string_view name;  // as in reckon.capnp ("startWorkflow")
  // The permission the caller needs; nullopt: any valid credential (whoAmI only).
  std::optional<auth::Permission> permission;
  MethodApi api;
  // Checks every identifier and text the request carries: required ones even when empty,
  // optional ones when given. Errc::kInvalidArgument names the wire field ("workflowId 'a\x0ab'
  // is not valid: ..."). Payloads (JSON inputs, outputs, commands) are the engine's to check.
  Result<void> (*check_fields)(wire::Request::Method::Reader method);
  // The workflow id the request is about; nullptr for a method about none (lists, contracts,
  // a worker's or a principal's methods). Cluster mode redirects by it.
  std::string (*workflow_of)(wire::Request::Method::Reader method);
  std::string_view cli;  // the `reckon` command that sends it ("auth token create")
  // Empty when an HTTP route sends the method; else why none does (the method is wire-only).
  std::string_view wire_only;
};

// Every row, one per member of the method union, in the schema's order.
std::span<const MethodRow> MethodTable();

// The row of `method`; nullptr for a method this build does not know (it is refused).
const MethodRow* FindMethod(wire::Request::Method::Which method);

}  // namespace reckon::api
