#include "reckon/storage/postgres/journal_statements.h"

#include <string>

#include "reckon/base/enum_names.h"

namespace reckon::storage::pg {

Result<void> PrepareJournalStatements(PgConnection& conn) {
  const std::string runs = std::string("SELECT ") + kRunColumns + " FROM runs ";
  const std::string ops = std::string("SELECT ") + kOperationColumns + " FROM operations ";
  struct Entry {
    const char* name;
    std::string sql;
  };
  const Entry entries[] = {
      {kFindRun, runs + "WHERE workflow_id = $1::text AND run_id = $2::text"},
      // The row lock makes the conditional append hold against writers on other connections:
      // a second appender waits for the first one's transaction, then reads its next_seq.
      {kLockRun,
       "SELECT run_pk, next_seq FROM runs WHERE workflow_id = $1::text AND run_id = $2::text "
       "FOR UPDATE"},
      {kFindLatestRun,
       runs + "WHERE workflow_id = $1::text ORDER BY run_pk DESC LIMIT 1"},
      {kListRuns, runs + "ORDER BY run_pk"},
      {kListRunsByStatus, runs + "WHERE status = $1::text ORDER BY run_pk"},
      // Nothing returned: another connection created the run first (a conflict).
      {kInsertRun,
       "INSERT INTO runs (workflow_id, run_id, workflow_type, status, next_seq, created_at_us, "
       "updated_at_us) VALUES ($1::text, $2::text, $3::text, 'running', 1, $4::bigint, "
       "$4::bigint) ON CONFLICT (workflow_id, run_id) DO NOTHING RETURNING run_pk"},
      {kUpdateRun,
       "UPDATE runs SET next_seq = $2::bigint, status = coalesce($3::text, status), "
       "workflow_type = coalesce($4::text, workflow_type), updated_at_us = $5::bigint "
       "WHERE run_pk = $1::bigint"},
      {kInsertEvent,
       "INSERT INTO events (run_pk, seq, type, recorded_at_us, payload) "
       "VALUES ($1::bigint, $2::bigint, $3::bigint, $4::bigint, $5::bytea)"},
      {kReadEvents,
       "SELECT seq, type, recorded_at_us, payload FROM events "
       "WHERE run_pk = $1::bigint AND seq >= $2::bigint ORDER BY seq"},
      {kUpsertOperation,
       "INSERT INTO operations (operation_id, step_id, tool, side_effect, state, attempt, "
       "fingerprint, contract_hash, provider_ref, due_at_us, run_pk, updated_at_us) "
       "VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, $6::bigint, $7::text, "
       "$8::text, $9::text, $10::bigint, $11::bigint, $12::bigint) "
       "ON CONFLICT (run_pk, operation_id) DO UPDATE SET state = excluded.state, "
       "attempt = excluded.attempt, provider_ref = excluded.provider_ref, "
       "due_at_us = excluded.due_at_us, updated_at_us = excluded.updated_at_us"},
      {kFindOperation, ops + "WHERE operation_id = $1::text"},
      {kListOperations, ops + "WHERE run_pk = $1::bigint ORDER BY step_id"},
      {kUpsertTimer,
       "INSERT INTO timers (run_pk, timer_id, fire_at_us) "
       "VALUES ($1::bigint, $2::text, $3::bigint) "
       "ON CONFLICT (run_pk, timer_id) DO UPDATE SET fire_at_us = excluded.fire_at_us"},
      {kDeleteTimer, "DELETE FROM timers WHERE run_pk = $1::bigint AND timer_id = $2::text"},
      {kUpsertApproval,
       "INSERT INTO approvals (approval_id, operation_id, run_pk, intent_hash, state, "
       "decided_by, expires_at_us, updated_at_us) VALUES ($1::text, $2::text, $3::bigint, "
       "$4::text, $5::text, $6::text, $7::bigint, $8::bigint) "
       "ON CONFLICT (approval_id) DO UPDATE SET state = excluded.state, "
       "decided_by = excluded.decided_by, expires_at_us = excluded.expires_at_us, "
       "updated_at_us = excluded.updated_at_us"},
      {kInsertOutbox,
       "INSERT INTO outbox (message_id, run_pk, step_id, topic, payload, key_id, created_at_us) "
       "VALUES ($1::text, $2::bigint, $3::text, $4::text, $5::bytea, $6::text, $7::bigint)"},
      {kPutContract,
       "INSERT INTO contracts (name, hash, contract_json, registered_at_us) "
       "VALUES ($1::text, $2::text, $3::text, $4::bigint) ON CONFLICT (name) DO NOTHING"},
      {kListContracts,
       "SELECT name, hash, contract_json, registered_at_us FROM contracts ORDER BY name"},
      {kLockShardLease,
       "SELECT owner, epoch FROM reckon_shard_leases WHERE shard = $1::bigint FOR SHARE"},
  };
  for (const Entry& entry : entries) {
    RECKON_TRY(conn.Prepare(entry.name, entry.sql));
  }
  return Ok();
}

Result<RunRow> ReadRun(const PgResult& r, int row) {
  RunRow out;
  out.run_pk = r.Int(row, 0);
  out.ref.workflow_id = r.Text(row, 1);
  out.ref.run_id = r.Text(row, 2);
  out.workflow_type = r.Text(row, 3);
  RECKON_TRY(out.status, FromStored(ParseRunStatus(r.Text(row, 4)), "runs.status"));
  out.next_seq = r.Int(row, 5);
  out.created_at_us = r.Int(row, 6);
  out.updated_at_us = r.Int(row, 7);
  return out;
}

Result<OperationRow> ReadOperation(const PgResult& r, int row) {
  OperationRow out;
  out.operation_id = r.Text(row, 0);
  out.step_id = r.Text(row, 1);
  out.tool = r.Text(row, 2);
  RECKON_TRY(out.side_effect,
             FromStored(ParseSideEffect(r.Text(row, 3)), "operations.side_effect"));
  out.state = r.Text(row, 4);
  out.attempt = r.Int(row, 5);
  out.intent_hash = r.Text(row, 6);
  out.contract_hash = r.Text(row, 7);
  out.provider_ref = r.Text(row, 8);
  out.due_at_us = r.Int(row, 9);
  out.run_pk = r.Int(row, 10);
  out.updated_at_us = r.Int(row, 11);
  return out;
}

}  // namespace reckon::storage::pg
