// CheckJournal: the full health report of one journal file, for `reckon admin check`.
//
// It opens the file with a read-only SQLite connection and takes no lock, so it works beside a
// running owner (a WAL reader sees the owner's last commit) and never changes the file. It
// runs the full PRAGMA integrity_check (every page, and every index entry against its table:
// slower than the quick_check an owner runs at open), counts runs, events and operations, and
// verifies the checksum of every page of the file and of every frame of its -wal
// (storage/sqlite/page_scan.h), naming the table or index of each damaged page it can. A
// damaged file is a report with problems, not an error: even a file that SQLite cannot read
// at all ("file is not a database") yields a report. A journal written before page checksums
// is not damaged: its report says "off" and carries a warning.
//
// Thread-safe in the sense that it shares nothing: each call opens and closes its own
// connection.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/storage/journal_check_report.h"
#include "reckon/storage/sqlite/sqlite.h"

namespace reckon::storage {

// Checks the journal at `path`. At most `max_problems` integrity problems are listed.
// Errors: kNotFound when the file does not exist; kUnavailable when it cannot be opened
// (permissions, I/O).
Result<JournalCheckReport> CheckJournal(const std::string& path, int max_problems = 20);

// The checks SqliteJournal::Open makes (see SqliteJournalOptions::Mode):
// An owner's: PRAGMA quick_check, i.e. every page's structure, record format and freelist,
// without cross-checking indexes against tables. kCorruption naming the file, the first
// problems and what to do when damaged; other codes when the check itself could not run.
Result<void> QuickCheckAtOpen(SqliteDb& db);
// A read-only connection's, which cannot migrate: kFailedPrecondition unless the file has this
// release's schema version.
Result<void> RequireCurrentSchema(SqliteDb& db);

}  // namespace reckon::storage
