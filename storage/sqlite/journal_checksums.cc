#include "reckon/storage/sqlite/journal_checksums.h"

#include "reckon/storage/sqlite/checksum_vfs.h"
#include "reckon/storage/sqlite/page_checksum.h"

namespace reckon::storage {
namespace {

constexpr int kReserved = static_cast<int>(kPageChecksumBytes);

}  // namespace

int ReservedBytes(SqliteDb& db) {
  int reserved = -1;  // -1: only ask
  sqlite3_file_control(db.handle(), "main", SQLITE_FCNTL_RESERVE_BYTES, &reserved);
  return reserved;
}

Result<void> ReserveChecksumBytes(SqliteDb& db, bool verify) {
  RECKON_TRY(std::int64_t page_size, db.QueryInt("PRAGMA page_size"));
  int reserved = kReserved;
  sqlite3_file_control(db.handle(), "main", SQLITE_FCNTL_RESERVE_BYTES, &reserved);
  if (!SealFromNow(db.handle(), static_cast<int>(page_size), verify)) {
    return Err(Errc::kInternal, "journal '" + db.path() +
                                    "' is not open through the checksum VFS; open it with "
                                    "SqliteDb::Open");
  }
  return Ok();
}

Result<bool> ReserveChecksumsIfNew(SqliteDb& db) {
  RECKON_TRY(std::int64_t pages, db.QueryInt("PRAGMA page_count"));
  if (pages != 0) return false;
  RECKON_TRY(ReserveChecksumBytes(db, /*verify=*/true));
  return true;
}

Result<bool> HasPageChecksums(SqliteDb& db) {
  RECKON_TRY(std::int64_t pages, db.QueryInt("PRAGMA page_count"));  // reads the header
  (void)pages;
  return ReservedBytes(db) == kReserved;
}

std::string NoChecksumsWarning(const std::string& path) {
  return "journal '" + path + "' was written by a release without page checksums: damage "
         "inside a row would go unnoticed. Stop its owner and run `reckon admin vacuum " + path +
         "` to add them (it rewrites the file once)";
}

}  // namespace reckon::storage
