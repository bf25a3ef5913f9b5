// PostgresOutboxStore: the OutboxStore (storage/outbox_store.h) in a PostgreSQL journal's
// database (tables `outbox` and `outbox_attempts`, docs/JOURNAL_FORMAT.md, "PostgreSQL"), on a
// connection of its own, so the dispatcher never shares the engine's commit connection. Open it
// after the journal (whose owner applies the migrations).
//
// A lost connection fails the call with kUnavailable and is made again at the next call, so a
// dispatcher that retries with backoff rides out a restart of the server. Not thread-safe: one
// owner.
#pragma once

#include <memory>
#include <string>

#include "reckon/storage/outbox_store.h"
#include "reckon/storage/payload_codec.h"
#include "reckon/storage/postgres/pg.h"

namespace reckon::storage {

class PostgresOutboxStore final : public OutboxStore {
 public:
  // `codec` opens sealed payloads (not owned; must outlive the store; null: sealed payloads
  // fail with kFailedPrecondition naming their key). Errors: kUnavailable (cannot connect),
  // kFailedPrecondition (the database holds no journal of this release yet).
  static Result<std::unique_ptr<PostgresOutboxStore>> Open(const std::string& conninfo,
                                                           const PayloadCodec* codec);

  Result<std::vector<OutboxRow>> ListDue(std::int64_t now_us, std::size_t limit) override;
  Result<std::optional<std::int64_t>> NextDueAt() override;
  Result<std::vector<OutboxRow>> List(bool pending_only, std::size_t limit) override;
  Result<Backlog> PendingBacklog() override;
  Result<void> RecordAttempts(std::span<const OutboxAttempt> attempts) override;
  Result<std::vector<AttemptRecord>> ListAttempts(std::string_view message_id) override;

 private:
  PostgresOutboxStore(PgConnection conn, const PayloadCodec* codec)
      : conn_(std::move(conn)), codec_(codec) {}
  // The connection, made again if it was lost.
  Result<PgConnection*> Connection();
  Result<std::vector<OutboxRow>> Rows(const std::string& sql, const PgParams& params,
                                      bool with_payload);

  PgConnection conn_;
  const PayloadCodec* codec_;
};

}  // namespace reckon::storage
