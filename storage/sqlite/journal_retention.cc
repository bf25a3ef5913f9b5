// SqliteJournal retention: the finished runs an archive pass may take, and the deletion of one
// (storage/journal.h, "retention"; storage/archive.h). A deletion is one IMMEDIATE transaction
// that checks the run first and deletes nothing when a check fails.
#include <string>

#include "reckon/storage/sqlite/journal_statements.h"
#include "reckon/storage/sqlite/sqlite_journal.h"

namespace reckon::storage {

Result<std::vector<RunRow>> SqliteJournal::ListArchivable(std::int64_t updated_before_us,
                                                          std::size_t limit) {
  // Pending outbox messages are few and indexed (outbox_pending), so the NOT EXISTS is cheap.
  RECKON_TRY(Statement stmt,
             db_.Prepare(std::string("SELECT ") + kRunColumns +
                         " FROM runs WHERE status IN ('completed', 'failed', 'cancelled')"
                         " AND updated_at_us < ?1 AND NOT EXISTS (SELECT 1 FROM outbox o"
                         " WHERE o.published_at_us = 0 AND o.run_pk = runs.run_pk)"
                         " ORDER BY run_pk LIMIT ?2"));
  stmt.Bind(1, updated_before_us).Bind(2, static_cast<std::int64_t>(limit));
  std::vector<RunRow> rows;
  for (;;) {
    RECKON_TRY(bool more, stmt.Step());
    if (!more) break;
    RECKON_TRY(RunRow row, ReadRun(stmt));
    rows.push_back(std::move(row));
  }
  return rows;
}

namespace {

// The checks and deletes of DeleteRun, inside its transaction.
Result<void> DeleteRunRows(SqliteDb& db, const RunRef& run, std::int64_t expected_next_seq) {
  const std::string name = "run '" + run.workflow_id + "/" + run.run_id + "'";
  RECKON_TRY(Statement find,
             db.Prepare("SELECT run_pk, status, next_seq FROM runs"
                        " WHERE workflow_id = ?1 AND run_id = ?2"));
  find.Bind(1, run.workflow_id).Bind(2, run.run_id);
  RECKON_TRY(bool found, find.Step());
  if (!found) return Err(Errc::kNotFound, name + " is not in the journal (deleted already?)");
  const std::int64_t run_pk = find.ColumnInt(0);
  const std::string status(find.ColumnText(1));
  const std::int64_t next_seq = find.ColumnInt(2);
  if (status == "running") {
    return Err(Errc::kFailedPrecondition, name + " is running; only finished runs are deleted");
  }
  if (next_seq != expected_next_seq) {
    return Err(Errc::kConflict, name + " is at sequence " + std::to_string(next_seq) +
                                    ", not " + std::to_string(expected_next_seq) +
                                    " as when it was read; archive it again");
  }
  RECKON_TRY(Statement pending,
             db.Prepare("SELECT message_id FROM outbox WHERE published_at_us = 0 AND run_pk = ?1"
                        " LIMIT 1"));
  pending.Bind(1, run_pk);
  RECKON_TRY(bool undelivered, pending.Step());
  if (undelivered) {
    return Err(Errc::kFailedPrecondition,
               name + " has an outbox message not delivered yet ('" +
                   std::string(pending.ColumnText(0)) + "'); it is deleted once delivered");
  }
  constexpr const char* kDeletes[] = {
      "DELETE FROM outbox_attempts WHERE message_id IN"
      " (SELECT message_id FROM outbox WHERE run_pk = ?1)",
      // TODO(perf): the outbox has no index by run_pk; this scans the delivered messages.
      "DELETE FROM outbox WHERE run_pk = ?1",
      "DELETE FROM approvals WHERE run_pk = ?1 AND operation_id IN"
      " (SELECT operation_id FROM operations WHERE run_pk = ?1)",
      "DELETE FROM timers WHERE run_pk = ?1",
      "DELETE FROM operations WHERE run_pk = ?1",
      "DELETE FROM events WHERE run_pk = ?1",
      "DELETE FROM runs WHERE run_pk = ?1",
  };
  for (const char* sql : kDeletes) {
    RECKON_TRY(Statement stmt, db.Prepare(sql));
    stmt.Bind(1, run_pk);
    RECKON_TRY(stmt.Run());
  }
  return Ok();
}

}  // namespace

Result<void> SqliteJournal::DeleteRun(const RunRef& run, std::int64_t expected_next_seq) {
  if (poisoned_) {
    return Err(Errc::kUnavailable, "journal '" + path() + "' refused the deletion: an earlier "
                                   "commit failed; restart the process to reopen it");
  }
  RECKON_TRY(db_.Exec("BEGIN IMMEDIATE"));
  if (auto deleted = DeleteRunRows(db_, run, expected_next_seq); !deleted) {
    (void)db_.Exec("ROLLBACK");
    return deleted.error();
  }
  if (auto committed = db_.Exec("COMMIT"); !committed) {
    (void)db_.Exec("ROLLBACK");
    poisoned_ = true;  // as for an append: whether it reached the disk is unknown
    return committed.error().WithContext("committing the deletion of a run");
  }
  return Ok();
}

}  // namespace reckon::storage
