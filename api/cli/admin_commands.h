// `reckon admin ...`: operator commands that work on a journal file directly.
//
//   reckon admin check JOURNAL [--json]
//     Opens the journal read-only (no lock: it works while the journal's owner runs), runs the
//     full PRAGMA integrity_check, verifies the checksum of every page of the file and of its
//     -wal, and prints the schema version, the counts of runs, events and operations, the
//     current owner (if any), whether pages carry checksums and how many were verified, and
//     the verdict; each damaged page is named with its table or index when it can be. A
//     PostgreSQL journal (postgresql://...) reports whether the cluster keeps data checksums
//     and the journal's own invariants. Exit 0 when the journal is sound (warnings, such as
//     checksums off, go to stderr); 1 when it is damaged (the problems are listed; restore it
//     from a backup) or cannot be read; 2 for bad usage or a missing file. With --json one
//     JSON object goes to stdout: {"journal", "schema_version", "runs", "events",
//     "operations", "owner", "page_checksums", "pages_verified", "wal_frames_verified", "ok",
//     "problems", "warnings"} (counts are -1 when they could not be read).
//
//   reckon admin vacuum JOURNAL
//     Rewrites a SQLite journal compactly with VACUUM through Reckon's checksum VFS
//     (storage/sqlite/journal_rewrite.h), which also gives a journal written before page
//     checksums a checksum on every page; then verifies every page. Needs the journal's owner
//     stopped (it takes the ownership lock) and free space for a copy of the file. Refuses a
//     damaged journal. (The `sqlite3` shell's VACUUM would leave every page unsealed.)
//
//   reckon admin backup JOURNAL DEST
//     Copies a SQLite journal, -wal included, into the new single file DEST with SQLite's online
//     backup, beside its running owner, every page sealed and verified. (The `sqlite3` shell's
//     .backup rewrites the copy's header page without its checksum.)
//
//   reckon admin archive ...  (api/cli/archive_command.h): retention by hand.
#pragma once

#include <CLI/CLI.hpp>

#include "reckon/api/cli/command.h"

namespace reckon::cli {

// Registers the subcommands on `app`. `env` must outlive `app`.
void AddAdminCommands(CLI::App& app, CommandEnv& env);

}  // namespace reckon::cli
