// Page checksums of a journal file (storage/sqlite/checksum_vfs.h; docs/JOURNAL_FORMAT.md,
// "Page checksums"): giving them to a new file, asking whether a file has them, and giving
// them to a file written by a release that did not have them.
//
// A journal created by this release carries them (SqliteJournal::Open calls
// ReserveChecksumsIfNew before anything is written). An older journal keeps its format: it
// opens, migrates and replays as before, unverified, and its owner warns at start
// (Journal::integrity_warning) until an operator runs `reckon admin enable-checksums`
// (EnablePageChecksums), which rewrites it once (ARCHITECTURE.md, decision 56, says why not at
// migration).
//
// Stateless functions; each works on the connection or the file it is given.
#pragma once

#include <cstdint>
#include <string>

#include "reckon/base/error.h"
#include "reckon/storage/sqlite/sqlite.h"

namespace reckon::storage {

// For a database with no page yet: reserves 8 bytes at the end of every page and seals pages
// from the first one written. True when it did; false for a database that has pages already,
// which keeps its format (with or without checksums). Call it before anything writes to `db`.
Result<bool> ReserveChecksumsIfNew(SqliteDb& db);

// Whether the pages of the database `db` has open carry checksums (read from its header).
Result<bool> HasPageChecksums(SqliteDb& db);

// The warning an owner logs for a journal whose pages carry no checksum, naming the file and
// the command that adds them.
std::string NoChecksumsWarning(const std::string& path);

struct EnableChecksumsReport {
  bool already = false;         // the journal had them: nothing was changed
  std::int64_t pages = 0;       // pages of the journal after the rewrite
  std::int64_t bytes_before = 0;
  std::int64_t bytes_after = 0;
};

// Gives the journal at `path` page checksums: takes its ownership lock, refuses a damaged file
// (PRAGMA quick_check), reserves the 8 bytes, rewrites every page with VACUUM (in one
// transaction: a crash leaves the old file or the new one), checkpoints, and then reads every
// page back through the checksum VFS. Needs free space for a copy of the file, and time to
// write it. Errors: kNotFound (no such file), kFailedPrecondition (a process owns the
// journal: stop it first; or the file's pages reserve bytes for something else), kCorruption
// (a damaged file, or a page that fails its checksum after the rewrite), kUnavailable (I/O).
Result<EnableChecksumsReport> EnablePageChecksums(const std::string& path);

}  // namespace reckon::storage
