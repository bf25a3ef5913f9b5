#include "reckon/storage/sqlite/journal_checksums.h"

#include <filesystem>
#include <optional>

#include "reckon/storage/sqlite/checksum_vfs.h"
#include "reckon/storage/sqlite/journal_check.h"
#include "reckon/storage/sqlite/journal_lock.h"
#include "reckon/storage/sqlite/page_checksum.h"
#include "reckon/storage/sqlite/page_scan.h"

namespace reckon::storage {
namespace {

constexpr int kReserved = static_cast<int>(kPageChecksumBytes);

// The reserved bytes per page of the database `db` has open (SQLite's, as of its last read of
// the header; -1 before it has read one).
int ReservedBytes(SqliteDb& db) {
  int reserved = -1;  // -1: only ask
  sqlite3_file_control(db.handle(), "main", SQLITE_FCNTL_RESERVE_BYTES, &reserved);
  return reserved;
}

std::int64_t SizeOf(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<std::int64_t>(size);
}

}  // namespace

Result<bool> ReserveChecksumsIfNew(SqliteDb& db) {
  RECKON_TRY(std::int64_t pages, db.QueryInt("PRAGMA page_count"));
  if (pages != 0) return false;
  RECKON_TRY(std::int64_t page_size, db.QueryInt("PRAGMA page_size"));
  int reserved = kReserved;
  sqlite3_file_control(db.handle(), "main", SQLITE_FCNTL_RESERVE_BYTES, &reserved);
  if (!SealFromNow(db.handle(), static_cast<int>(page_size), /*verify=*/true)) {
    return Err(Errc::kInternal, "journal '" + db.path() +
                                    "' is not open through the checksum VFS; open it with "
                                    "SqliteDb::Open");
  }
  return true;
}

Result<bool> HasPageChecksums(SqliteDb& db) {
  RECKON_TRY(std::int64_t pages, db.QueryInt("PRAGMA page_count"));  // reads the header
  (void)pages;
  return ReservedBytes(db) == kReserved;
}

std::string NoChecksumsWarning(const std::string& path) {
  return "journal '" + path + "' was written by a release without page checksums: damage "
         "inside a row would go unnoticed. Stop its owner and run `reckon admin "
         "enable-checksums " + path + "` to add them (it rewrites the file once)";
}

Result<EnableChecksumsReport> EnablePageChecksums(const std::string& path) {
  if (!std::filesystem::exists(path)) {
    return Err(Errc::kNotFound, "journal '" + path + "' does not exist");
  }
  RECKON_TRY(JournalLock lock, JournalLock::Acquire(path));
  EnableChecksumsReport report;
  {
    RECKON_TRY(SqliteDb db, SqliteDb::Open(path));
    db.SetBusyWait(std::chrono::seconds(5));
    RECKON_TRY(QuickCheckAtOpen(db));
    RECKON_TRY(bool has, HasPageChecksums(db));
    if (has) {
      report.already = true;
      return report;
    }
    if (const int reserved = ReservedBytes(db); reserved != 0) {
      return Err(Errc::kFailedPrecondition,
                 "journal '" + path + "' reserves " + std::to_string(reserved) +
                     " bytes per page for something else; page checksums need 8 of their own");
    }
    RECKON_TRY(db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"));
    report.bytes_before = SizeOf(path);
    RECKON_TRY(std::int64_t page_size, db.QueryInt("PRAGMA page_size"));
    int reserved = kReserved;
    sqlite3_file_control(db.handle(), "main", SQLITE_FCNTL_RESERVE_BYTES, &reserved);
    // Every page VACUUM writes is in the new layout; the old ones it reads carry no checksum.
    SealFromNow(db.handle(), static_cast<int>(page_size), /*verify=*/false);
    if (auto vacuumed = db.Exec("VACUUM"); !vacuumed) {
      return vacuumed.error().WithContext("rewriting journal '" + path + "' with page checksums");
    }
    RECKON_TRY(db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"));
  }
  RECKON_TRY(SqliteDb db, SqliteDb::Open(path, /*read_only=*/true));
  RECKON_TRY(bool has, HasPageChecksums(db));
  if (!has) {
    return Err(Errc::kInternal, "journal '" + path + "' still has no page checksums after "
                                "VACUUM; this SQLite did not apply the reserved bytes");
  }
  RECKON_TRY(PageScanReport scan, ScanPages(db));
  if (!scan.damaged.empty()) {
    return Err(Errc::kCorruption, "journal '" + path + "' after the rewrite: " +
                                      scan.damaged.front().Describe());
  }
  RECKON_TRY(QuickCheckAtOpen(db));
  report.pages = scan.main_pages;
  report.bytes_after = SizeOf(path);
  return report;
}

}  // namespace reckon::storage
