// Operation ids: stable for one run and step, distinct across runs, namespaces and versions,
// and unchanged for the runs journaled before run-scoped ids (version 0).
#include "reckon/engine/operation_id.h"

#include <gtest/gtest.h>

namespace reckon {
namespace {

IdScope Scope(std::string ns, std::string workflow_id, std::string run_id) {
  return IdScope{kRunScopedIds, std::move(ns), std::move(workflow_id), std::move(run_id)};
}

TEST(OperationId, IsStableForOneRunAndStep) {
  const std::string id = OperationIdFor(Scope("default", "refund-1", "r1"), "send_refund#2");
  EXPECT_EQ(id, OperationIdFor(Scope("default", "refund-1", "r1"), "send_refund#2"));
  EXPECT_EQ(id.size(), 3u + 32u);
  EXPECT_EQ(id.substr(0, 3), "op_");
  // Pinned, as the legacy value below: a provider holds these keys. SHA-256 over
  // "v2/7:default8:refund-12:r113:send_refund#2", 32 hex digits.
  EXPECT_EQ(id, "op_56c8c24326557610a786b6e3906074b9");
}

TEST(OperationId, DiffersAcrossRunsNamespacesAndSteps) {
  const std::string id = OperationIdFor(Scope("default", "refund-1", "r1"), "send_refund#2");
  // The next run of the workflow id (continue-as-new), or the same workflow id in another
  // journal, must never send the provider the same idempotency key.
  EXPECT_NE(id, OperationIdFor(Scope("default", "refund-1", "r2"), "send_refund#2"));
  EXPECT_NE(id, OperationIdFor(Scope("staging", "refund-1", "r1"), "send_refund#2"));
  EXPECT_NE(id, OperationIdFor(Scope("default", "refund-2", "r1"), "send_refund#2"));
  EXPECT_NE(id, OperationIdFor(Scope("default", "refund-1", "r1"), "send_refund#3"));
  // Length-prefixed parts: moving bytes across a boundary changes the id.
  EXPECT_NE(OperationIdFor(Scope("a", "bc", "r"), "s"), OperationIdFor(Scope("ab", "c", "r"), "s"));
  EXPECT_NE(OperationIdFor(Scope("n", "w", "r1"), "s"), OperationIdFor(Scope("n", "w", "r"), "1s"));
}

// Runs journaled before version 2 keep the ids they were given: a digest of the workflow id and
// the step id alone. The value is pinned so that a change to the derivation cannot slip by:
// a provider holds these keys.
TEST(OperationId, LegacyRunsKeepTheirIds) {
  IdScope legacy{kWorkflowScopedIds, "ignored", "refund-1", "ignored"};
  const std::string id = OperationIdFor(legacy, "send_refund#2");
  EXPECT_EQ(id, OperationIdFor(IdScope{kWorkflowScopedIds, "", "refund-1", "r9"}, "send_refund#2"));
  EXPECT_EQ(id, "op_560062c6b5b8d1c4cc20fad504e65486");
  EXPECT_NE(id, OperationIdFor(Scope("", "refund-1", ""), "send_refund#2"));
}

}  // namespace
}  // namespace reckon
