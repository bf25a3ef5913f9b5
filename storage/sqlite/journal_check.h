// CheckJournal: the full health report of one journal file, for `reckon admin check`.
//
// It opens the file with a read-only SQLite connection and takes no lock, so it works beside a
// running owner (a WAL reader sees the owner's last commit) and never changes the file. It
// runs the full PRAGMA integrity_check (every page, and every index entry against its table:
// slower than the quick_check an owner runs at open), then counts runs, events and operations.
// A damaged file is a report with problems, not an error: even a file that SQLite cannot read
// at all ("file is not a database") yields a report.
//
// Thread-safe in the sense that it shares nothing: each call opens and closes its own
// connection.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/storage/sqlite/sqlite.h"

namespace reckon::storage {

struct JournalCheckReport {
  std::string path;
  std::int64_t schema_version = -1;  // -1 when unreadable
  std::int64_t runs = -1;            // -1 when a count failed (see problems)
  std::int64_t events = -1;
  std::int64_t operations = -1;
  std::string owner;                  // the lock holder ("pid=... host=..."), empty if none
  std::vector<std::string> problems;  // empty: the file is sound

  bool ok() const { return problems.empty(); }
};

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
