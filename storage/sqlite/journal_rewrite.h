// Rewriting a journal file through Reckon's checksum VFS (storage/sqlite/checksum_vfs.h):
// VACUUM and backup. The `sqlite3` shell can do both, but it writes pages without their
// checksums (a backup's header page, every page of a VACUUM), and Reckon then reads those
// pages as damaged; these functions write every page sealed. `reckon admin vacuum` and
// `reckon admin backup` call them.
//
// Stateless functions; each opens its own connections.
#pragma once

#include <cstdint>
#include <string>

#include "reckon/base/error.h"

namespace reckon::storage {

struct RewriteReport {
  bool page_checksums_before = false;  // the source's pages carried checksums
  std::int64_t pages = 0;              // pages of the written file, each verified after
  std::int64_t bytes_before = 0;
  std::int64_t bytes_after = 0;
};

// Rewrites the journal at `path` compactly with VACUUM, in one transaction (a crash leaves the
// old file or the new one), and gives a journal written before page checksums a checksum on
// every page. Takes the ownership lock, refuses a damaged file (PRAGMA quick_check, and every
// page read is verified), migrates it to this release's schema (so that a release without page
// checksums refuses it), then reads every page of the result back. Needs free space for a copy
// of the file and time to write it. Errors: kNotFound (no such file), kFailedPrecondition (a
// process owns the journal: stop it first; or the file's pages reserve bytes for something
// else), kCorruption (a damaged file, or a page of the result that fails its checksum),
// kUnavailable (I/O).
Result<RewriteReport> VacuumJournal(const std::string& path);

// Copies the journal at `source` into a new file `dest` with SQLite's online backup: a
// consistent snapshot, -wal included, taken beside a running owner (read-only, no lock); the
// copy is one file, with page checksums if the source has them, each page verified after.
// Errors: kNotFound (no source), kAlreadyExists (`dest` exists: choose another name),
// kCorruption (a damaged source page: the copy is removed), kUnavailable (I/O).
Result<RewriteReport> BackupJournal(const std::string& source, const std::string& dest);

}  // namespace reckon::storage
