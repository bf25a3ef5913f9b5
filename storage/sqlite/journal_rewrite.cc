#include "reckon/storage/sqlite/journal_rewrite.h"

#include <chrono>
#include <filesystem>
#include <optional>

#include "reckon/storage/sqlite/checksum_vfs.h"
#include "reckon/storage/sqlite/journal_check.h"
#include "reckon/storage/sqlite/journal_checksums.h"
#include "reckon/storage/sqlite/journal_lock.h"
#include "reckon/storage/sqlite/page_scan.h"
#include "reckon/storage/sqlite/schema.h"
#include "reckon/storage/sqlite/sqlite.h"

namespace reckon::storage {
namespace {

std::int64_t SizeOf(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<std::int64_t>(size);
}

// Reads every page of the file at `path` back through the checksum VFS and SQLite.
Result<std::int64_t> VerifyWritten(const std::string& path, bool checksums) {
  RECKON_TRY(SqliteDb db, SqliteDb::Open(path, /*read_only=*/true));
  RECKON_TRY(bool has, HasPageChecksums(db));
  if (has != checksums) {
    return Err(Errc::kInternal, "'" + path + "' was written " +
                                    (has ? "with" : "without") + " page checksums, not " +
                                    (checksums ? "with" : "without"));
  }
  RECKON_TRY(PageScanReport scan, ScanPages(db));
  if (!scan.damaged.empty()) {
    return Err(Errc::kCorruption, "'" + path + "' as written: " + scan.damaged.front().Describe());
  }
  RECKON_TRY(QuickCheckAtOpen(db));
  if (scan.sealed) return scan.main_pages;
  return db.QueryInt("PRAGMA page_count");
}

// Copies every page of `from` into `to` in one step (one read transaction on `from`).
Result<void> CopyPages(SqliteDb& from, SqliteDb& to) {
  sqlite3_backup* backup = sqlite3_backup_init(to.handle(), "main", from.handle(), "main");
  if (backup == nullptr) return to.LastError(sqlite3_errcode(to.handle()), "starting the backup");
  const int stepped = sqlite3_backup_step(backup, -1);
  const int finished = sqlite3_backup_finish(backup);  // the step's error, if it failed
  if (stepped == SQLITE_DONE && finished == SQLITE_OK) return Ok();
  Error error = to.LastError(finished != SQLITE_OK ? finished : stepped, "copying pages");
  // A source page that fails its checksum fails the copy; the source's connection knows which.
  if (const std::optional<ChecksumState> state = ChecksumStateOf(from.handle());
      state && state->last_fault) {
    return Err(Errc::kCorruption, error.message() + "; " + state->last_fault->Describe());
  }
  return error;
}

}  // namespace

Result<RewriteReport> VacuumJournal(const std::string& path) {
  if (!std::filesystem::exists(path)) {
    return Err(Errc::kNotFound, "journal '" + path + "' does not exist");
  }
  RECKON_TRY(JournalLock lock, JournalLock::Acquire(path));
  RewriteReport report;
  {
    RECKON_TRY(SqliteDb db, SqliteDb::Open(path));
    db.SetBusyWait(std::chrono::seconds(5));
    RECKON_TRY(QuickCheckAtOpen(db));
    // To the newest schema first, as its next owner would: a release before page checksums
    // must refuse the file from now on (schema version 6).
    RECKON_TRY(int migrated_from, MigrateForward(db, JournalMigrations()));
    (void)migrated_from;
    RECKON_TRY(report.page_checksums_before, HasPageChecksums(db));
    if (!report.page_checksums_before) {
      if (const int reserved = ReservedBytes(db); reserved != 0) {
        return Err(Errc::kFailedPrecondition,
                   "journal '" + path + "' reserves " + std::to_string(reserved) +
                       " bytes per page for something else; page checksums need 8 of their own");
      }
    }
    RECKON_TRY(db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"));
    report.bytes_before = SizeOf(path);
    if (!report.page_checksums_before) {
      // Every page VACUUM writes is in the new layout; the old ones it reads carry none.
      RECKON_TRY(ReserveChecksumBytes(db, /*verify=*/false));
    }
    if (auto vacuumed = db.Exec("VACUUM"); !vacuumed) {
      return vacuumed.error().WithContext("rewriting journal '" + path + "'");
    }
    RECKON_TRY(db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"));
  }
  RECKON_TRY(report.pages, VerifyWritten(path, /*checksums=*/true));
  report.bytes_after = SizeOf(path);
  return report;
}

Result<RewriteReport> BackupJournal(const std::string& source, const std::string& dest) {
  if (!std::filesystem::exists(source)) {
    return Err(Errc::kNotFound, "journal '" + source + "' does not exist");
  }
  if (std::filesystem::exists(dest)) {
    return Err(Errc::kAlreadyExists, "'" + dest + "' exists; back up into a new file");
  }
  RewriteReport report;
  report.bytes_before = SizeOf(source);
  auto copied = [&]() -> Result<std::int64_t> {
    {
      RECKON_TRY(SqliteDb from, SqliteDb::Open(source, /*read_only=*/true));
      from.SetBusyWait(std::chrono::seconds(5));
      RECKON_TRY(report.page_checksums_before, HasPageChecksums(from));
      RECKON_TRY(SqliteDb to, SqliteDb::Open(dest));
      if (report.page_checksums_before) {
        RECKON_TRY(ReserveChecksumBytes(to, /*verify=*/true));
      }
      RECKON_TRY(CopyPages(from, to));
    }
    return VerifyWritten(dest, report.page_checksums_before);
  }();
  if (copied) {
    report.pages = copied.value();
    report.bytes_after = SizeOf(dest);
    return report;
  }
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::error_code ignored;
    std::filesystem::remove(dest + suffix, ignored);
  }
  return copied.error().WithContext("backing up journal '" + source + "' into '" + dest + "'");
}

}  // namespace reckon::storage
