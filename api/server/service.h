// Service: the server's request handling, behind the connection layer (api/server/server.h),
// which reads a Request, calls Handle, and sends the Response it filled; Service knows nothing
// of sockets. Every step reads the method's row in the method table (methods.h). Deny by
// default: it first authenticates the request's credential and checks the row's one
// permission (authorizer.h), refusing a method with no row and every refusal with an audit log
// line that names the method, the peer and the reason (never the token; identical lines from
// one peer are rate-limited, audit_limiter.h). In cluster mode a client request about a
// workflow another server owns (the row's workflow) is then answered with a redirect
// (shard_router.h). Then it checks the row's fields (request_fields.h) and hands the method to
// the row's API: the client API (client_api.h: start, signal, cancel, queries, approvals,
// resolutions, watch), the worker API (worker_api.h: registration, polls, reports, heartbeats)
// or the principal API (auth_api.h: tokens, whoAmI), with the caller's principal, and turns a
// refusal or a malformed message into an error reply.
//
// Ownership: owns the handlers; references the journal, contracts, engine, task queues and
// authorizer, which outlive it. Threads: one single-threaded executor shared with the engine and the task
// queues.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstddef>
#include <string>

#include "reckon/protocol/reckon.capnp.h"
#include "reckon/api/server/audit_limiter.h"
#include "reckon/api/server/auth_api.h"
#include "reckon/api/server/authorizer.h"
#include "reckon/api/server/client_api.h"
#include "reckon/api/server/methods.h"
#include "reckon/api/server/shard_router.h"
#include "reckon/api/server/task_queues.h"
#include "reckon/api/server/worker_api.h"
#include "reckon/base/error.h"
#include "reckon/contract/contract_registry.h"
#include "reckon/engine/engine.h"
#include "reckon/storage/journal.h"

namespace reckon::api {

class Service {
 public:
  // `max_reply_bytes`: the frame limit; a workflow task whose history would not fit fails.
  // `router` (cluster mode; not owned, may be null): requests about a workflow another server
  // owns are answered with a redirect (api/server/shard_router.h).
  Service(storage::Journal& journal, ContractRegistry& contracts, Engine& engine,
          TaskQueues& tasks, Authorizer& authorizer, std::size_t max_reply_bytes,
          const ShardRouter* router = nullptr);

  // Fills `response` (its id already set) for `request`. Never throws for bad input: every
  // refusal becomes an error reply. `timeout` is the request's deadline, already capped.
  boost::asio::awaitable<void> Handle(SessionState& session, wire::Request::Reader request,
                                      std::chrono::milliseconds timeout,
                                      wire::Response::Builder response);

  // The connection of `session` closed, or is being closed: its worker, if registered, leaves
  // the task queues now (its polls end; it no longer counts as connected). Idempotent.
  void Disconnected(SessionState& session) { worker_.Disconnected(session); }

  // The engine made a batch of `workflow_id` durable: wakes its watchWorkflow long polls.
  void RunChanged(const std::string& workflow_id) { client_.RunChanged(workflow_id); }

 private:
  boost::asio::awaitable<Result<void>> Dispatch(SessionState& session,
                                                wire::Request::Reader request,
                                                std::chrono::milliseconds timeout,
                                                wire::Response::Builder response);

  // The caller of `request`, if it may call the method; else the refusal (logged). A valid
  // credential is noted in `session` either way.
  Result<auth::Principal> Admit(SessionState& session, wire::Request::Reader request);

  // Cluster mode: the redirect for a request about a workflow another server owns (the
  // workflow of `row`), written into `response`; false when this server serves it.
  bool Redirected(const MethodRow& row, wire::Request::Method::Reader method,
                  wire::Response::Builder response);

  Authorizer& authorizer_;
  const ShardRouter* router_;
  ClientApi client_;
  WorkerApi worker_;
  AuthApi auth_;
  AuditLimiter audit_;  // refusals' audit lines, per peer (audit_limiter.h)
};

}  // namespace reckon::api
