// `reckon admin check` for a journal in PostgreSQL, and PostgreSQL's data checksums.
//
// PostgreSQL verifies its own pages when the cluster was created with data checksums
// (`initdb --data-checksums`, or `pg_checksums --enable` on a stopped cluster; `SHOW
// data_checksums`): a page that fails is an error with SQLSTATE XX001, which the journal
// reports as Errc::kCorruption. Reckon adds none of its own there (docs/ARCHITECTURE.md,
// decision 56); it says when they are off: PostgresJournal's integrity_warning at open, and
// this check.
//
// Stateless functions; each call opens its own connections.
#pragma once

#include <string>

#include "reckon/base/error.h"
#include "reckon/storage/journal_check_report.h"
#include "reckon/storage/postgres/pg.h"

namespace reckon::storage {

// Whether the cluster `conn` is connected to keeps data checksums.
Result<bool> DataChecksumsOn(PgConnection& conn);

// The warning for a cluster without data checksums, naming it and what to do.
std::string NoDataChecksumsWarning(const std::string& display);

// The report for the journal `conninfo` names: schema version, counts, data checksums (off is
// a warning), and PostgresJournal::IntegrityCheck's problems. Works beside running servers
// (reads only, takes no lock). kUnavailable when the server cannot be reached.
Result<JournalCheckReport> CheckPostgresJournal(const std::string& conninfo);

}  // namespace reckon::storage
