#include "samples/outbox_consumer/dedup_consumer.h"

#include <chrono>
#include <utility>

namespace reckon::samples {

Result<std::unique_ptr<DedupConsumer>> DedupConsumer::Open(const std::string& path,
                                                           std::string_view schema_sql) {
  RECKON_TRY(storage::SqliteDb db, storage::SqliteDb::Open(path));
  sqlite3_busy_timeout(db.handle(), 5000);  // a report or an audit may read it meanwhile
  RECKON_TRY(std::string mode, db.QueryText("PRAGMA journal_mode = WAL"));
  (void)mode;
  RECKON_TRY(db.Exec("PRAGMA synchronous = FULL"));
  RECKON_TRY(db.Exec("CREATE TABLE IF NOT EXISTS processed_messages ("
                     "message_id TEXT PRIMARY KEY, processed_at_us INTEGER NOT NULL) "
                     "WITHOUT ROWID"));
  RECKON_TRY(db.Exec("CREATE TABLE IF NOT EXISTS skipped_copies ("
                     "message_id TEXT PRIMARY KEY, copies INTEGER NOT NULL) WITHOUT ROWID"));
  if (!schema_sql.empty()) {
    RECKON_TRY(db.Exec(schema_sql));
  }
  return std::unique_ptr<DedupConsumer>(new DedupConsumer(std::move(db)));
}

Result<bool> DedupConsumer::Process(std::string_view message_id, std::string_view payload,
                                    const BusinessWrite& write) {
  RECKON_TRY(db_.Exec("BEGIN IMMEDIATE"));
  auto body = [&]() -> Result<bool> {
    RECKON_TRY(storage::Statement insert,
               db_.Prepare("INSERT INTO processed_messages (message_id, processed_at_us) "
                           "VALUES (?1, ?2) ON CONFLICT (message_id) DO NOTHING"));
    const auto now = std::chrono::duration_cast<std::chrono::microseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    insert.Bind(1, message_id).Bind(2, static_cast<std::int64_t>(now));
    RECKON_TRY(insert.Run());
    if (sqlite3_changes(db_.handle()) == 0) return false;  // seen before
    RECKON_TRY(write(db_, payload));
    return true;
  };
  auto processed = body();
  if (processed && !processed.value()) {
    // A copy of a processed message: count it, durably, in the same small transaction.
    auto counted = CountSkippedCopy(message_id);
    if (counted) counted = db_.Exec("COMMIT");
    if (!counted) {
      (void)db_.Exec("ROLLBACK");
      return counted.error();
    }
    ++duplicates_skipped_;
    return false;
  }
  if (!processed) {
    (void)db_.Exec("ROLLBACK");
    return processed;
  }
  if (auto committed = db_.Exec("COMMIT"); !committed) {
    (void)db_.Exec("ROLLBACK");
    return committed.error();
  }
  return true;
}

Result<void> DedupConsumer::CountSkippedCopy(std::string_view message_id) {
  RECKON_TRY(storage::Statement count,
             db_.Prepare("INSERT INTO skipped_copies (message_id, copies) VALUES (?1, 1) "
                         "ON CONFLICT (message_id) DO UPDATE SET copies = copies + 1"));
  count.Bind(1, message_id);
  return count.Run();
}

Result<std::int64_t> DedupConsumer::ProcessedCount() {
  return db_.QueryInt("SELECT count(*) FROM processed_messages");
}

Result<std::int64_t> DedupConsumer::SkippedCopiesTotal() {
  return db_.QueryInt("SELECT coalesce(sum(copies), 0) FROM skipped_copies");
}

}  // namespace reckon::samples
