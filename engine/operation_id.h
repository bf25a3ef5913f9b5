// Operation ids: derived, never drawn. The same run and step always give the same id, so a
// replay after a crash finds the operation it already journaled, and every attempt of it
// carries the same idempotency key to the provider.
//
// What an id is derived from is the run's IdScope, fixed when the run starts and journaled in
// its WorkflowStarted (id_version, id_namespace):
//   - version 2 (kRunScopedIds, every run started by this release): the namespace, the
//     workflow id, the run id and the step id. Two runs never share an id: not the next run of
//     a workflow id (ctx.ContinueAsNew), not a workflow id reused in another journal, whose
//     idempotency key would otherwise reach the provider again and get the old run's result.
//   - version 0 (kWorkflowScopedIds): the workflow id and the step id alone. Runs journaled
//     before version 2 existed keep it for life, so their ids stay stable across replays and
//     upgrades; nothing in an existing journal is rewritten (docs/JOURNAL_FORMAT.md).
// The inputs of each version, in hashing order, are the table in contract/operation_id_facts.h,
// which the contract card states (question 3).
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace reckon {

inline constexpr std::uint32_t kWorkflowScopedIds = 0;
inline constexpr std::uint32_t kRunScopedIds = 2;

struct IdScope {
  std::uint32_t version = kRunScopedIds;
  std::string id_namespace;
  std::string workflow_id;
  std::string run_id;
};

// 32 hex digits of SHA-256 over `domain` and the length-prefixed parts of the scope that its
// version names, then the step id: the digest behind every id derived from a step (operations:
// empty domain; outbox messages: their own).
std::string StepDigest(std::string_view domain, const IdScope& scope, std::string_view step_id);

// "op_" followed by StepDigest("", scope, step_id).
std::string OperationIdFor(const IdScope& scope, std::string_view step_id);

}  // namespace reckon
