// OutboxStore: the outbox as its dispatcher and `reckon outbox list` see it. Messages enter it
// only through a journal append (AppendRequest::outbox), in the transaction of the step that
// publishes them; this interface reads them and records their delivery attempts. The delivery
// record is bookkeeping of the dispatcher, not a run's state, so it is written on its own.
//
// Backend: storage/sqlite/sqlite_outbox_store.h (a connection of its own on the journal file).
// Threading: not thread-safe; one owner (the dispatcher's thread, or the CLI).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/storage/rows.h"

namespace reckon::storage {

class OutboxStore {
 public:
  virtual ~OutboxStore() = default;

  // Unacknowledged messages whose next attempt is due at `now_us`, oldest first, at most
  // `limit`, payloads opened. Errors: kFailedPrecondition naming the key when a payload was
  // sealed with a key this store's codec does not hold; kUnavailable for I/O.
  virtual Result<std::vector<OutboxRow>> ListDue(std::int64_t now_us, std::size_t limit) = 0;
  // The earliest next-attempt time of the unacknowledged messages; nullopt when none is left.
  virtual Result<std::optional<std::int64_t>> NextDueAt() = 0;
  // The backlog for the metrics: how many messages the broker has not acknowledged, and when
  // the oldest of them was created (0 when none). Costs an index walk over the pending
  // messages (none over acknowledged ones), so it grows with the backlog, not the table.
  struct Backlog {
    std::int64_t pending = 0;
    std::int64_t oldest_created_at_us = 0;
  };
  virtual Result<Backlog> PendingBacklog() = 0;
  // Messages for people, oldest first, without payloads; only unacknowledged ones if
  // `pending_only`.
  virtual Result<std::vector<OutboxRow>> List(bool pending_only, std::size_t limit) = 0;
  // Records attempts in one transaction: each attempt's own row, and on its message the
  // attempt count, the ack (published time, stream sequence) or the error and retry time.
  // All or nothing: kNotFound (nothing recorded) when a message id is unknown. One transaction
  // for a dispatcher's whole pass, so it takes the journal's write lock once, not per message.
  virtual Result<void> RecordAttempts(std::span<const OutboxAttempt> attempts) = 0;
  Result<void> RecordAttempt(const OutboxAttempt& attempt) {
    return RecordAttempts(std::span<const OutboxAttempt>(&attempt, 1));
  }
  // The attempts of one message, in order: "acked", "duplicate" (acked, the broker had it) or
  // "failed", with the stream sequence or the error.
  struct AttemptRecord {
    std::int64_t attempt = 0;
    std::int64_t at_us = 0;
    std::string outcome;
    std::int64_t stream_seq = 0;
    std::string error;
  };
  virtual Result<std::vector<AttemptRecord>> ListAttempts(std::string_view message_id) = 0;
};

// The authenticated context an outbox payload is sealed under: "reckon.outbox.v1" and the
// message id, length-prefixed, so a sealed payload opens only on its own message.
std::string OutboxSealContext(std::string_view message_id);

}  // namespace reckon::storage
