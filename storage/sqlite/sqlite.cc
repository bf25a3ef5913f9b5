#include "reckon/storage/sqlite/sqlite.h"

#include <optional>
#include <string>
#include <thread>

#include "reckon/storage/sqlite/checksum_vfs.h"

namespace reckon::storage {
namespace {

// Busy and locked mean another connection holds the lock: worth retrying. I/O and full-disk
// errors are environmental: retry after fixing the machine. Corruption is a bug or a disk
// fault, and so is a page that fails its checksum (SQLITE_IOERR_DATA, from the checksum VFS).
// Constraint violations are the caller's request.
Errc ErrcForSqlite(int rc) {
  if (rc == SQLITE_IOERR_DATA) return Errc::kCorruption;
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
      return Errc::kUnavailable;
    case SQLITE_CONSTRAINT:
      return Errc::kAlreadyExists;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Errc::kCorruption;
    default:
      return Errc::kInternal;
  }
}

// The error for a failed call on `db`: what was being done, SQLite's message, the file.
Error SqliteError(sqlite3* db, int rc, std::string_view what) {
  std::string message(what);
  const char* file = sqlite3_db_filename(db, "main");
  message += " on '";
  message += (file && *file) ? file : ":memory:";
  message += "': ";
  message += sqlite3_errmsg(db);
  message += " (sqlite code " + std::to_string(rc) + ")";
  if (rc == SQLITE_IOERR_DATA) {
    const std::optional<ChecksumState> state = ChecksumStateOf(db);
    if (state && state->last_fault) message += "; " + state->last_fault->Describe();
  }
  return Err(ErrcForSqlite(rc), std::move(message));
}

}  // namespace

Result<SqliteDb> SqliteDb::Open(const std::string& path, bool read_only,
                                const std::string& vfs) {
  sqlite3* raw = nullptr;
  int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  flags |= SQLITE_OPEN_NOMUTEX;  // one owner at a time; see the class comment
  RECKON_TRY(std::string checksum_vfs, ChecksumVfsOver(vfs));
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, checksum_vfs.c_str());
  std::unique_ptr<sqlite3, Closer> db(raw);
  if (rc != SQLITE_OK) {
    std::string message = "cannot open journal '" + path + "': ";
    message += raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    return Err(ErrcForSqlite(rc), std::move(message));
  }
  sqlite3_extended_result_codes(raw, 1);
  return SqliteDb(std::move(db), path);
}

Error SqliteDb::LastError(int rc, std::string_view what) const {
  return SqliteError(db_.get(), rc, what);
}

Result<void> SqliteDb::Exec(std::string_view sql) {
  std::string text(sql);
  char* errmsg = nullptr;
  int rc = sqlite3_exec(db_.get(), text.c_str(), nullptr, nullptr, &errmsg);
  if (rc != SQLITE_OK) {
    sqlite3_free(errmsg);
    return LastError(rc, "executing '" + text.substr(0, 80) + "'");
  }
  return Ok();
}

Result<Statement> SqliteDb::Prepare(std::string_view sql) {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v3(db_.get(), sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
  std::unique_ptr<sqlite3_stmt, Statement::Finalizer> stmt(raw);
  if (rc != SQLITE_OK) {
    return LastError(rc, "preparing '" + std::string(sql.substr(0, 80)) + "'");
  }
  return Statement(std::move(stmt));
}

Result<std::string> SqliteDb::QueryText(std::string_view sql) {
  RECKON_TRY(auto stmt, Prepare(sql));
  RECKON_TRY(bool row, stmt.Step());
  if (!row) return Err(Errc::kInternal, "query returned no row: " + std::string(sql));
  return std::string(stmt.ColumnText(0));
}

Result<std::int64_t> SqliteDb::QueryInt(std::string_view sql) {
  RECKON_TRY(auto stmt, Prepare(sql));
  RECKON_TRY(bool row, stmt.Step());
  if (!row) return Err(Errc::kInternal, "query returned no row: " + std::string(sql));
  return stmt.ColumnInt(0);
}

Statement& Statement::Bind(int index, std::int64_t value) {
  sqlite3_bind_int64(stmt_.get(), index, value);
  return *this;
}

Statement& Statement::Bind(int index, std::string_view text) {
  sqlite3_bind_text64(stmt_.get(), index, text.data(), text.size(), SQLITE_TRANSIENT,
                      SQLITE_UTF8);
  return *this;
}

Statement& Statement::BindBlob(int index, std::span<const std::byte> blob) {
  sqlite3_bind_blob64(stmt_.get(), index, blob.data(), blob.size(), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::BindNull(int index) {
  sqlite3_bind_null(stmt_.get(), index);
  return *this;
}

namespace {

int PollWhileBusy(void* context, int count) {
  using namespace std::chrono_literals;
  auto& wait = *static_cast<SqliteDb::BusyWait*>(context);
  const auto now = std::chrono::steady_clock::now();
  if (count == 0) wait.since = now;
  const auto waited = now - wait.since;
  if (waited >= wait.limit) return 0;
  std::this_thread::sleep_for(waited < 2ms ? std::chrono::microseconds(50) : 1ms);
  return 1;
}

}  // namespace

void SqliteDb::SetBusyWait(std::chrono::milliseconds limit) {
  if (!busy_wait_) busy_wait_ = std::make_unique<BusyWait>();
  busy_wait_->limit = limit;
  sqlite3_busy_handler(db_.get(), PollWhileBusy, busy_wait_.get());
}

Result<bool> Statement::Step() {
  int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  const char* sql = sqlite3_sql(stmt_.get());
  Error error = SqliteError(sqlite3_db_handle(stmt_.get()), rc,
                            "running '" + std::string(sql ? sql : "").substr(0, 80) + "'");
  sqlite3_reset(stmt_.get());
  return error;
}

Result<void> Statement::Run() {
  RECKON_TRY(bool row, Step());
  (void)row;
  sqlite3_reset(stmt_.get());
  return Ok();
}

void Statement::Reset() {
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
}

std::int64_t Statement::ColumnInt(int index) const {
  return sqlite3_column_int64(stmt_.get(), index);
}

std::string_view Statement::ColumnText(int index) const {
  const unsigned char* text = sqlite3_column_text(stmt_.get(), index);
  int size = sqlite3_column_bytes(stmt_.get(), index);
  if (text == nullptr) return {};
  return {reinterpret_cast<const char*>(text), static_cast<std::size_t>(size)};
}

std::span<const std::byte> Statement::ColumnBlob(int index) const {
  const void* blob = sqlite3_column_blob(stmt_.get(), index);
  int size = sqlite3_column_bytes(stmt_.get(), index);
  if (blob == nullptr) return {};
  return {static_cast<const std::byte*>(blob), static_cast<std::size_t>(size)};
}

bool Statement::ColumnIsNull(int index) const {
  return sqlite3_column_type(stmt_.get(), index) == SQLITE_NULL;
}

}  // namespace reckon::storage
