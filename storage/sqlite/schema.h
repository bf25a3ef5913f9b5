// The journal's SQLite schema and its forward migrations.
//
// The schema version lives in SQLite's `PRAGMA user_version`. Each migration runs in its own
// transaction together with the version bump, so a crash leaves the file at the old or the new
// version, never between. Migrations only move forward; a file whose version is newer than the
// newest migration this release knows is refused (Errc::kFailedPrecondition) rather than
// misread. Table layouts are described in docs/JOURNAL_FORMAT.md.
#pragma once

#include <span>
#include <string_view>

#include "reckon/base/error.h"
#include "reckon/storage/sqlite/sqlite.h"

namespace reckon::storage {

struct Migration {
  int version;               // the version the file has after this migration
  std::string_view summary;  // one line, for logs
  std::string_view sql;      // DDL/DML; runs inside the migration's transaction
};

// The migrations of this release, in version order.
std::span<const Migration> JournalMigrations();

// Brings the file to the newest version in `migrations`. Returns the version it started at.
Result<int> MigrateForward(SqliteDb& db, std::span<const Migration> migrations);

}  // namespace reckon::storage
