// ScanPages: verifies the checksum of every page of a journal file and of every frame of its
// -wal that SQLite's recovery would keep, reading the files directly (not through SQLite's
// page cache), for `reckon admin check` (storage/sqlite/journal_check.h) and for the rewrites
// of storage/sqlite/journal_rewrite.h.
//
// Beside a running owner: the scan holds a read transaction on `db` while it reads, so no
// checkpoint can write a page of the main file that the -wal does not also hold; a page of
// the main file that fails is read again a few times before it counts (a checkpoint may have
// been writing it). The -wal is read frame by frame with SQLite's rules: the frames up to the
// last commit before the first frame whose salts or sums do not match; a frame is checked
// only once its sums match what was read, so a frame being written is never mistaken for
// damage.
//
// Not thread-safe with respect to `db` (it runs statements on it); the files are only read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/storage/sqlite/checksum_vfs.h"
#include "reckon/storage/sqlite/sqlite.h"

namespace reckon::storage {

struct PageScanReport {
  bool sealed = false;            // the pages carry checksums; false: nothing was verified
  std::int64_t main_pages = 0;    // pages of the main file verified
  std::int64_t wal_frames = 0;    // frames of the -wal verified
  std::vector<ChecksumFault> damaged;  // pages that failed, main file first
};

// Scans the journal `db` has open (read-only is enough). Errors: kUnavailable when a file
// cannot be read, or `db` cannot start a read transaction.
Result<PageScanReport> ScanPages(SqliteDb& db);

// A damaged page met through SQLite, and the table or index whose walk met it.
struct OwnedFault {
  ChecksumFault fault;
  std::string owner;
};

// Walks every table and index of `db` page by page through SQLite (the dbstat virtual table),
// as SQLite reads them now (a page from the -wal when the live wal-index says so, even past a
// frame that SQLite's recovery would stop at), and notes, for each walk a checksum failure
// stops, the page and the object. Pages that no walk reaches (free pages, copies the -wal
// supersedes, pages below an earlier damaged one) are absent. Empty when this SQLite has no
// dbstat. Reads every page of every b-tree: run it when something is known to be wrong.
std::vector<OwnedFault> WalkForDamage(SqliteDb& db);

}  // namespace reckon::storage
