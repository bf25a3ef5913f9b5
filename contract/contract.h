// A tool's side-effect contract: what calling it does to the world, and therefore what the
// engine may do after each kind of failure (the design brief, "Side-effect contracts").
//
// The contract is plain data so that the engine, which never runs user code, can check it,
// hash it into the journal (contract/contract_json.h), print it (contract/contract_card.h) and
// route failures by it (contract/failure_policy.h). The one user-supplied behaviour it refers
// to, the reconcile lookup, is declared by mode and run by the worker.
//
// A contract is refused at registration unless ValidateContract accepts it: every decision
// the engine will need is made explicitly, and no field contradicts another. Plain values;
// the functions are stateless and thread-safe.
#pragma once

#include <boost/json/value.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/base/side_effect.h"
#include "reckon/contract/approval_rule.h"

namespace reckon {

// The side-effect class (SideEffect) is base/side_effect.h: the journal records it too.

// Exponential backoff: attempt 1 waits `initial`, each later one `multiplier` times longer,
// never more than `max`.
struct Backoff {
  std::chrono::milliseconds initial{1000};
  double multiplier = 2.0;
  std::chrono::milliseconds max{60000};

  // The delay before the retry that follows attempt `attempt` (1-based; values < 1 count as 1).
  std::chrono::milliseconds Delay(int attempt) const;

  friend bool operator==(const Backoff&, const Backoff&) = default;
};

struct RetryPolicy {
  int max_attempts = 1;  // attempts in total, the first included
  Backoff backoff;
  // Provider codes that prove the request was not processed (HTTP 429, a 503 sent before
  // commit). For a non_repeatable_write they are the only failures that are retried.
  std::vector<std::string> retryable_codes;
  // For idempotent and deduplicated writes: reconcile an unknown outcome instead of retrying
  // it. Must be true for non_repeatable_write (it cannot retry) and false for read_only.
  bool reconcile_on_unknown = false;

  friend bool operator==(const RetryPolicy&, const RetryPolicy&) = default;
};

enum class ReconcileMode {
  kUnset,       // no decision made: refused for non_repeatable_write
  kLookup,      // the worker runs the tool's reconcile(operation_id) lookup
  kNeedsHuman,  // the explicit fallback: park the operation for a person to resolve
};

std::string_view ReconcileModeName(ReconcileMode mode);  // "unset", "lookup", "needs_human"
Result<ReconcileMode> ParseReconcileMode(std::string_view name);

struct ReconcilePolicy {
  ReconcileMode mode = ReconcileMode::kUnset;
  int max_attempts = 0;  // lookups answering still_unknown before needs_human (lookup mode)
  Backoff backoff;       // between lookups that answered still_unknown
  // The first lookup waits this long past the attempt's hard deadline, so that a not_found
  // cannot race an attempt still landing at the provider (the lookup race).
  std::chrono::milliseconds grace{0};

  friend bool operator==(const ReconcilePolicy&, const ReconcilePolicy&) = default;
};

// Asynchronous completion: the provider accepts a request and reports its result later
// (a webhook). A tool of such a contract may answer "accepted" (worker/tool.h, ToolAccepted)
// with the provider's reference; the operation then waits durably, in awaiting_completion,
// for the completion that the server's HTTP endpoint or Engine::Complete delivers. If none
// comes within `deadline` of the acceptance being journaled, the outcome is unknown and
// follows the contract's reconciliation (a lookup, or a person), never a blind retry.
struct CompletionPolicy {
  std::chrono::milliseconds deadline{0};  // 0: the tool never answers "accepted"

  bool declared() const { return deadline.count() != 0; }
  friend bool operator==(const CompletionPolicy&, const CompletionPolicy&) = default;
};

struct ToolContract {
  std::string name;         // [a-z0-9_.-]+, unique in a registry
  std::string description;  // the intended effect, in one sentence
  // Defaults to the most cautious class, the one a tool without a contract gets.
  SideEffect side_effect = SideEffect::kNonRepeatableWrite;
  // Hard deadline of one attempt: past it the attempt can no longer land, and its outcome is
  // unknown.
  std::chrono::milliseconds attempt_timeout{0};
  // Optional (0: not declared): the longest a running attempt may go without its tool calling
  // ToolCallContext::Heartbeat. Past it the attempt is treated as lost, as at its deadline:
  // its outcome is unknown (code heartbeat_timeout) and the class-by-failure table decides
  // (a read is retried, a non_repeatable_write reconciled). Only the tool's own heartbeats
  // count, not the worker's automatic renewal of the tasks it holds: a stuck tool must be
  // seen to stop. Without it, a server-wide lease (the worker's renewals) is all that applies.
  // Must be shorter than attempt_timeout.
  std::chrono::milliseconds heartbeat_timeout{0};
  // Optional (0: not declared): the longest an attempt may wait in a task queue for a worker.
  // Past it, no worker having taken it, the server withdraws it: the attempt is known not to
  // have started, so it fails as retryable whatever the side effect (code
  // schedule_to_start_timeout), retried while attempts are left. Must be shorter than
  // attempt_timeout. Embedded mode has no queue and never applies it.
  std::chrono::milliseconds schedule_to_start_timeout{0};
  RetryPolicy retry;
  ReconcilePolicy reconcile;
  ApprovalRule approval;
  // deduplicated_write only: how long the provider remembers a key (Stripe: 24 h). Past it a
  // retry is no longer safe and the step is treated as non_repeatable_write.
  std::optional<std::chrono::seconds> dedup_window;
  // Dotted input paths left out of the intent hash, the journal's plain columns and traces.
  std::vector<std::string> secret_fields;
  boost::json::value input_schema;  // JSON Schema (base/json_schema.h) with "type": "object"
  // Optional (null: not declared): a JSON Schema of what a success returns. Agent plans use it
  // to check, before anything runs, that a reference like steps.lookup.output.amount_cents
  // names a field the tool returns.
  boost::json::value output_schema;
  // The provider's codes whose meaning is documented: a definitive rejection (the step fails,
  // nothing happened), or an outcome that is unknown whatever the report said.
  std::vector<std::string> definitive_codes;
  std::vector<std::string> unknown_codes;
  std::string evidence;  // what proves the final state; required for writes
  // Optional: the tool may answer "accepted" and complete later (above). Writes only, and
  // only with an explicit reconcile mode (lookup or needs_human) and
  // retry.reconcile_on_unknown: a completion that never comes is an unknown outcome.
  CompletionPolicy completion;

  friend bool operator==(const ToolContract&, const ToolContract&) = default;
};

// Success if `contract` can be registered. Otherwise one Errc::kInvalidArgument error listing
// every problem, each saying what to set: "contract 'send_refund': non_repeatable_write needs
// a reconcile lookup or an explicit needs_human fallback (set reconcile.mode); ...".
Result<void> ValidateContract(const ToolContract& contract);

// Whether `input` needs approval under the contract's rule (contract/approval_rule.h).
inline Result<bool> ApprovalRequired(const ToolContract& contract,
                                     const boost::json::value& input) {
  return ApprovalRequired(contract.approval, input);
}

}  // namespace reckon
