#include "reckon/storage/sqlite/sqlite_outbox_store.h"

#include <utility>

namespace reckon::storage {
namespace {

constexpr std::string_view kColumns =
    "id, message_id, run_pk, step_id, topic, created_at_us, published_at_us, stream_seq, "
    "attempts, next_attempt_at_us, last_error, key_id, payload";

OutboxRow ReadRow(const Statement& s) {
  OutboxRow row;
  row.id = s.ColumnInt(0);
  row.message_id = std::string(s.ColumnText(1));
  row.run_pk = s.ColumnInt(2);
  row.step_id = std::string(s.ColumnText(3));
  row.subject = std::string(s.ColumnText(4));
  row.created_at_us = s.ColumnInt(5);
  row.published_at_us = s.ColumnInt(6);
  row.stream_seq = s.ColumnInt(7);
  row.attempts = s.ColumnInt(8);
  row.next_attempt_at_us = s.ColumnInt(9);
  row.last_error = std::string(s.ColumnText(10));
  return row;
}

std::string BlobText(const Statement& s, int index) {
  auto blob = s.ColumnBlob(index);
  return std::string(reinterpret_cast<const char*>(blob.data()), blob.size());
}

}  // namespace

Result<std::unique_ptr<SqliteOutboxStore>> SqliteOutboxStore::Open(
    const std::string& journal_path, const PayloadCodec* codec,
    std::chrono::milliseconds busy_timeout) {
  RECKON_TRY(SqliteDb db, SqliteDb::Open(journal_path));
  db.SetBusyWait(busy_timeout);
  // Delivery records need not survive a power loss: one lost with the last WAL frames only
  // makes the dispatcher publish that message again under the same id, which the broker's
  // duplicate window and the consumer absorb (ARCHITECTURE.md, decision 41). So this
  // connection's commits do not fsync (WAL, NORMAL: the engine's next FULL commit, or a
  // checkpoint, makes them durable), and never hold the journal's write lock through an
  // fsync while the engine waits to commit.
  RECKON_TRY(db.Exec("PRAGMA synchronous = NORMAL"));
  // Checkpoints are the journal owner's (SqliteJournalOptions::wal_autocheckpoint_pages):
  // with SQLite's default of 1,000 pages this connection would copy the WAL into the file,
  // with an fsync, whenever one of its small commits found the WAL past that.
  RECKON_TRY(db.Exec("PRAGMA wal_autocheckpoint = 0"));
  RECKON_TRY(std::int64_t tables,
             db.QueryInt("SELECT count(*) FROM sqlite_master WHERE name = 'outbox_attempts'"));
  if (tables == 0) {
    return Err(Errc::kFailedPrecondition,
               "journal '" + journal_path +
                   "' has no outbox delivery records: open it with this release's engine first");
  }
  return std::unique_ptr<SqliteOutboxStore>(new SqliteOutboxStore(std::move(db), codec));
}

Result<std::string> SqliteOutboxStore::OpenPayload(const OutboxRow& row, std::string_view key_id,
                                                   std::string box) const {
  if (key_id.empty()) return box;
  if (codec_ == nullptr) {
    return Err(Errc::kFailedPrecondition,
               "outbox message '" + row.message_id + "' is sealed with key '" +
                   std::string(key_id) + "' and no payload key was given; pass the key file");
  }
  return codec_->Open(key_id, box, OutboxSealContext(row.message_id));
}

Result<Statement*> SqliteOutboxStore::Cached(Slot slot, std::string_view sql) {
  std::optional<Statement>& cached = statements_[slot];
  if (!cached) {
    RECKON_TRY(Statement prepared, db_.Prepare(sql));
    cached.emplace(std::move(prepared));
  }
  return &*cached;
}

Result<std::vector<OutboxRow>> SqliteOutboxStore::ListDue(std::int64_t now_us,
                                                          std::size_t limit) {
  static const std::string kSql = "SELECT " + std::string(kColumns) +
                                  " FROM outbox WHERE published_at_us = 0 AND "
                                  "next_attempt_at_us <= ?1 ORDER BY id LIMIT ?2";
  RECKON_TRY(Statement* s, Cached(kListDue, kSql));
  s->Bind(1, now_us).Bind(2, static_cast<std::int64_t>(limit));
  auto rows = [&]() -> Result<std::vector<OutboxRow>> {
    std::vector<OutboxRow> out;
    while (true) {
      RECKON_TRY(bool more, s->Step());
      if (!more) break;
      OutboxRow row = ReadRow(*s);
      RECKON_TRY(row.payload, OpenPayload(row, s->ColumnText(11), BlobText(*s, 12)));
      out.push_back(std::move(row));
    }
    return out;
  }();
  s->Reset();
  return rows;
}

Result<std::optional<std::int64_t>> SqliteOutboxStore::NextDueAt() {
  RECKON_TRY(Statement* s, Cached(kNextDue, "SELECT min(next_attempt_at_us) FROM outbox "
                                            "WHERE published_at_us = 0"));
  auto row = s->Step();
  std::optional<std::int64_t> next;
  if (row && row.value() && !s->ColumnIsNull(0)) next = s->ColumnInt(0);
  s->Reset();
  if (!row) return row.error();
  return next;
}

Result<OutboxStore::Backlog> SqliteOutboxStore::PendingBacklog() {
  // Both from the outbox_pending index (its entries carry the rowid, which is the id): the
  // count and the oldest id; then that one row's creation time.
  RECKON_TRY(Statement s, db_.Prepare("SELECT count(*), min(id) FROM outbox "
                                      "WHERE published_at_us = 0"));
  RECKON_TRY(bool row, s.Step());
  Backlog backlog;
  if (!row || s.ColumnIsNull(1)) return backlog;
  backlog.pending = s.ColumnInt(0);
  const std::int64_t oldest = s.ColumnInt(1);
  RECKON_TRY(Statement created, db_.Prepare("SELECT created_at_us FROM outbox WHERE id = ?1"));
  created.Bind(1, oldest);
  RECKON_TRY(bool found, created.Step());
  if (found) backlog.oldest_created_at_us = created.ColumnInt(0);
  return backlog;
}

Result<std::vector<OutboxRow>> SqliteOutboxStore::List(bool pending_only, std::size_t limit) {
  RECKON_TRY(Statement s, db_.Prepare("SELECT " + std::string(kColumns) + " FROM outbox " +
                                      (pending_only ? "WHERE published_at_us = 0 " : "") +
                                      "ORDER BY id LIMIT ?1"));
  s.Bind(1, static_cast<std::int64_t>(limit));
  std::vector<OutboxRow> rows;
  while (true) {
    RECKON_TRY(bool more, s.Step());
    if (!more) break;
    rows.push_back(ReadRow(s));
  }
  return rows;
}

Result<void> SqliteOutboxStore::RecordAttempts(std::span<const OutboxAttempt> attempts) {
  if (attempts.empty()) return Ok();
  RECKON_TRY(Statement* begin, Cached(kBegin, "BEGIN IMMEDIATE"));
  RECKON_TRY(Statement* commit, Cached(kCommit, "COMMIT"));
  RECKON_TRY(Statement* update,
             Cached(kUpdate, "UPDATE outbox SET attempts = attempts + 1, "
                             "published_at_us = CASE WHEN ?2 THEN ?3 ELSE published_at_us END, "
                             "stream_seq = CASE WHEN ?2 THEN ?4 ELSE stream_seq END, "
                             "last_error = ?5, next_attempt_at_us = ?6 "
                             "WHERE message_id = ?1 RETURNING attempts"));
  RECKON_TRY(Statement* insert,
             Cached(kInsert, "INSERT INTO outbox_attempts (message_id, attempt, at_us, outcome, "
                             "stream_seq, error) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
  RECKON_TRY(begin->Run());
  auto body = [&]() -> Result<void> {
    for (const OutboxAttempt& attempt : attempts) {
      update->Reset();
      update->Bind(1, attempt.message_id).Bind(2, std::int64_t{attempt.acked ? 1 : 0});
      update->Bind(3, attempt.at_us).Bind(4, attempt.stream_seq).Bind(5, attempt.error);
      update->Bind(6, attempt.acked ? 0 : attempt.next_attempt_at_us);
      RECKON_TRY(bool found, update->Step());
      if (!found) {
        return Err(Errc::kNotFound, "no outbox message '" + attempt.message_id + "'");
      }
      const std::int64_t number = update->ColumnInt(0);
      update->Reset();
      const char* outcome = !attempt.acked ? "failed" : attempt.duplicate ? "duplicate" : "acked";
      insert->Reset();
      insert->Bind(1, attempt.message_id).Bind(2, number).Bind(3, attempt.at_us);
      insert->Bind(4, outcome).Bind(5, attempt.stream_seq).Bind(6, attempt.error);
      RECKON_TRY(insert->Run());
    }
    return Ok();
  };
  auto done = body();
  update->Reset();
  insert->Reset();
  if (!done) {
    (void)db_.Exec("ROLLBACK");
    return done;
  }
  if (auto committed = commit->Run(); !committed) {
    (void)db_.Exec("ROLLBACK");
    return committed.error();
  }
  return Ok();
}

Result<std::vector<OutboxStore::AttemptRecord>> SqliteOutboxStore::ListAttempts(
    std::string_view message_id) {
  RECKON_TRY(Statement s, db_.Prepare("SELECT attempt, at_us, outcome, stream_seq, error FROM "
                                      "outbox_attempts WHERE message_id = ?1 ORDER BY attempt"));
  s.Bind(1, message_id);
  std::vector<AttemptRecord> rows;
  while (true) {
    RECKON_TRY(bool more, s.Step());
    if (!more) break;
    rows.push_back(AttemptRecord{s.ColumnInt(0), s.ColumnInt(1), std::string(s.ColumnText(2)),
                                 s.ColumnInt(3), std::string(s.ColumnText(4))});
  }
  return rows;
}

}  // namespace reckon::storage
