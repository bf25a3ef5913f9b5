// The PostgreSQL journal's schema and its forward migrations (docs/JOURNAL_FORMAT.md,
// "PostgreSQL").
//
// The schema version lives in the database, in the table `reckon_schema` (one row per applied
// migration; the version is the largest). Each migration runs in its own transaction together
// with its row, under a transaction-scoped advisory lock, so two processes opening the same
// database at once migrate it once, and a crash leaves it at the old or the new version. The
// PostgreSQL versions are numbered on their own, from 1; version 1 holds the same tables and
// columns as the SQLite journal at its version 5. A database whose version is newer than this
// release knows is refused (kFailedPrecondition) rather than misread.
#pragma once

#include <span>
#include <string_view>

#include "reckon/base/error.h"
#include "reckon/storage/postgres/pg.h"

namespace reckon::storage {

struct PgMigration {
  int version;               // the version the database has after this migration
  std::string_view summary;  // one line, for logs
  std::string_view sql;      // DDL/DML; runs inside the migration's transaction
};

// The migrations of this release, in version order.
std::span<const PgMigration> PgJournalMigrations();

// The version recorded in the database; 0 when it holds no Reckon journal yet.
Result<int> PgSchemaVersion(PgConnection& conn);

// Brings the database to the newest version in `migrations`. Returns the version it started at.
Result<int> PgMigrateForward(PgConnection& conn, std::span<const PgMigration> migrations);

}  // namespace reckon::storage
