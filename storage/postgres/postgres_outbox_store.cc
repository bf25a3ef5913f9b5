#include "reckon/storage/postgres/postgres_outbox_store.h"

#include <utility>

#include "reckon/storage/postgres/schema.h"

namespace reckon::storage {
namespace {

constexpr const char* kColumns =
    "id, message_id, run_pk, step_id, topic, created_at_us, published_at_us, stream_seq, "
    "attempts, next_attempt_at_us, last_error, key_id, payload";

OutboxRow ReadRow(const PgResult& r, int i) {
  OutboxRow row;
  row.id = r.Int(i, 0);
  row.message_id = r.Text(i, 1);
  row.run_pk = r.Int(i, 2);
  row.step_id = r.Text(i, 3);
  row.subject = r.Text(i, 4);
  row.created_at_us = r.Int(i, 5);
  row.published_at_us = r.Int(i, 6);
  row.stream_seq = r.Int(i, 7);
  row.attempts = r.Int(i, 8);
  row.next_attempt_at_us = r.Int(i, 9);
  row.last_error = r.Text(i, 10);
  return row;
}

}  // namespace

Result<std::unique_ptr<PostgresOutboxStore>> PostgresOutboxStore::Open(
    const std::string& conninfo, const PayloadCodec* codec) {
  RECKON_TRY(PgConnection conn, PgConnection::Connect(conninfo));
  RECKON_TRY(const int version, PgSchemaVersion(conn));
  if (version < 1) {
    return Err(Errc::kFailedPrecondition,
               "journal '" + conn.display() +
                   "' has no outbox tables: open it with this release's engine first");
  }
  return std::unique_ptr<PostgresOutboxStore>(new PostgresOutboxStore(std::move(conn), codec));
}

Result<PgConnection*> PostgresOutboxStore::Connection() {
  if (conn_.broken()) {
    RECKON_TRY(conn_.Reconnect());
  }
  return &conn_;
}

Result<std::vector<OutboxRow>> PostgresOutboxStore::Rows(const std::string& sql,
                                                         const PgParams& params,
                                                         bool with_payload) {
  RECKON_TRY(PgConnection * conn, Connection());
  RECKON_TRY(PgResult result, conn->Query(sql, params));
  std::vector<OutboxRow> rows;
  for (int i = 0; i < result.rows(); ++i) {
    OutboxRow row = ReadRow(result, i);
    if (with_payload) {
      const std::string_view key_id = result.Text(i, 11);
      auto bytes = result.Bytes(i, 12);
      std::string box(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      if (key_id.empty()) {
        row.payload = std::move(box);
      } else if (codec_ == nullptr) {
        return Err(Errc::kFailedPrecondition,
                   "outbox message '" + row.message_id + "' is sealed with key '" +
                       std::string(key_id) + "' and no payload key was given; pass the key file");
      } else {
        RECKON_TRY(row.payload, codec_->Open(key_id, box, OutboxSealContext(row.message_id)));
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

Result<std::vector<OutboxRow>> PostgresOutboxStore::ListDue(std::int64_t now_us,
                                                            std::size_t limit) {
  PgParams params;
  params.Add(now_us).Add(static_cast<std::int64_t>(limit));
  return Rows(std::string("SELECT ") + kColumns +
                  " FROM outbox WHERE published_at_us = 0 AND next_attempt_at_us <= $1::bigint "
                  "ORDER BY id LIMIT $2::bigint",
              params, /*with_payload=*/true);
}

Result<std::optional<std::int64_t>> PostgresOutboxStore::NextDueAt() {
  RECKON_TRY(PgConnection * conn, Connection());
  RECKON_TRY(PgResult result, conn->Query("SELECT min(next_attempt_at_us) FROM outbox "
                                          "WHERE published_at_us = 0"));
  if (result.rows() == 0 || result.IsNull(0, 0)) return std::optional<std::int64_t>();
  return std::optional<std::int64_t>(result.Int(0, 0));
}

Result<std::vector<OutboxRow>> PostgresOutboxStore::List(bool pending_only, std::size_t limit) {
  PgParams params;
  params.Add(static_cast<std::int64_t>(limit));
  return Rows(std::string("SELECT ") + kColumns + " FROM outbox " +
                  (pending_only ? "WHERE published_at_us = 0 " : "") +
                  "ORDER BY id LIMIT $1::bigint",
              params, /*with_payload=*/false);
}

Result<OutboxStore::Backlog> PostgresOutboxStore::PendingBacklog() {
  RECKON_TRY(PgConnection * conn, Connection());
  RECKON_TRY(PgResult r, conn->Query("SELECT count(*), (SELECT created_at_us FROM outbox "
                                     "WHERE published_at_us = 0 ORDER BY id LIMIT 1) "
                                     "FROM outbox WHERE published_at_us = 0"));
  Backlog backlog;
  if (r.rows() == 0) return backlog;
  backlog.pending = r.Int(0, 0);
  if (!r.IsNull(0, 1)) backlog.oldest_created_at_us = r.Int(0, 1);
  return backlog;
}

Result<void> PostgresOutboxStore::RecordAttempts(std::span<const OutboxAttempt> attempts) {
  if (attempts.empty()) return Ok();
  RECKON_TRY(PgConnection * conn, Connection());
  RECKON_TRY(conn->Exec("BEGIN"));
  // All in one transaction (a dispatcher's pass).
  auto one = [&](const OutboxAttempt& attempt) -> Result<void> {
    PgParams update;
    update.Add(attempt.message_id).Add(std::int64_t{attempt.acked ? 1 : 0}).Add(attempt.at_us)
        .Add(attempt.stream_seq).Add(attempt.error)
        .Add(attempt.acked ? 0 : attempt.next_attempt_at_us);
    RECKON_TRY(PgResult updated,
               conn->Query("UPDATE outbox SET attempts = attempts + 1, "
                           "published_at_us = CASE WHEN $2::bigint <> 0 THEN $3::bigint "
                           "ELSE published_at_us END, "
                           "stream_seq = CASE WHEN $2::bigint <> 0 THEN $4::bigint "
                           "ELSE stream_seq END, "
                           "last_error = $5::text, next_attempt_at_us = $6::bigint "
                           "WHERE message_id = $1::text RETURNING attempts",
                           update));
    if (updated.rows() == 0) {
      return Err(Errc::kNotFound, "no outbox message '" + attempt.message_id + "'");
    }
    const char* outcome = !attempt.acked ? "failed" : attempt.duplicate ? "duplicate" : "acked";
    PgParams insert;
    insert.Add(attempt.message_id).Add(updated.Int(0, 0)).Add(attempt.at_us).Add(outcome)
        .Add(attempt.stream_seq).Add(attempt.error);
    RECKON_TRY(conn->Query("INSERT INTO outbox_attempts (message_id, attempt, at_us, outcome, "
                           "stream_seq, error) VALUES ($1::text, $2::bigint, $3::bigint, "
                           "$4::text, $5::bigint, $6::text)",
                           insert));
    return Ok();
  };
  auto body = [&]() -> Result<void> {
    for (const OutboxAttempt& attempt : attempts) {
      RECKON_TRY(one(attempt));
    }
    return Ok();
  };
  if (auto done = body(); !done) {
    (void)conn->Exec("ROLLBACK");
    return done;
  }
  RECKON_TRY(PgResult committed, conn->Command("COMMIT"));
  if (committed.command() != "COMMIT") {
    return Err(Errc::kUnavailable, "recording " + std::to_string(attempts.size()) +
                                       " outbox attempt(s) from '" + attempts.front().message_id +
                                       "' on was rolled back by the server; record them again");
  }
  return Ok();
}

Result<std::vector<OutboxStore::AttemptRecord>> PostgresOutboxStore::ListAttempts(
    std::string_view message_id) {
  RECKON_TRY(PgConnection * conn, Connection());
  PgParams params;
  params.Add(message_id);
  RECKON_TRY(PgResult r, conn->Query("SELECT attempt, at_us, outcome, stream_seq, error FROM "
                                     "outbox_attempts WHERE message_id = $1::text "
                                     "ORDER BY attempt",
                                     params));
  std::vector<AttemptRecord> rows;
  for (int i = 0; i < r.rows(); ++i) {
    rows.push_back(AttemptRecord{r.Int(i, 0), r.Int(i, 1), std::string(r.Text(i, 2)),
                                 r.Int(i, 3), std::string(r.Text(i, 4))});
  }
  return rows;
}

}  // namespace reckon::storage
