// Page checksums of a journal file (storage/sqlite/checksum_vfs.h; docs/JOURNAL_FORMAT.md,
// "Page checksums"): giving them to a new file, asking whether a file has them, and giving
// them to a file written by a release that did not have them.
//
// A journal created by this release carries them (SqliteJournal::Open calls
// ReserveChecksumsIfNew before anything is written). An older journal keeps its format: it
// opens, migrates and replays as before, unverified, and its owner warns at start
// (Journal::integrity_warning) until an operator runs `reckon admin vacuum`
// (storage/sqlite/journal_rewrite.h), which rewrites it once (ARCHITECTURE.md, decision 56,
// says why not at migration).
//
// Stateless functions; each works on the connection or the file it is given.
#pragma once

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

// The reserved bytes per page of the database `db` has open, as SQLite last read them from its
// header (-1 before it has read one).
int ReservedBytes(SqliteDb& db);

// Asks SQLite to lay out every page it writes from now on with 8 reserved bytes (it can: for a
// database with no page yet, or for the pages a VACUUM or a backup writes), and the checksum
// VFS to seal every page `db` writes (SealFromNow; with `verify` false, reads are not verified
// until `db` closes: for a VACUUM that still reads the old pages).
Result<void> ReserveChecksumBytes(SqliteDb& db, bool verify);

// The warning an owner logs for a journal whose pages carry no checksum, naming the file and
// the command that adds them.
std::string NoChecksumsWarning(const std::string& path);

}  // namespace reckon::storage
