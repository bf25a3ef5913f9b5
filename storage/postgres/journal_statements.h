// Private to the PostgreSQL journal: the statements it prepares on its connection at open,
// by name, and the readers of the rows they return. Every parameter is cast to its type,
// since all of them travel in binary (postgres/pg.h).
#pragma once

#include <span>

#include "reckon/base/error.h"
#include "reckon/storage/postgres/pg.h"
#include "reckon/storage/rows.h"

namespace reckon::storage::pg {

// Names of the prepared statements.
inline constexpr const char* kFindRun = "find_run";
inline constexpr const char* kLockRun = "lock_run";
inline constexpr const char* kFindLatestRun = "find_latest_run";
inline constexpr const char* kListRuns = "list_runs";
inline constexpr const char* kListRunsByStatus = "list_runs_by_status";
inline constexpr const char* kInsertRun = "insert_run";
inline constexpr const char* kUpdateRun = "update_run";
inline constexpr const char* kInsertEvent = "insert_event";
inline constexpr const char* kReadEvents = "read_events";
inline constexpr const char* kUpsertOperation = "upsert_operation";
inline constexpr const char* kFindOperation = "find_operation";
inline constexpr const char* kListOperations = "list_operations";
inline constexpr const char* kUpsertTimer = "upsert_timer";
inline constexpr const char* kDeleteTimer = "delete_timer";
inline constexpr const char* kUpsertApproval = "upsert_approval";
inline constexpr const char* kInsertOutbox = "insert_outbox";
inline constexpr const char* kPutContract = "put_contract";
inline constexpr const char* kListContracts = "list_contracts";
// Cluster mode: a shard's lease row, locked FOR SHARE until the append's transaction ends, so
// that a takeover waits for an append already checked against the lease.
inline constexpr const char* kLockShardLease = "lock_shard_lease";

// Prepares every statement above on `conn`.
Result<void> PrepareJournalStatements(PgConnection& conn);

// Column lists shared by the run and operation queries and their readers.
inline constexpr const char* kRunColumns =
    "run_pk, workflow_id, run_id, workflow_type, status, next_seq, created_at_us, "
    "updated_at_us";
inline constexpr const char* kQualifiedRunColumns =
    "r.run_pk, r.workflow_id, r.run_id, r.workflow_type, r.status, r.next_seq, "
    "r.created_at_us, r.updated_at_us";
// Errc::kCorruption for a status the release does not know.
Result<RunRow> ReadRun(const PgResult& result, int row);

inline constexpr const char* kOperationColumns =
    "operation_id, step_id, tool, side_effect, state, attempt, fingerprint, contract_hash, "
    "provider_ref, due_at_us, run_pk, updated_at_us";
Result<OperationRow> ReadOperation(const PgResult& result, int row);

}  // namespace reckon::storage::pg
