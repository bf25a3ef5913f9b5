// Ledger: the fake provider's durable memory of refunds, one SQLite file in WAL mode with
// synchronous=FULL. A refund that Insert() returned is on disk: it survives SIGKILL of the
// provider and power loss (as far as fsync is honest). That durability is the point of the
// sample: the provider commits, the reply may be lost, and only a lookup can tell.
//
// Schema (the file is the provider's own; nothing else reads it):
//   refunds(seq INTEGER PRIMARY KEY AUTOINCREMENT, payment_id, amount_cents, reason,
//           idempotency_key NULL, created_at, card_token NULL)
// with an index on (idempotency_key, seq). refund_id is "re_" + seq zero-padded to six digits,
// or "re_" + card_token + "_" + that for a refund stored with a card token to echo (a careless
// provider's ids, --refund-id-from-card); AUTOINCREMENT never reuses a seq, so ids are unique
// for the life of the file. A ledger written before card_token existed gets the column. Keys are not
// unique: with deduplication off the same key may be stored several times.
//
// Not thread-safe: one Ledger belongs to the provider's one I/O thread. Calls block on disk.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/storage/sqlite/sqlite.h"

namespace reckon::samples::provider {

struct Refund {
  std::string refund_id;
  std::string payment_id;
  std::int64_t amount_cents = 0;
  std::string reason;
  std::optional<std::string> idempotency_key;
  std::string created_at;  // RFC 3339 UTC, as given to Insert

  friend bool operator==(const Refund&, const Refund&) = default;
};

struct NewRefund {
  std::string payment_id;
  std::int64_t amount_cents = 0;
  std::string reason;
  std::optional<std::string> idempotency_key;
  std::string created_at;
  std::string echoed_card_token;  // non-empty: the refund id embeds it
};

class Ledger {
 public:
  // Opens or creates the ledger at `path`. Errors from SQLite (kUnavailable for I/O and
  // locking, kCorruption for a damaged file).
  static Result<Ledger> Open(const std::string& path);

  // Commits one refund durably and returns it with its new refund_id.
  Result<Refund> Insert(const NewRefund& refund);
  // The first refund (lowest seq) stored with this key, or nullopt.
  Result<std::optional<Refund>> FindByKey(std::string_view idempotency_key);
  // Every refund, oldest first.
  Result<std::vector<Refund>> List();

 private:
  Ledger(storage::SqliteDb db, storage::Statement insert, storage::Statement find,
         storage::Statement list)
      : db_(std::move(db)),
        insert_(std::move(insert)),
        find_(std::move(find)),
        list_(std::move(list)) {}

  // Declared first: destroyed after the statements that use it.
  storage::SqliteDb db_;
  storage::Statement insert_;
  storage::Statement find_;
  storage::Statement list_;
};

}  // namespace reckon::samples::provider
