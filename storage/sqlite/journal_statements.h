// Private to the SQLite journal: its prepared statements, made once per connection.
#pragma once

#include "reckon/storage/sqlite/sqlite_journal.h"

namespace reckon::storage {

struct SqliteJournal::Statements {
  friend class SqliteJournal;
  static Result<std::unique_ptr<Statements>> Prepare(SqliteDb& db);

  Statement begin, commit, rollback;
  Statement savepoint, release, rollback_to;
  Statement find_run, find_latest_run, list_runs, list_runs_by_status;
  Statement insert_run, update_run;
  Statement insert_event, read_events;
  Statement upsert_operation, find_operation, list_operations;
  Statement upsert_timer, delete_timer;
  Statement upsert_approval;
  Statement insert_outbox;
  Statement put_contract, list_contracts;
};

// Column list shared by the run queries and ReadRun().
inline constexpr const char* kRunColumns =
    "run_pk, workflow_id, run_id, workflow_type, status, next_seq, created_at_us, "
    "updated_at_us";
// Errc::kCorruption for a status the release does not know.
Result<RunRow> ReadRun(const Statement& stmt);

inline constexpr const char* kOperationColumns =
    "operation_id, step_id, tool, side_effect, state, attempt, fingerprint, contract_hash, "
    "provider_ref, due_at_us, run_pk, updated_at_us";
Result<OperationRow> ReadOperation(const Statement& stmt);

}  // namespace reckon::storage
