// Tools as a worker hosts them: a contract (contract/contract.h) plus the code that carries out
// an attempt and, for contracts that reconcile by lookup, the code that asks the provider.
//
// Tool code is an Asio coroutine. It receives the full input (secrets included; never log it;
// a secret it fetches itself, from a vault, it names with ToolCallContext::KeepSecret) and a
// ToolCallContext with the operation id, which it must send to the provider as the
// idempotency key on every attempt, and the attempt's hard deadline, which it must honour: the
// engine cancels the coroutine at the deadline, and a tool that cannot stop must report
// kUnknown rather than pretend. Tool functions live in a ToolRegistry for the life of the
// worker, so lambdas stored there may capture long-lived objects (a client) by pointer, but a
// coroutine must not keep state it needs in the captures of a temporary lambda.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/contract/contract.h"
#include "reckon/contract/contract_registry.h"
#include "reckon/engine/tool_dispatcher.h"
#include "reckon/worker/call_secrets.h"
#include "reckon/worker/tool_heartbeat.h"

namespace reckon {

struct ToolCallContext {
  std::string workflow_id;
  std::string step_id;
  std::string operation_id;  // the idempotency key
  std::uint32_t attempt = 0;
  std::chrono::steady_clock::time_point deadline;
  // What an earlier attempt of this operation heartbeated last (JSON text; empty: none).
  std::string last_heartbeat_details_json;
  // Where this attempt's heartbeats go (worker/tool_heartbeat.h); null: nowhere (a lookup).
  std::shared_ptr<ToolHeartbeat> heartbeat;
  // The call's secrets, which the worker redacts from the report (worker/call_secrets.h);
  // null outside a worker.
  std::shared_ptr<CallSecrets> secrets;

  // Tells the worker the tool is alive and how far it got. A tool whose contract declares
  // heartbeat_timeout must call it more often than that, or its attempt is treated as lost.
  // `details` (JSON, at most 64 KiB, secret fields removed before journaling) reach the next
  // attempt if this one fails or is lost.
  void Heartbeat() const;
  void Heartbeat(const boost::json::value& details) const;
  // The progress details an earlier attempt heartbeated last; null when none.
  boost::json::value LastHeartbeatDetails() const;
  // Names a secret the tool fetched itself (a card token from a vault) and may send to the
  // provider. The worker redacts it, as it redacts the values of the input's secret fields,
  // from everything this call reports (output, provider reference, code, message, heartbeat
  // details) before the report leaves the worker, so a provider that echoes it (a refund id
  // built from the card token) does not get it journaled. Call it as soon as the value is
  // fetched. Reckon never learns the value otherwise: a secret not named here reaches the
  // journal if the provider echoes it.
  void KeepSecret(std::string value) const;
};

using ToolExecute = std::function<boost::asio::awaitable<AttemptOutcome>(
    boost::json::value input, ToolCallContext context)>;
using ToolReconcile = std::function<boost::asio::awaitable<ReconcileOutcome>(
    boost::json::value input, ToolCallContext context)>;

struct Tool {
  ToolContract contract;
  ToolExecute execute;
  ToolReconcile reconcile;  // required iff contract.reconcile.mode == kLookup
};

// Outcome helpers for tool code.
AttemptOutcome ToolSucceeded(boost::json::value output, std::string provider_ref = "");
AttemptOutcome ToolFailed(FailureKind kind, std::string code, std::string message);
// The provider accepted the request and reports its result later (a webhook): only for a
// contract that declares `completion` (contract/contract.h). The operation then waits for the
// completion, delivered to the server's HTTP endpoint or through Engine::Complete, keyed by
// the operation id (docs/TOOLS.md, section 4).
AttemptOutcome ToolAccepted(std::string provider_ref);

// The tools a worker hosts, by name, with their contracts registered in contracts().
// Register is not thread-safe; lookups are, once registration is over.
class ToolRegistry {
 public:
  // Errc::kInvalidArgument naming what is missing (a contract problem, no execute function,
  // a lookup contract without reconcile, a reconcile function the contract does not use);
  // Errc::kAlreadyExists for a second tool of the same name.
  Result<void> Register(Tool tool);

  const Tool* Find(const std::string& name) const;
  // Every registered tool, sorted by name.
  std::vector<const Tool*> All() const;
  const ContractRegistry& contracts() const { return contracts_; }

 private:
  ContractRegistry contracts_;
  std::map<std::string, Tool> tools_;
};

}  // namespace reckon
