// The checksum VFS: the SQLite VFS every connection of SqliteDb::Open goes through. A shim over
// another VFS (SQLite's default, or a test's: storage/testing/power_loss_vfs.h) that keeps a
// checksum (storage/sqlite/page_checksum.h) in the last 8 bytes of every page of a database
// whose pages reserve them, and verifies it on every page read. Format and the choice of it:
// docs/JOURNAL_FORMAT.md, "Page checksums"; docs/ARCHITECTURE.md, decision 56.
//
// Which files: a database reserves the bytes when byte 20 of its header (the reserved bytes
// per page) is 8. The shim learns it from the header when the file opens, from any read or
// write of page 1 (in the main file or the -wal), or from SealFromNow; it never unlearns it.
// Any other database (8 reserved bytes or not) passes through untouched, so an older journal
// opens as it always did, unverified.
//
// What it does for a database with checksums:
// - Main file: seals every whole page written (in a copy: SQLite's buffers are never changed)
//   and verifies every whole page read. A write of part of a page is followed by a reseal of
//   that page as the file then holds it.
// - -wal: seals the page of every frame written, and then rewrites the frame's two SQLite
//   checksums, which SQLite computed over the page before it was sealed, continuing the
//   previous frame's (docs: storage/sqlite/wal_format.h); without that, SQLite's recovery
//   would end the log at the first sealed frame. To do that in the two writes SQLite makes per
//   frame, it holds a frame header back until the frame's page is written (any other call on
//   the file writes it first) and remembers the last frame's sums while its connection holds
//   the write lock. Verifies the page of every frame read as a page (SQLite's reads of pages
//   and of frames to checkpoint); not the frames SQLite's recovery reads, whose own checksums
//   decide where the log ends.
// - A page that fails verification fails the read with SQLITE_IOERR_DATA, which SqliteDb
//   reports as Errc::kCorruption naming the file and the page (ChecksumStateOf).
// - Memory-mapped reads are refused (SQLite then reads through xRead), so every read is
//   verified.
// Temporary files, rollback journals and statement journals pass through.
//
// Registration: one VFS per base VFS name, registered with SQLite on first use and never
// unregistered (SQLite's VFS list is process-wide; the shim holds no state besides the base's
// name and looks the base up by name on each call, so a test VFS may come and go under one
// name). The per-connection state lives in SQLite's file handles. Thread-safety: as SQLite's
// own; ChecksumVfsOver may be called from any thread.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>

#include "reckon/base/error.h"

namespace reckon::storage {

// The name of the checksum VFS over the VFS named `base` (empty: SQLite's default at the
// first call), registering it on first use. kUnavailable if no VFS is called `base`.
Result<std::string> ChecksumVfsOver(const std::string& base);

// A page that failed its checksum.
struct ChecksumFault {
  std::string file;            // the file it was read from: the database, or its -wal
  std::int64_t page = 0;       // its page number in the database (0: not known)
  std::int64_t wal_frame = 0;  // 0: read from the main file
  // "page 5 (in '/x/j.db')", or "page 5 (frame 12 of '/x/j.db-wal')".
  std::string Where() const;
  // Where() + " fails its checksum: ...", with what that means.
  std::string Describe() const;
};

struct ChecksumState {
  bool sealed = false;  // the database's pages carry checksums
  std::optional<ChecksumFault> last_fault;  // the last page this connection found damaged
};

// What the checksum VFS knows of the database `db` has open as "main"; nullopt when `db` did
// not open it through the checksum VFS.
std::optional<ChecksumState> ChecksumStateOf(sqlite3* db);

// From now on, seals every page of `page_size` bytes that `db` writes to its main database
// and -wal, as if the header already said so; with `verify` false, reads are not verified
// until `db` is closed. For a database being given checksums: a new one, right after its
// reserved bytes are set (no page of it is written yet), or an old one rewritten by VACUUM
// (whose reads still meet unsealed pages). Returns false when `db` is not on the checksum VFS.
bool SealFromNow(sqlite3* db, int page_size, bool verify);

}  // namespace reckon::storage
