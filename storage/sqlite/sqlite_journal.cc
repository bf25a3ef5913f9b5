#include "reckon/storage/sqlite/sqlite_journal.h"

#include <cstring>
#include <filesystem>
#include <utility>

#include "reckon/storage/sqlite/journal_check.h"
#include "reckon/storage/sqlite/journal_checksums.h"
#include "reckon/storage/sqlite/journal_statements.h"
#include "reckon/storage/sqlite/schema.h"
#include "reckon/storage/outbox_store.h"

namespace reckon::storage {
namespace {

const char* SyncPragma(SqliteJournalOptions::Sync sync) {
  switch (sync) {
    case SqliteJournalOptions::Sync::kFull: return "PRAGMA synchronous = FULL";
    case SqliteJournalOptions::Sync::kNormal: return "PRAGMA synchronous = NORMAL";
    case SqliteJournalOptions::Sync::kOff: return "PRAGMA synchronous = OFF";
  }
  return "PRAGMA synchronous = FULL";
}

std::span<const std::byte> AsBytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

}  // namespace

Result<std::unique_ptr<SqliteJournal::Statements>> SqliteJournal::Statements::Prepare(
    SqliteDb& db) {
  auto s = std::make_unique<Statements>();
  const std::string runs = std::string("SELECT ") + kRunColumns + " FROM runs ";
  const std::string ops = std::string("SELECT ") + kOperationColumns + " FROM operations ";
  struct Entry {
    Statement* stmt;
    std::string sql;
  };
  const Entry entries[] = {
      {&s->begin, "BEGIN IMMEDIATE"},
      {&s->commit, "COMMIT"},
      {&s->rollback, "ROLLBACK"},
      {&s->savepoint, "SAVEPOINT append"},
      {&s->release, "RELEASE append"},
      {&s->rollback_to, "ROLLBACK TO append"},
      {&s->find_run, runs + "WHERE workflow_id = ?1 AND run_id = ?2"},
      {&s->find_latest_run, runs + "WHERE workflow_id = ?1 ORDER BY run_pk DESC LIMIT 1"},
      {&s->list_runs, runs + "ORDER BY run_pk"},
      {&s->list_runs_by_status, runs + "WHERE status = ?1 ORDER BY run_pk"},
      {&s->insert_run,
       "INSERT INTO runs (workflow_id, run_id, workflow_type, status, next_seq, created_at_us, "
       "updated_at_us) VALUES (?1, ?2, ?3, 'running', 1, ?4, ?4)"},
      {&s->update_run,
       "UPDATE runs SET next_seq = ?2, status = coalesce(?3, status), "
       "workflow_type = coalesce(?4, workflow_type), updated_at_us = ?5 WHERE run_pk = ?1"},
      {&s->insert_event,
       "INSERT INTO events (run_pk, seq, type, recorded_at_us, payload) "
       "VALUES (?1, ?2, ?3, ?4, ?5)"},
      {&s->read_events,
       "SELECT seq, type, recorded_at_us, payload FROM events "
       "WHERE run_pk = ?1 AND seq >= ?2 ORDER BY seq"},
      {&s->upsert_operation,
       "INSERT INTO operations (operation_id, step_id, tool, side_effect, state, attempt, "
       "fingerprint, contract_hash, provider_ref, due_at_us, run_pk, updated_at_us) "
       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) "
       "ON CONFLICT (run_pk, operation_id) DO UPDATE SET state = excluded.state, "
       "attempt = excluded.attempt, provider_ref = excluded.provider_ref, "
       "due_at_us = excluded.due_at_us, updated_at_us = excluded.updated_at_us"},
      {&s->find_operation, ops + "WHERE operation_id = ?1"},
      {&s->list_operations, ops + "WHERE run_pk = ?1 ORDER BY step_id"},
      {&s->upsert_timer,
       "INSERT INTO timers (run_pk, timer_id, fire_at_us) VALUES (?1, ?2, ?3) "
       "ON CONFLICT (run_pk, timer_id) DO UPDATE SET fire_at_us = excluded.fire_at_us"},
      {&s->delete_timer, "DELETE FROM timers WHERE run_pk = ?1 AND timer_id = ?2"},
      {&s->upsert_approval,
       "INSERT INTO approvals (approval_id, operation_id, run_pk, intent_hash, state, "
       "decided_by, expires_at_us, updated_at_us) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
       "ON CONFLICT (approval_id) DO UPDATE SET state = excluded.state, "
       "decided_by = excluded.decided_by, expires_at_us = excluded.expires_at_us, "
       "updated_at_us = excluded.updated_at_us"},
      {&s->insert_outbox,
       "INSERT INTO outbox (message_id, run_pk, step_id, topic, payload, key_id, created_at_us) "
       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"},
      {&s->put_contract,
       "INSERT INTO contracts (name, hash, contract_json, registered_at_us) "
       "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (name) DO NOTHING"},
      {&s->list_contracts,
       "SELECT name, hash, contract_json, registered_at_us FROM contracts ORDER BY name"},
  };
  for (const Entry& entry : entries) {
    RECKON_TRY(*entry.stmt, db.Prepare(entry.sql));
  }
  return s;
}

SqliteJournal::SqliteJournal(SqliteDb db, int schema_version, std::unique_ptr<Statements> stmts,
                             const PayloadCodec* payload_codec)
    : db_(std::move(db)),
      schema_version_(schema_version),
      payload_codec_(payload_codec),
      decoder_(payload_codec),
      stmts_(std::move(stmts)) {}

SqliteJournal::~SqliteJournal() {
  stmts_.reset();  // statements must be finalized before the connection closes
}

Result<std::unique_ptr<Journal>> OpenSqliteJournal(const std::string& path,
                                                   SqliteJournalOptions options) {
  RECKON_TRY(auto journal, SqliteJournal::Open(path, options));
  return std::unique_ptr<Journal>(std::move(journal));
}

Result<std::unique_ptr<SqliteJournal>> SqliteJournal::Open(const std::string& path,
                                                           SqliteJournalOptions options) {
  using Mode = SqliteJournalOptions::Mode;
  std::optional<JournalLock> lock;
  if (options.mode == Mode::kOwner) {
    RECKON_TRY(JournalLock acquired, JournalLock::Acquire(path));  // before touching the file
    lock.emplace(std::move(acquired));
  }
  const bool read_only = options.mode == Mode::kReadOnly;
  if (read_only && !std::filesystem::exists(path)) {
    return Err(Errc::kNotFound, "journal '" + path + "' does not exist");
  }
  RECKON_TRY(SqliteDb db, SqliteDb::Open(path, read_only, options.vfs));
  db.SetBusyWait(options.busy_timeout);
  if (options.mode == Mode::kOwner && options.page_checksums) {
    RECKON_TRY(bool created, ReserveChecksumsIfNew(db));  // before anything is written
    (void)created;
  }
  if (options.mode == Mode::kOwner && options.check_at_open) {
    RECKON_TRY(QuickCheckAtOpen(db));
  }
  RECKON_TRY(std::string mode, db.QueryText("PRAGMA journal_mode = WAL"));
  if (mode != "wal") {
    return Err(Errc::kUnavailable, "journal '" + path + "' could not switch to WAL mode (got '" +
                                       mode + "'); is the file on a filesystem that supports it?");
  }
  RECKON_TRY(db.Exec(SyncPragma(options.sync)));
  RECKON_TRY(db.Exec("PRAGMA wal_autocheckpoint = " +
                     std::to_string(options.wal_autocheckpoint_pages)));
  RECKON_TRY(db.Exec("PRAGMA cache_size = -" + std::to_string(options.cache_kib)));
  if (read_only) {
    RECKON_TRY(RequireCurrentSchema(db));
  } else {
    RECKON_TRY(MigrateForward(db, JournalMigrations()));
  }
  RECKON_TRY(std::int64_t version, db.QueryInt("PRAGMA user_version"));
  RECKON_TRY(bool checksums, HasPageChecksums(db));
  RECKON_TRY(auto stmts, Statements::Prepare(db));
  std::unique_ptr<SqliteJournal> journal(new SqliteJournal(
      std::move(db), static_cast<int>(version), std::move(stmts), options.payload_codec));
  journal->lock_ = std::move(lock);
  if (!checksums) journal->integrity_warning_ = NoChecksumsWarning(path);
  return journal;
}

Result<AppendAck> SqliteJournal::Append(const AppendRequest& request) {
  const AppendRequest* one[] = {&request};
  return std::move(AppendGroup(one).front());
}

std::vector<Result<AppendAck>> SqliteJournal::AppendGroup(
    std::span<const AppendRequest* const> requests) {
  std::vector<Result<AppendAck>> results;
  results.reserve(requests.size());
  auto fail_all = [&](const Error& error) {
    results.clear();
    for (std::size_t i = 0; i < requests.size(); ++i) results.emplace_back(error);
    return std::move(results);
  };
  if (poisoned_) {
    return fail_all(Err(Errc::kUnavailable,
                        "journal '" + path() + "' refused the append: an earlier commit failed, "
                        "so what reached the disk is unknown; restart the process to reopen it"));
  }
  if (auto begun = stmts_->begin.Run(); !begun) return fail_all(begun.error());

  bool any_applied = false;
  for (const AppendRequest* request : requests) {
    if (auto saved = stmts_->savepoint.Run(); !saved) {
      results.emplace_back(saved.error());
      continue;
    }
    auto applied = ApplyOne(*request);
    for (const AppendRequest& next : request->chained) {
      if (!applied) break;
      if (auto chained = ApplyOne(next); !chained) applied = chained.error();
    }
    if (applied) {
      (void)stmts_->release.Run();
      any_applied = true;
    } else {
      (void)stmts_->rollback_to.Run();
      (void)stmts_->release.Run();
    }
    results.push_back(std::move(applied));
    if (sqlite3_get_autocommit(db_.handle()) != 0) {
      // An I/O error made SQLite abandon the whole transaction: nothing of it will commit.
      // A damaged file stays a corruption error: retrying cannot help.
      const Result<AppendAck>& last = results.back();
      if (!last && last.error().code() == Errc::kCorruption) return fail_all(last.error());
      return fail_all(Err(Errc::kUnavailable, "journal transaction was rolled back by SQLite "
                                              "after an error; retry the append"));
    }
  }
  if (!any_applied) {
    (void)stmts_->rollback.Run();
    return results;
  }
  if (auto committed = stmts_->commit.Run(); !committed) {
    // SQLite rolls the transaction back when COMMIT fails with an I/O error, but whether the
    // WAL frames reached the disk is unknown: stop writing until the process reopens the file.
    (void)db_.Exec("ROLLBACK");
    poisoned_ = true;
    return fail_all(committed.error().WithContext("committing journal transaction"));
  }
  return results;
}

Result<AppendAck> SqliteJournal::ApplyOne(const AppendRequest& request) {
  const RunRef& run = request.run;
  if (request.events.empty()) {
    return Err(Errc::kInvalidArgument, "append to run '" + run.workflow_id + "/" + run.run_id +
                                           "' has no events; every state change needs one");
  }
  Statements& s = *stmts_;
  std::int64_t run_pk = 0;
  std::int64_t next_seq = 1;
  s.find_run.Reset();
  s.find_run.Bind(1, run.workflow_id).Bind(2, run.run_id);
  RECKON_TRY(bool found, s.find_run.Step());
  if (found) {
    run_pk = s.find_run.ColumnInt(0);
    next_seq = s.find_run.ColumnInt(5);
  }
  s.find_run.Reset();
  if (request.expected_next_seq != next_seq) {
    return Err(Errc::kConflict,
               "run '" + run.workflow_id + "/" + run.run_id + "' expected next sequence " +
                   std::to_string(request.expected_next_seq) + " but the journal is at " +
                   std::to_string(next_seq) + "; reload the run's history and decide again");
  }
  if (!found) {
    s.insert_run.Reset();
    s.insert_run.Bind(1, run.workflow_id)
        .Bind(2, run.run_id)
        .Bind(3, request.workflow_type.value_or(""))
        .Bind(4, request.now_us);
    RECKON_TRY(s.insert_run.Run());
    run_pk = sqlite3_last_insert_rowid(db_.handle());
  }
  const std::int64_t first_seq = next_seq;
  for (const EventBody& body : request.events) {
    const EventPlace place{run.workflow_id, run.run_id, next_seq};
    RECKON_TRY(std::string stored, EncodeStoredEvent(body, place, payload_codec_));
    encode_buffer_ = std::move(stored);
    s.insert_event.Reset();
    s.insert_event.Bind(1, run_pk)
        .Bind(2, next_seq)
        .Bind(3, static_cast<std::int64_t>(EventTypeNumber(body)))
        .Bind(4, request.now_us)
        .BindBlob(5, AsBytes(encode_buffer_));
    RECKON_TRY(s.insert_event.Run());
    ++next_seq;
  }
  s.update_run.Reset();
  s.update_run.Bind(1, run_pk).Bind(2, next_seq).Bind(5, request.now_us);
  if (request.status) s.update_run.Bind(3, RunStatusName(*request.status));
  if (request.workflow_type) s.update_run.Bind(4, *request.workflow_type);
  RECKON_TRY(s.update_run.Run());
  RECKON_TRY(ApplyDerived(request, run_pk));
  return AppendAck{run_pk, first_seq, next_seq};
}

Result<void> SqliteJournal::ApplyDerived(const AppendRequest& request, std::int64_t run_pk) {
  Statements& s = *stmts_;
  for (const OperationRow& op : request.operations) {
    s.upsert_operation.Reset();
    s.upsert_operation.Bind(1, op.operation_id)
        .Bind(2, op.step_id)
        .Bind(3, op.tool)
        .Bind(4, SideEffectName(op.side_effect))
        .Bind(5, op.state)
        .Bind(6, op.attempt)
        .Bind(7, op.intent_hash)
        .Bind(8, op.contract_hash)
        .Bind(9, op.provider_ref)
        .Bind(10, op.due_at_us)
        .Bind(11, run_pk)
        .Bind(12, request.now_us);
    RECKON_TRY(s.upsert_operation.Run());
  }
  for (const TimerRow& timer : request.timers_set) {
    s.upsert_timer.Reset();
    s.upsert_timer.Bind(1, run_pk).Bind(2, timer.timer_id).Bind(3, timer.fire_at_us);
    RECKON_TRY(s.upsert_timer.Run());
  }
  for (const std::string& timer_id : request.timers_cleared) {
    s.delete_timer.Reset();
    s.delete_timer.Bind(1, run_pk).Bind(2, timer_id);
    RECKON_TRY(s.delete_timer.Run());
  }
  for (const ApprovalRow& approval : request.approvals) {
    s.upsert_approval.Reset();
    s.upsert_approval.Bind(1, approval.approval_id)
        .Bind(2, approval.operation_id)
        .Bind(3, run_pk)
        .Bind(4, approval.intent_hash)
        .Bind(5, ApprovalStateName(approval.state))
        .Bind(6, approval.decided_by)
        .Bind(7, approval.expires_at_us)
        .Bind(8, request.now_us);
    RECKON_TRY(s.upsert_approval.Run());
  }
  for (const OutboxMessage& message : request.outbox) {
    SealedPayload stored{"", message.payload};
    if (payload_codec_ != nullptr) {
      RECKON_TRY(stored, payload_codec_->Seal(message.payload,
                                              OutboxSealContext(message.message_id)));
    }
    s.insert_outbox.Reset();
    s.insert_outbox.Bind(1, message.message_id)
        .Bind(2, run_pk)
        .Bind(3, message.step_id)
        .Bind(4, message.subject)
        .BindBlob(5, AsBytes(stored.box))
        .Bind(6, stored.key_id)
        .Bind(7, request.now_us);
    RECKON_TRY(s.insert_outbox.Run());
  }
  return Ok();
}

}  // namespace reckon::storage
