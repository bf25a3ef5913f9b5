// JournalCheckReport: the health report of one journal, as `reckon admin check` prints it.
// Filled by each backend's check: CheckJournal (storage/sqlite/journal_check.h) for a SQLite
// file, CheckPostgresJournal (storage/postgres/postgres_check.h) for a PostgreSQL database.
// A plain value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace reckon::storage {

struct JournalCheckReport {
  std::string path;                  // the file, or postgresql://user@host:port/db
  std::int64_t schema_version = -1;  // -1 when unreadable
  std::int64_t runs = -1;            // -1 when a count failed (see problems)
  std::int64_t events = -1;
  std::int64_t operations = -1;
  std::string owner;                 // SQLite: the lock holder ("pid=... host=..."), else empty
  // Whether every page read is verified against a checksum: "on", "off", or "" (not known:
  // see problems). SQLite: the journal's page checksums; PostgreSQL: the cluster's data
  // checksums.
  std::string page_checksums;
  std::int64_t pages_verified = 0;       // SQLite: pages of the main file verified by the check
  std::int64_t wal_frames_verified = 0;  // SQLite: frames of the -wal, likewise
  std::vector<std::string> problems;     // empty: the journal is sound
  std::vector<std::string> warnings;     // not damage, but worth acting on

  bool ok() const { return problems.empty(); }
};

}  // namespace reckon::storage
