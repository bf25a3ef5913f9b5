// PostgresJournal retention: the finished runs an archive pass may take, and the deletion of
// one (storage/journal.h, "retention"; storage/archive.h). A deletion is one transaction that
// locks the run's row, checks it, and deletes nothing when a check fails. A cluster member
// (a journal with a shard fence) refuses deletions: retention runs only on a plain server.
#include <string>

#include "reckon/storage/postgres/journal_statements.h"
#include "reckon/storage/postgres/postgres_journal.h"

namespace reckon::storage {

Result<std::vector<RunRow>> PostgresJournal::ListArchivable(std::int64_t updated_before_us,
                                                            std::size_t limit) {
  PgParams params;
  params.Add(updated_before_us).Add(static_cast<std::int64_t>(limit));
  RECKON_TRY(PgResult result,
             conn_.Query(std::string("SELECT ") + pg::kRunColumns +
                             " FROM runs WHERE status IN ('completed', 'failed', 'cancelled')"
                             " AND updated_at_us < $1::bigint AND NOT EXISTS (SELECT 1 FROM"
                             " outbox o WHERE o.published_at_us = 0 AND o.run_pk = runs.run_pk)"
                             " ORDER BY run_pk LIMIT $2::bigint",
                         params));
  std::vector<RunRow> rows;
  for (int i = 0; i < result.rows(); ++i) {
    RECKON_TRY(RunRow row, pg::ReadRun(result, i));
    rows.push_back(std::move(row));
  }
  return rows;
}

namespace {

Result<void> DeleteRunRows(PgConnection& conn, const RunRef& run,
                           std::int64_t expected_next_seq) {
  const std::string name = "run '" + run.workflow_id + "/" + run.run_id + "'";
  PgParams key;
  key.Add(run.workflow_id).Add(run.run_id);
  RECKON_TRY(PgResult found,
             conn.Query("SELECT run_pk, status, next_seq FROM runs WHERE workflow_id = $1::text"
                        " AND run_id = $2::text FOR UPDATE",
                        key));
  if (found.rows() == 0) {
    return Err(Errc::kNotFound, name + " is not in the journal (deleted already?)");
  }
  const std::int64_t run_pk = found.Int(0, 0);
  if (found.Text(0, 1) == "running") {
    return Err(Errc::kFailedPrecondition, name + " is running; only finished runs are deleted");
  }
  if (found.Int(0, 2) != expected_next_seq) {
    return Err(Errc::kConflict, name + " is at sequence " + std::to_string(found.Int(0, 2)) +
                                    ", not " + std::to_string(expected_next_seq) +
                                    " as when it was read; archive it again");
  }
  PgParams pk;
  pk.Add(run_pk);
  RECKON_TRY(PgResult pending,
             conn.Query("SELECT message_id FROM outbox WHERE published_at_us = 0 AND"
                        " run_pk = $1::bigint LIMIT 1",
                        pk));
  if (pending.rows() > 0) {
    return Err(Errc::kFailedPrecondition,
               name + " has an outbox message not delivered yet ('" +
                   std::string(pending.Text(0, 0)) + "'); it is deleted once delivered");
  }
  constexpr const char* kDeletes[] = {
      "DELETE FROM outbox_attempts WHERE message_id IN"
      " (SELECT message_id FROM outbox WHERE run_pk = $1::bigint)",
      // TODO(perf): the outbox has no index by run_pk; this scans the delivered messages.
      "DELETE FROM outbox WHERE run_pk = $1::bigint",
      "DELETE FROM approvals WHERE run_pk = $1::bigint AND operation_id IN"
      " (SELECT operation_id FROM operations WHERE run_pk = $1::bigint)",
      "DELETE FROM timers WHERE run_pk = $1::bigint",
      "DELETE FROM operations WHERE run_pk = $1::bigint",
      "DELETE FROM events WHERE run_pk = $1::bigint",
      "DELETE FROM runs WHERE run_pk = $1::bigint",
  };
  for (const char* sql : kDeletes) {
    RECKON_TRY(conn.Query(sql, pk));
  }
  return Ok();
}

}  // namespace

Result<void> PostgresJournal::DeleteRun(const RunRef& run, std::int64_t expected_next_seq) {
  if (fence_ != nullptr) {
    return Err(Errc::kFailedPrecondition,
               "a cluster member does not delete runs; archive with `reckon admin archive` "
               "while no server holds the journal");
  }
  if (poisoned_ || conn_.broken()) {
    poisoned_ = true;
    return Poisoned();
  }
  RECKON_TRY(conn_.Exec("BEGIN"));
  if (auto deleted = DeleteRunRows(conn_, run, expected_next_seq); !deleted) {
    if (conn_.broken()) poisoned_ = true;
    (void)conn_.Exec("ROLLBACK");
    return deleted.error();
  }
  auto committed = conn_.Command("COMMIT");
  if (!committed || committed.value().command() != "COMMIT") {
    (void)conn_.Exec("ROLLBACK");
    poisoned_ = true;  // as for an append: whether it was kept is unknown
    return committed ? Err(Errc::kUnavailable, "the deletion of a run was rolled back at COMMIT")
                     : committed.error().WithContext("committing the deletion of a run");
  }
  return Ok();
}

}  // namespace reckon::storage
