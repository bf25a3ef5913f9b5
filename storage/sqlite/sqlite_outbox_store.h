// SqliteOutboxStore: the OutboxStore (storage/outbox_store.h) in the journal's SQLite file
// (tables `outbox` and `outbox_attempts`, docs/JOURNAL_FORMAT.md), on a connection of its own,
// so the dispatcher never shares the engine's commit connection. Open it after the journal
// (the owner applies the migration that creates the tables); it waits up to `busy_timeout`
// for the journal's commits. Not thread-safe: one owner.
#pragma once

#include <array>
#include <chrono>
#include <optional>
#include <memory>
#include <string>

#include "reckon/storage/outbox_store.h"
#include "reckon/storage/payload_codec.h"
#include "reckon/storage/sqlite/sqlite.h"

namespace reckon::storage {

class SqliteOutboxStore final : public OutboxStore {
 public:
  // `codec` opens sealed payloads (not owned; it must outlive the store; null: sealed payloads
  // fail to open with kFailedPrecondition naming their key). Errors: kFailedPrecondition when
  // the file has no outbox delivery columns (a journal not yet opened by this release),
  // kUnavailable for I/O.
  static Result<std::unique_ptr<SqliteOutboxStore>> Open(
      const std::string& journal_path, const PayloadCodec* codec,
      std::chrono::milliseconds busy_timeout = std::chrono::seconds(5));

  Result<std::vector<OutboxRow>> ListDue(std::int64_t now_us, std::size_t limit) override;
  Result<std::optional<std::int64_t>> NextDueAt() override;
  Result<Backlog> PendingBacklog() override;
  Result<std::vector<OutboxRow>> List(bool pending_only, std::size_t limit) override;
  Result<void> RecordAttempts(std::span<const OutboxAttempt> attempts) override;
  Result<std::vector<AttemptRecord>> ListAttempts(std::string_view message_id) override;

 private:
  SqliteOutboxStore(SqliteDb db, const PayloadCodec* codec) : db_(std::move(db)), codec_(codec) {}
  Result<std::string> OpenPayload(const OutboxRow& row, std::string_view key_id,
                                  std::string box) const;
  // The dispatcher's statements, prepared once (a pass would otherwise parse six), and reset
  // by the caller after each use (a statement left mid-read would hold a read snapshot).
  enum Slot { kListDue, kNextDue, kUpdate, kInsert, kBegin, kCommit, kSlots };
  Result<Statement*> Cached(Slot slot, std::string_view sql);

  SqliteDb db_;
  const PayloadCodec* codec_;
  std::array<std::optional<Statement>, kSlots> statements_;
};

}  // namespace reckon::storage
