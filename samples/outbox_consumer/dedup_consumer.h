// DedupConsumer: the consumer side of the transactional outbox, as a sample (ARCHITECTURE.md,
// decision 41). The broker drops a copy of a message only inside its duplicate window; after
// a crash the dispatcher may publish again later than that, and JetStream redelivers what a
// consumer did not ack. So the consumer keeps the ids it processed in its own SQLite
// database, and records the id and makes its business write in ONE transaction: either both
// happen or neither, and a message seen again is skipped, however late it comes. Each skipped
// copy is counted in the same database (table skipped_copies: message id, copies), so the
// count survives the consumer's crashes.
//
// Ownership: owns its SQLite connection. Not thread-safe: one consumer thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "reckon/base/error.h"
#include "reckon/storage/sqlite/sqlite.h"

namespace reckon::samples {

class DedupConsumer {
 public:
  // The business write: runs inside the transaction that records the message id, on `db`.
  // An error rolls both back (the message is not acked, and is processed on redelivery).
  using BusinessWrite = std::function<Result<void>(storage::SqliteDb& db, std::string_view payload)>;

  // Opens or creates the consumer's database at `path` and its table `processed_messages`;
  // `schema_sql` creates the business tables (IF NOT EXISTS).
  static Result<std::unique_ptr<DedupConsumer>> Open(const std::string& path,
                                                     std::string_view schema_sql);

  // Processes `message_id` once: true if `write` ran and committed with the id, false if the
  // id was processed before (nothing runs but counting the copy, durably). Ack the message to
  // the broker after either.
  Result<bool> Process(std::string_view message_id, std::string_view payload,
                       const BusinessWrite& write);

  // How many distinct messages were processed; how many copies were skipped by this object;
  // how many copies were skipped in all, by every object that used this database.
  Result<std::int64_t> ProcessedCount();
  std::int64_t duplicates_skipped() const { return duplicates_skipped_; }
  Result<std::int64_t> SkippedCopiesTotal();

  storage::SqliteDb& db() { return db_; }

 private:
  explicit DedupConsumer(storage::SqliteDb db) : db_(std::move(db)) {}
  Result<void> CountSkippedCopy(std::string_view message_id);

  storage::SqliteDb db_;
  std::int64_t duplicates_skipped_ = 0;
};

}  // namespace reckon::samples
