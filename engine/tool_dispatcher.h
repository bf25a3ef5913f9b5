// ToolDispatcher: how the engine runs one attempt of a tool call, or one reconciliation lookup,
// without running user code itself. Embedded mode runs them in-process (host/local_worker.h);
// server mode hands them to remote workers.
//
// Deadlines: the engine binds a cancellation slot to every awaitable it gets from here and
// emits a terminal cancellation at the attempt's hard deadline. An implementation must stop
// the attempt when cancelled (so that it can no longer land) and should still report what it
// knows: a success that arrives anyway is evidence of a commit, never a second effect.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "reckon/contract/failure_policy.h"
#include "reckon/storage/event.h"
#include "reckon/storage/rows.h"

namespace reckon {

struct AttemptRequest {
  storage::RunRef run;
  std::string step_id;
  std::string operation_id;  // the idempotency key: the same on every attempt
  std::string tool;
  boost::json::value input;  // full input, secrets included; never journaled or traced
  std::uint32_t attempt = 0;  // 1-based; the fencing token of this attempt
  std::int64_t deadline_us = 0;  // hard deadline, microseconds since the epoch
  // From the contract (0: not declared). heartbeat_timeout: the attempt is lost if its tool
  // does not heartbeat within it; schedule_to_start_timeout: a dispatcher with a queue
  // withdraws the attempt if no worker takes it within it (reported with not_started).
  std::chrono::milliseconds heartbeat_timeout{0};
  std::chrono::milliseconds schedule_to_start_timeout{0};
  // The progress details an earlier attempt of this operation heartbeated last (JSON, secret
  // fields removed; empty: none): what a resumed tool starts from.
  std::string last_heartbeat_details_json;
};

// Heartbeat details are capped: larger details are dropped (the beat still counts).
inline constexpr std::size_t kMaxHeartbeatDetailsBytes = 64 * 1024;

struct AttemptOutcome {
  bool success = false;
  boost::json::value output;  // on success
  std::string provider_ref;   // on success: the provider's id for the effect, if any
  FailureKind kind = FailureKind::kUnknown;  // on failure, as the tool reported it
  std::string code;                           // on failure: provider or transport code
  std::string message;                        // on failure: for people; never contains secrets
  // The last progress details the tool heartbeated during this attempt (JSON; empty: none).
  // Journaled, secrets removed, with the event that ends a failed attempt.
  std::string heartbeat_details_json;
  // The provider accepted the request and will report its result later (the contract's
  // completion policy): the operation waits for that completion (Engine::Complete), and
  // provider_ref names the request at the provider. Not a success: nothing is known to have
  // happened yet. From a tool whose contract declares no completion, it is an unknown outcome.
  bool accepted = false;
  // Set only by a dispatcher that withdrew the attempt before any worker took it (a
  // schedule-to-start timeout): proof that nothing happened. Never taken from a worker.
  bool not_started = false;
};

struct ReconcileRequest {
  storage::RunRef run;
  std::string operation_id;
  std::string tool;
  boost::json::value input;  // may be null after a restart, before replay re-learned it
  std::uint32_t round = 0;
  std::int64_t deadline_us = 0;
};

// What a lookup answered: the journal records the same verdict (storage/event.h).
using ReconcileVerdict = storage::ReconcileVerdict;
using storage::ReconcileVerdictName;

struct ReconcileOutcome {
  ReconcileVerdict verdict = ReconcileVerdict::kStillUnknown;
  boost::json::value output;  // committed: the result the step returns
  std::string provider_ref;   // committed: the provider's reference
  std::string message;
};

class ToolDispatcher {
 public:
  virtual ~ToolDispatcher() = default;
  virtual boost::asio::awaitable<AttemptOutcome> RunAttempt(AttemptRequest request) = 0;
  virtual boost::asio::awaitable<ReconcileOutcome> Reconcile(ReconcileRequest request) = 0;
};

}  // namespace reckon
