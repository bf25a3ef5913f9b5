// Thin RAII wrappers over the SQLite C API: a connection (SqliteDb) and a prepared statement
// (Statement). They turn SQLite result codes into Result<T> with the SQL and the database path
// in the message, and own their handles: moving transfers ownership, destruction closes.
// Every connection goes through the checksum VFS (storage/sqlite/checksum_vfs.h): a page that
// fails its checksum is Errc::kCorruption, and the message names the file and the page.
//
// Not thread-safe: one connection belongs to one thread (or strand) at a time. Column text and
// blob views returned by Statement stay valid until the next Step(), Reset() or destruction.
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "reckon/base/error.h"

namespace reckon::storage {

class Statement;

class SqliteDb {
 public:
  // Opens (creating if absent) the database file at `path`, through the checksum VFS over the
  // SQLite VFS named `vfs` (empty: SQLite's default; tests put a fault-injecting VFS here,
  // storage/testing/power_loss_vfs.h). A new file gets no page checksums from this alone:
  // see storage/sqlite/journal_checksums.h.
  static Result<SqliteDb> Open(const std::string& path, bool read_only = false,
                               const std::string& vfs = {});

  SqliteDb(SqliteDb&&) noexcept = default;
  SqliteDb& operator=(SqliteDb&&) noexcept = default;

  // Runs one or more statements that return no rows.
  Result<void> Exec(std::string_view sql);
  Result<Statement> Prepare(std::string_view sql);
  // Runs a single-value query ("PRAGMA journal_mode") and returns its first column as text.
  Result<std::string> QueryText(std::string_view sql);
  Result<std::int64_t> QueryInt(std::string_view sql);

  // Waits up to `limit` for a lock another connection holds, as PRAGMA busy_timeout does, but
  // polls every 50 us for the first 2 ms (then every millisecond) instead of SQLite's 1, 2, 5,
  // 10 ms sleeps: the journal's writers (the engine's commits, the outbox dispatcher's records)
  // hold its write lock for tens of microseconds, and a 1 ms sleep per collision stalled the
  // engine's group commit far longer than the work it waited for. After `limit`: SQLITE_BUSY.
  void SetBusyWait(std::chrono::milliseconds limit);
  struct BusyWait {  // the wait's state, for the handler (sqlite.cc)
    std::chrono::steady_clock::duration limit{};
    std::chrono::steady_clock::time_point since{};
  };

  sqlite3* handle() const { return db_.get(); }
  const std::string& path() const { return path_; }

  // Builds the error for the last failed call on this connection.
  Error LastError(int rc, std::string_view what) const;

 private:
  struct Closer {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
  };
  SqliteDb(std::unique_ptr<sqlite3, Closer> db, std::string path)
      : db_(std::move(db)), path_(std::move(path)) {}

  std::unique_ptr<BusyWait> busy_wait_;  // outlives db_, whose close may wait
  std::unique_ptr<sqlite3, Closer> db_;
  std::string path_;
};

// A prepared statement. Bind indexes start at 1, column indexes at 0.
class Statement {
 public:
  Statement() = default;  // empty; assign a prepared one before use
  Statement(Statement&&) noexcept = default;
  Statement& operator=(Statement&&) noexcept = default;

  Statement& Bind(int index, std::int64_t value);
  Statement& Bind(int index, std::string_view text);
  Statement& BindBlob(int index, std::span<const std::byte> blob);
  Statement& BindNull(int index);

  // Steps once: true when a row is available, false when done.
  Result<bool> Step();
  // Steps to completion, expecting no rows (INSERT/UPDATE/DELETE).
  Result<void> Run();
  void Reset();  // resets and clears bindings, ready for reuse

  std::int64_t ColumnInt(int index) const;
  std::string_view ColumnText(int index) const;
  std::span<const std::byte> ColumnBlob(int index) const;
  bool ColumnIsNull(int index) const;

 private:
  friend class SqliteDb;
  struct Finalizer {
    void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
  };
  explicit Statement(std::unique_ptr<sqlite3_stmt, Finalizer> stmt) : stmt_(std::move(stmt)) {}

  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
};

}  // namespace reckon::storage
