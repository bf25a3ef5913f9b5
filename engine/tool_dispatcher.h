// ToolDispatcher: how the engine runs one attempt of a tool call, or one reconciliation lookup,
// without running user code itself. Embedded mode runs them in-process (worker/local_worker.h);
// server mode hands them to remote workers.
//
// Deadlines: the engine binds a cancellation slot to every awaitable it gets from here and
// emits a terminal cancellation at the attempt's hard deadline. An implementation must stop
// the attempt when cancelled (so that it can no longer land) and should still report what it
// knows: a success that arrives anyway is evidence of a commit, never a second effect.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

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
};

struct AttemptOutcome {
  bool success = false;
  boost::json::value output;  // on success
  std::string provider_ref;   // on success: the provider's id for the effect, if any
  FailureKind kind = FailureKind::kUnknown;  // on failure, as the tool reported it
  std::string code;                           // on failure: provider or transport code
  std::string message;                        // on failure: for people; never contains secrets
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
